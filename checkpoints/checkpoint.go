// Package checkpoints is orchard's store of named conversations: the
// conversation, its committed tokens and the chain's cache state, one
// folder per checkpoint under a root folder. Writes are atomic (a crash
// leaves the old checkpoint or the new one, never a mix), and loads verify
// the schema version, every file's checksum, the token hash and the bundle
// identity before anything is returned. An r1 checkpoint folder is also a
// valid corellm-chat --kv-save directory.
//
// The package does not import engine (engine imports it); Cache and
// Buffer mirror chain.CacheState and chain.Buffer field for field so the
// engine converts with plain struct conversions.
package checkpoints

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// SchemaVersion is the orchard.json schema this package writes; it reads
// no other.
const SchemaVersion = 1

// Checkpoint is one saved conversation with the cache that continues it.
type Checkpoint struct {
	Meta         Meta
	Conversation Conversation
	Tokens       []int // committed token ids; len(Tokens) == Cache.Position
	Pending      *int  // the next token, predicted but not yet fed; nil if none
	Cache        Cache
}

// Meta describes a checkpoint. The caller sets the first group; Save and
// Load fill in the second.
type Meta struct {
	Name           string    // as given; on disk it is the (escaped) folder name
	Created        time.Time // zero: the time of Save
	OS             string    // "": GOOS/GOARCH
	ComputeUnits   string    // as coreml.ComputeUnits.String() spells them
	OrchardVersion string    // "": the module version from the build info
	BundleName     string
	Identity       bundle.Identity
	// CoreLLM is corellm-chat's identity of an r1 bundle (CoreLLMIdentityOf);
	// required for r1, where it goes into manifest.json. Nil otherwise.
	CoreLLM *CoreLLMIdentity

	SchemaVersion int
	TokenSHA256   string    // TokenSHA256(Tokens)
	CacheBytes    int64     // payload of the cache buffers
	Bytes         int64     // every file of the folder, orchard.json included
	Files         []FileSum // every file but orchard.json
}

// FileSum is one file of a checkpoint folder with its size and sha256.
type FileSum struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Conversation is what the user sees and the settings it ran with.
// Settings is the engine's settings value, opaque here.
type Conversation struct {
	System   string          `json:"system"`
	Thinking bool            `json:"thinking"`
	Messages []Message       `json:"messages"`
	Settings json.RawMessage `json:"settings,omitempty"`
}

// Message is one turn; its fields match engine.Message.
type Message struct {
	Role    string  `json:"role"` // "user" or "model"
	Content string  `json:"content"`
	Media   []Media `json:"media,omitempty"` // a user message's images and clips
	// Stopped says the user stopped this reply; Figures are the figures
	// of the turn that made it. Checkpoints written before orchard kept
	// them have neither.
	Stopped bool     `json:"stopped,omitempty"`
	Figures *Figures `json:"figures,omitempty"`
	// Calls are a model message's tool calls, Responses a "tool"
	// message's results (the engine's JSON of tools.Call/Response; older
	// checkpoints have none).
	Calls     json.RawMessage `json:"calls,omitempty"`
	Responses json.RawMessage `json:"responses,omitempty"`
}

// Media is a file attached to a message: its identity, not its contents
// (the cache holds what the model made of it), and a small thumbnail of
// an image for lists.
type Media struct {
	Kind      string  `json:"kind"` // "image" or "audio"
	Name      string  `json:"name"`
	Path      string  `json:"path,omitempty"`
	SHA256    string  `json:"sha256"`
	Bytes     int64   `json:"bytes"`
	Format    string  `json:"format,omitempty"`
	Width     int     `json:"width,omitempty"`
	Height    int     `json:"height,omitempty"`
	Seconds   float64 `json:"seconds,omitempty"`
	Spans     []int   `json:"spans"`               // soft tokens of each span in the prompt
	Thumbnail []byte  `json:"thumbnail,omitempty"` // PNG
}

// MediaCount is the attachments of the conversation and the first image's
// thumbnail, for lists.
func (c *Conversation) MediaCount() (n int, thumb []byte) {
	for _, m := range c.Messages {
		for _, a := range m.Media {
			n++
			if thumb == nil && len(a.Thumbnail) > 0 {
				thumb = a.Thumbnail
			}
		}
	}
	return n, thumb
}

// Turns counts the user messages.
func (c *Conversation) Turns() int {
	n := 0
	for _, m := range c.Messages {
		if m.Role == "user" {
			n++
		}
	}
	return n
}

// Cache is a chain's cache state; its fields match chain.CacheState.
// r1 buffers are k_<layer>/v_<layer> fp16 [rows, hd] (corellm-chat's
// files); MLState families name theirs <chunk>/<state>.
type Cache struct {
	Family   bundle.Family
	Position int
	Buffers  []Buffer
}

// Buffer is one cache tensor, C-contiguous little-endian; its fields match
// chain.Buffer, so engine converts with checkpoints.Buffer(b).
type Buffer struct {
	Name  string
	Shape []int
	DType coreml.DType
	Data  []byte
}

// Bytes is the total payload.
func (c *Cache) Bytes() int64 {
	var n int64
	for _, b := range c.Buffers {
		n += int64(len(b.Data))
	}
	return n
}

// TokenSHA256 hashes token ids as corellm-chat does: each id as an int64
// little-endian, concatenated, lowercase hex.
func TokenSHA256(ids []int) string {
	h := sha256.New()
	var b [8]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint64(b[:], uint64(int64(id)))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dtypes are the element types a buffer may have, by their on-disk names.
var dtypes = []coreml.DType{coreml.Float16, coreml.Float32, coreml.Int32}

func parseDType(s string) (coreml.DType, bool) {
	for _, d := range dtypes {
		if d.String() == s {
			return d, true
		}
	}
	return 0, false
}

// maxBufferBytes bounds a declared buffer so that corrupt shapes cannot
// overflow or ask for absurd allocations (1 TiB).
const maxBufferBytes = 1 << 40

// shapeBytes is the byte size of a tensor, or an error for negative
// dimensions or sizes past maxBufferBytes.
func shapeBytes(shape []int, d coreml.DType) (int64, error) {
	n := int64(d.Size())
	if n == 0 {
		return 0, fmt.Errorf("unknown dtype %s", d)
	}
	for _, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("negative dimension in shape %v", shape)
		}
		if s > 0 && n > maxBufferBytes/int64(s) {
			return 0, fmt.Errorf("shape %v is too large", shape)
		}
		n *= int64(s)
	}
	return n, nil
}

// check validates a checkpoint's internal consistency; withData also
// checks every buffer's payload length.
func (cp *Checkpoint) check(withData bool) error {
	c := &cp.Cache
	if _, ok := bundle.ParseFamily(string(c.Family)); !ok {
		return fmt.Errorf("cache family %q is not one orchard knows", c.Family)
	}
	if cp.Meta.Identity.ID == "" {
		return fmt.Errorf("no bundle identity")
	}
	if cp.Meta.Identity.Family != c.Family {
		return fmt.Errorf("cache of family %s for a %s bundle", c.Family, cp.Meta.Identity.Family)
	}
	if c.Position < 0 || c.Position != len(cp.Tokens) {
		return fmt.Errorf("cache position %d but %d committed tokens", c.Position, len(cp.Tokens))
	}
	if err := cp.checkFits(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, b := range c.Buffers {
		if b.Name == "" || seen[b.Name] {
			return fmt.Errorf("buffer name %q is empty or repeated", b.Name)
		}
		seen[b.Name] = true
		n, err := shapeBytes(b.Shape, b.DType)
		if err != nil {
			return fmt.Errorf("buffer %s: %w", b.Name, err)
		}
		if withData && int64(len(b.Data)) != n {
			return fmt.Errorf("buffer %s: %d bytes for %s %v (want %d)", b.Name, len(b.Data), b.DType, b.Shape, n)
		}
	}
	if c.Family == bundle.R1 {
		if cp.Meta.CoreLLM == nil {
			return fmt.Errorf("r1 checkpoint without its corellm-chat identity (CoreLLMIdentityOf)")
		}
		if cp.Meta.CoreLLM.ConvertConfigSHA256 != cp.Meta.Identity.ConfigSHA256 {
			return fmt.Errorf("corellm-chat identity is for config sha256 %s, the bundle's is %s",
				short(cp.Meta.CoreLLM.ConvertConfigSHA256), short(cp.Meta.Identity.ConfigSHA256))
		}
		return checkR1Buffers(c, cp.Meta.CoreLLM)
	}
	return nil
}

// checkR1Buffers checks that an r1 cache holds exactly k_<i>/v_<i> fp16
// [position, hd_i] for every own layer.
func checkR1Buffers(c *Cache, id *CoreLLMIdentity) error {
	if len(id.OwnLayerHeadDims) != id.FirstShared {
		return fmt.Errorf("corellm-chat identity: %d own-layer head dims for firstShared %d", len(id.OwnLayerHeadDims), id.FirstShared)
	}
	have := map[string]Buffer{}
	for _, b := range c.Buffers {
		have[b.Name] = b
	}
	for i, hd := range id.OwnLayerHeadDims {
		for _, kv := range []string{"k", "v"} {
			name := fmt.Sprintf("%s_%d", kv, i)
			b, ok := have[name]
			if !ok {
				return fmt.Errorf("r1 cache lacks %s", name)
			}
			if b.DType != coreml.Float16 || len(b.Shape) != 2 || b.Shape[0] != c.Position || b.Shape[1] != hd {
				return fmt.Errorf("r1 buffer %s is %s %v, want fp16 [%d %d]", name, b.DType, b.Shape, c.Position, hd)
			}
		}
	}
	if len(c.Buffers) != 2*id.FirstShared {
		return fmt.Errorf("r1 cache holds %d buffers, want %d (k and v of %d own layers)", len(c.Buffers), 2*id.FirstShared, id.FirstShared)
	}
	return nil
}

// fillDefaults completes the caller-set metadata at save time.
func (m *Meta) fillDefaults(now time.Time) {
	if m.Created.IsZero() {
		m.Created = now
	}
	m.Created = m.Created.UTC()
	if m.OS == "" {
		m.OS = runtime.GOOS + "/" + runtime.GOARCH
	}
	if m.OrchardVersion == "" {
		m.OrchardVersion = "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			m.OrchardVersion = bi.Main.Version
		}
	}
}

// short abbreviates a hex digest for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
