package checkpoints

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/orchard-llm/orchard/bundle"
)

// orchard.json is an envelope around a body:
//
//	{
//	  "format": "orchard-checkpoint",
//	  "schema_version": 1,
//	  "body_sha256": "<sha256 of the body's bytes as they appear in the file>",
//	  "body": { ...metadata, conversation, tokens, cache index, file sums... }
//	}
//
// The body hash makes orchard.json check itself, as the file sums in the
// body check every other file; the reader also rebuilds the envelope and
// requires it to be byte-identical, so no byte of the file goes unchecked.
const (
	metaFile    = "orchard.json"
	formatName  = "orchard-checkpoint"
	maxMetaSize = 64 << 20 // orchard.json holds text and token ids, never tensors
)

type envelope struct {
	Format        string          `json:"format"`
	SchemaVersion int             `json:"schema_version"`
	BodySHA256    string          `json:"body_sha256"`
	Body          json.RawMessage `json:"body"`
}

type body struct {
	Created        time.Time    `json:"created"`
	OS             string       `json:"os"`
	ComputeUnits   string       `json:"compute_units"`
	OrchardVersion string       `json:"orchard_version"`
	Bundle         bodyBundle   `json:"bundle"`
	Conversation   Conversation `json:"conversation"`
	Tokens         bodyTokens   `json:"tokens"`
	Cache          bodyCache    `json:"cache"`
	Files          []FileSum    `json:"files"`
}

type bodyBundle struct {
	Name     string           `json:"name"`
	Identity bundle.Identity  `json:"identity"`
	CoreLLM  *CoreLLMIdentity `json:"corellm_identity,omitempty"`
}

type bodyTokens struct {
	Count       int    `json:"count"`
	SHA256      string `json:"sha256"`
	PendingNext *int   `json:"pending_next,omitempty"`
	IDs         []int  `json:"ids"`
}

type bodyCache struct {
	Family   bundle.Family `json:"family"`
	Position int           `json:"position"`
	Bytes    int64         `json:"bytes"`
	Buffers  []bodyBuffer  `json:"buffers"`
}

type bodyBuffer struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Shape []int  `json:"shape"`
	DType string `json:"dtype"`
	Bytes int64  `json:"bytes"`
}

// record is orchard.json decoded: the checkpoint without tensor data, and
// the file of each buffer.
type record struct {
	cp       *Checkpoint
	bufFiles []string // parallel to cp.Cache.Buffers
	size     int64    // of orchard.json
	raw      []byte   // orchard.json as read (set by readMeta)
}

// encodeMeta renders orchard.json for a checkpoint whose Meta.Files and
// computed fields are set; bufFiles names each buffer's file.
func encodeMeta(cp *Checkpoint, bufFiles []string) ([]byte, error) {
	m := &cp.Meta
	b := body{
		Created: m.Created, OS: m.OS, ComputeUnits: m.ComputeUnits, OrchardVersion: m.OrchardVersion,
		Bundle:       bodyBundle{Name: m.BundleName, Identity: m.Identity, CoreLLM: m.CoreLLM},
		Conversation: cp.Conversation,
		Tokens:       bodyTokens{Count: len(cp.Tokens), SHA256: m.TokenSHA256, PendingNext: cp.Pending, IDs: cp.Tokens},
		Cache:        bodyCache{Family: cp.Cache.Family, Position: cp.Cache.Position, Bytes: m.CacheBytes},
		Files:        m.Files,
	}
	if b.Tokens.IDs == nil {
		b.Tokens.IDs = []int{}
	}
	if b.Conversation.Messages == nil {
		b.Conversation.Messages = []Message{}
	}
	if b.Files == nil {
		b.Files = []FileSum{}
	}
	b.Cache.Buffers = []bodyBuffer{}
	for i, buf := range cp.Cache.Buffers {
		n, _ := shapeBytes(buf.Shape, buf.DType)
		b.Cache.Buffers = append(b.Cache.Buffers, bodyBuffer{Name: buf.Name, File: bufFiles[i], Shape: buf.Shape, DType: buf.DType.String(), Bytes: n})
	}
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, err
	}
	return encodeEnvelope(SchemaVersion, indentJSON(bytes.TrimSpace(compact.Bytes()), "  ")), nil
}

func encodeEnvelope(version int, body []byte) []byte {
	sum := sha256.Sum256(body)
	var b bytes.Buffer
	b.WriteString("{\n  \"format\": \"" + formatName + "\",\n")
	b.WriteString("  \"schema_version\": " + strconv.Itoa(version) + ",\n")
	b.WriteString("  \"body_sha256\": \"" + hex.EncodeToString(sum[:]) + "\",\n")
	b.WriteString("  \"body\": ")
	b.Write(body)
	b.WriteString("\n}\n")
	return b.Bytes()
}

// decodeMeta parses and checks orchard.json. Errors are *FileError with
// File = orchard.json (the caller sets Name and Dir).
func decodeMeta(data []byte) (*record, error) {
	bad := func(format string, a ...any) error {
		return &FileError{File: metaFile, Reason: fmt.Sprintf(format, a...), Err: ErrCorrupt}
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, bad("%s", jsonDamage(data, err))
	}
	if env.Format != formatName {
		return nil, bad("format %q, want %q", env.Format, formatName)
	}
	if env.SchemaVersion > SchemaVersion {
		return nil, &FileError{File: metaFile, Err: ErrNewerVersion,
			Reason: fmt.Sprintf("schema version %d was written by a newer orchard; this one reads version %d", env.SchemaVersion, SchemaVersion)}
	}
	if env.SchemaVersion != SchemaVersion {
		return nil, bad("schema version %d, want %d", env.SchemaVersion, SchemaVersion)
	}
	if sum := sha256.Sum256(env.Body); hex.EncodeToString(sum[:]) != env.BodySHA256 {
		return nil, bad("checksum mismatch: the body does not hash to body_sha256 (damaged or edited)")
	}
	if want := encodeEnvelope(env.SchemaVersion, env.Body); !bytes.Equal(want, data) {
		if bytes.HasPrefix(want, data) {
			return nil, bad("truncated (%d bytes of %d)", len(data), len(want))
		}
		if bytes.HasPrefix(data, want) {
			return nil, bad("%s after the end of the file orchard wrote (appended to?)", plural(len(data)-len(want), "byte"))
		}
		return nil, bad("the envelope around the body is damaged or was edited")
	}
	var b body
	if err := json.Unmarshal(env.Body, &b); err != nil {
		return nil, bad("body: %v", err)
	}
	r, err := b.record()
	if err != nil {
		return nil, bad("%v", err)
	}
	r.size = int64(len(data))
	r.cp.Meta.Bytes = r.sizeOnDisk()
	return r, nil
}

// jsonDamage words why data is not one JSON value: empty, cut short,
// followed by more bytes, or damaged inside.
func jsonDamage(data []byte, err error) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Sprintf("empty (%d bytes)", len(data))
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) && err.Error() == "unexpected end of JSON input" {
		return fmt.Sprintf("truncated (%d bytes, the JSON stops short)", len(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var first json.RawMessage
	if dec.Decode(&first) == nil {
		extra := len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"))
		return fmt.Sprintf("%s after the end of the JSON (appended to?)", plural(extra, "byte"))
	}
	if errors.As(err, &syn) {
		return fmt.Sprintf("damaged, not valid JSON at byte %d: %v", syn.Offset, err)
	}
	return fmt.Sprintf("damaged, not valid JSON: %v", err)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// record converts a decoded body and checks it: file names safe and
// unique, every buffer's size matching its shape and its file's size,
// token count and hash, and the checkpoint's own consistency.
func (b *body) record() (*record, error) {
	cp := &Checkpoint{
		Meta: Meta{
			Created: b.Created, OS: b.OS, ComputeUnits: b.ComputeUnits, OrchardVersion: b.OrchardVersion,
			BundleName: b.Bundle.Name, Identity: b.Bundle.Identity, CoreLLM: b.Bundle.CoreLLM,
			SchemaVersion: SchemaVersion, TokenSHA256: b.Tokens.SHA256, CacheBytes: b.Cache.Bytes, Files: b.Files,
		},
		Conversation: b.Conversation,
		Tokens:       b.Tokens.IDs,
		Pending:      b.Tokens.PendingNext,
		Cache:        Cache{Family: b.Cache.Family, Position: b.Cache.Position},
	}
	if cp.Tokens == nil {
		cp.Tokens = []int{}
	}
	if b.Tokens.Count != len(b.Tokens.IDs) {
		return nil, fmt.Errorf("token count %d but %d token ids", b.Tokens.Count, len(b.Tokens.IDs))
	}
	if TokenSHA256(b.Tokens.IDs) != b.Tokens.SHA256 {
		return nil, fmt.Errorf("token hash does not match the token ids")
	}
	files := map[string]FileSum{}
	for _, f := range b.Files {
		if !validFileName(f.Name) || f.Name == metaFile {
			return nil, fmt.Errorf("file name %q is not allowed", f.Name)
		}
		if _, dup := files[f.Name]; dup {
			return nil, fmt.Errorf("file %s listed twice", f.Name)
		}
		if f.Bytes < 0 || !isHexSHA256(f.SHA256) {
			return nil, fmt.Errorf("file %s: bad size or sha256", f.Name)
		}
		files[f.Name] = f
	}
	r := &record{cp: cp}
	used := map[string]bool{}
	var total int64
	for _, bb := range b.Cache.Buffers {
		d, ok := parseDType(bb.DType)
		if !ok {
			return nil, fmt.Errorf("buffer %s: unknown dtype %q", bb.Name, bb.DType)
		}
		n, err := shapeBytes(bb.Shape, d)
		if err != nil {
			return nil, fmt.Errorf("buffer %s: %w", bb.Name, err)
		}
		f, ok := files[bb.File]
		if !ok || used[bb.File] {
			return nil, fmt.Errorf("buffer %s: file %q is not listed or is shared", bb.Name, bb.File)
		}
		used[bb.File] = true
		if n != bb.Bytes || n != f.Bytes {
			return nil, fmt.Errorf("buffer %s: %s %v is %d bytes, but %d are recorded and %s has %d", bb.Name, d, bb.Shape, n, bb.Bytes, f.Name, f.Bytes)
		}
		total += n
		cp.Cache.Buffers = append(cp.Cache.Buffers, Buffer{Name: bb.Name, Shape: bb.Shape, DType: d})
		r.bufFiles = append(r.bufFiles, bb.File)
	}
	if total != b.Cache.Bytes {
		return nil, fmt.Errorf("cache bytes %d, buffers sum to %d", b.Cache.Bytes, total)
	}
	for name := range files {
		if !used[name] && !(name == coreLLMManifest && cp.Cache.Family == bundle.R1) {
			return nil, fmt.Errorf("file %s belongs to no buffer", name)
		}
	}
	if cp.Cache.Family == bundle.R1 {
		if _, ok := files[coreLLMManifest]; !ok {
			return nil, fmt.Errorf("r1 checkpoint without %s", coreLLMManifest)
		}
	}
	if err := cp.check(false); err != nil {
		return nil, err
	}
	return r, nil
}

// sizeOnDisk is the payload of every listed file (orchard.json is added
// once its size is known).
func (r *record) sizeOnDisk() int64 {
	n := r.size
	for _, f := range r.cp.Meta.Files {
		n += f.Bytes
	}
	return n
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// validFileName accepts the plain base names the store writes.
func validFileName(s string) bool {
	if s == "" || len(s) > 200 || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// indentJSON pretty-prints compact JSON, one key per line, keeping arrays
// of plain values (token ids, shapes) on one line so a 2,048-token
// checkpoint stays readable.
func indentJSON(src []byte, prefix string) []byte {
	var out bytes.Buffer
	depth := 0
	newline := func() {
		out.WriteByte('\n')
		out.WriteString(prefix)
		for range depth {
			out.WriteString("  ")
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := skipString(src, i)
			out.Write(src[i:j])
			i = j - 1
		case '{', '[':
			if end, flat := flatValue(src, i); flat {
				writeFlat(&out, src[i:end])
				i = end - 1
				continue
			}
			out.WriteByte(c)
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out.WriteByte(c)
		case ',':
			out.WriteByte(c)
			newline()
		case ':':
			out.WriteString(": ")
		default:
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// writeFlat copies a flat array with a space after each comma.
func writeFlat(out *bytes.Buffer, v []byte) {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			j := skipString(v, i)
			out.Write(v[i:j])
			i = j - 1
		case ',':
			out.WriteString(", ")
		default:
			out.WriteByte(v[i])
		}
	}
}

// skipString returns the index just past the string starting at src[i].
func skipString(src []byte, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(src)
}

// flatValue reports whether the array or object at src[i] is empty or an
// array holding no arrays or objects, and where it ends.
func flatValue(src []byte, i int) (int, bool) {
	open := src[i]
	for j := i + 1; j < len(src); j++ {
		switch c := src[j]; c {
		case '"':
			if open == '{' {
				return 0, false
			}
			j = skipString(src, j) - 1
		case '{', '[':
			return 0, false
		case '}', ']':
			return j + 1, true
		}
	}
	return 0, false
}
