package checkpoints

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// corellm-chat's KV checkpoint directory (okayuji doc §2.5): manifest.json
// (pretty-printed, sorted keys) and, per own layer i, k_<i>.bin and
// v_<i>.bin holding the committed rows as raw fp16 [rows, hd_i]. The
// struct fields below are declared in key order, so encoding/json writes
// the keys sorted as Swift's JSONEncoder does.
const (
	coreLLMManifest = "manifest.json"
	// CoreLLMSchemaVersion is the manifest schemaVersion corellm-chat
	// writes and accepts.
	CoreLLMSchemaVersion = 1
)

// CoreLLMManifest is corellm-chat's manifest.json, field for field.
type CoreLLMManifest struct {
	BundleName              string          `json:"bundleName"` // record-only
	CreatedAtISO8601        string          `json:"createdAtISO8601"`
	CreatedOnOS             string          `json:"createdOnOS"`
	CreatedWithComputeUnits string          `json:"createdWithComputeUnits"` // cpuOnly, cpuAndGPU, cpuAndNeuralEngine, all
	Identity                CoreLLMIdentity `json:"identity"`
	Layers                  []CoreLLMLayer  `json:"layers"`
	PendingNextToken        *int            `json:"pendingNextToken,omitempty"` // first not-yet-fed token
	Position                int             `json:"position"`
	ProcessedTokens         []int           `json:"processedTokens"`
	SchemaVersion           int             `json:"schemaVersion"`
	TokenCount              int             `json:"tokenCount"`
	TokenSeqSHA256          string          `json:"tokenSeqSHA256"` // TokenSHA256(ProcessedTokens)
}

// CoreLLMIdentity binds a corellm-chat checkpoint to an r1 bundle; import
// requires it to be equal.
type CoreLLMIdentity struct {
	ConvertConfigSHA256 string         `json:"convertConfigSHA256"` // sha256 of convert_config.json's bytes
	Ctx                 int            `json:"ctx"`
	FirstShared         int            `json:"firstShared"`
	GHD                 int            `json:"ghd"`
	HD                  int            `json:"hd"`
	Hidden              int            `json:"hidden"`
	NumLayers           int            `json:"numLayers"`
	OwnLayerHeadDims    []int          `json:"ownLayerHeadDims"`
	PLEDim              int            `json:"pleDim"`
	SidecarStage        string         `json:"sidecarStage"`
	Sliding             int            `json:"sliding"`
	StoreLayers         map[string]int `json:"storeLayers"`
}

// CoreLLMLayer is one own layer's pair of files.
type CoreLLMLayer struct {
	HeadDim int    `json:"headDim"`
	KBytes  int64  `json:"kBytes"`
	KFile   string `json:"kFile"`
	Layer   int    `json:"layer"`
	Rows    int    `json:"rows"`
	Type    string `json:"type"` // sliding_attention or full_attention
	VBytes  int64  `json:"vBytes"`
	VFile   string `json:"vFile"`
}

// CoreLLM is a corellm-chat KV directory read into memory.
type CoreLLM struct {
	Manifest CoreLLMManifest
	Cache    Cache // family r1: k_<i>, v_<i> fp16 [position, hd_i]
}

// CoreLLMIdentityOf computes corellm-chat's identity of an r1 bundle.
func CoreLLMIdentityOf(b *bundle.Bundle) (CoreLLMIdentity, error) {
	if b.Family != bundle.R1 || b.R1 == nil {
		return CoreLLMIdentity{}, fmt.Errorf("bundle %s is %s; only r1 bundles have a corellm-chat KV identity", b.Dir, b.Family)
	}
	c, h := b.R1, b.R1.HostIO
	manifestStage := ""
	if b.Manifest != nil {
		manifestStage = b.Manifest.SidecarStage
	}
	stage, _ := c.Stage(manifestStage)
	id := CoreLLMIdentity{
		ConvertConfigSHA256: b.Identity.ConfigSHA256, NumLayers: c.NumLayers, Hidden: c.Hidden, PLEDim: c.PLEDim,
		FirstShared: c.FirstShared, Ctx: h.CTX, HD: h.HD, GHD: h.GHD, Sliding: h.SLIDING, SidecarStage: stage,
		StoreLayers: maps.Clone(c.StoreLayers), OwnLayerHeadDims: []int{},
	}
	for i := range c.FirstShared {
		hd := h.HD
		if i < len(h.LayerTypes) && h.LayerTypes[i] == "full_attention" {
			hd = h.GHD
		}
		id.OwnLayerHeadDims = append(id.OwnLayerHeadDims, hd)
	}
	return id, nil
}

// diff lists the fields in which two identities differ.
func (id *CoreLLMIdentity) diff(want *CoreLLMIdentity) []string {
	var d []string
	add := func(field string, have, want any) {
		if fmt.Sprint(have) != fmt.Sprint(want) {
			d = append(d, fmt.Sprintf("%s %v ≠ %v", field, have, want))
		}
	}
	if id.ConvertConfigSHA256 != want.ConvertConfigSHA256 {
		d = append(d, fmt.Sprintf("convertConfigSHA256 %s ≠ %s", short(id.ConvertConfigSHA256), short(want.ConvertConfigSHA256)))
	}
	add("ctx", id.Ctx, want.Ctx)
	add("firstShared", id.FirstShared, want.FirstShared)
	add("ghd", id.GHD, want.GHD)
	add("hd", id.HD, want.HD)
	add("hidden", id.Hidden, want.Hidden)
	add("numLayers", id.NumLayers, want.NumLayers)
	add("ownLayerHeadDims", id.OwnLayerHeadDims, want.OwnLayerHeadDims)
	add("pleDim", id.PLEDim, want.PLEDim)
	add("sidecarStage", id.SidecarStage, want.SidecarStage)
	add("sliding", id.Sliding, want.Sliding)
	add("storeLayers", id.StoreLayers, want.StoreLayers) // fmt prints maps sorted
	return d
}

// coreLLMUnits spells compute units as corellm-chat records them; unset
// units are Core ML's default, all.
func coreLLMUnits(s string) string {
	u, err := coreml.ParseComputeUnits(s)
	if err != nil || u == coreml.DefaultUnits {
		return coreml.All.String()
	}
	return u.String()
}

// coreLLMManifestOf builds the manifest of an r1 checkpoint whose Meta
// defaults are filled; layer i's files are k_<i>.bin and v_<i>.bin.
func coreLLMManifestOf(cp *Checkpoint) CoreLLMManifest {
	id := cp.Meta.CoreLLM
	m := CoreLLMManifest{
		SchemaVersion: CoreLLMSchemaVersion, Identity: *id, Position: cp.Cache.Position,
		PendingNextToken: cp.Pending, TokenCount: len(cp.Tokens), TokenSeqSHA256: TokenSHA256(cp.Tokens),
		ProcessedTokens: cp.Tokens, BundleName: cp.Meta.BundleName, CreatedOnOS: cp.Meta.OS,
		CreatedWithComputeUnits: coreLLMUnits(cp.Meta.ComputeUnits),
		CreatedAtISO8601:        cp.Meta.Created.UTC().Format(time.RFC3339), // 2006-01-02T15:04:05Z, as ISO8601DateFormatter
		Layers:                  []CoreLLMLayer{},
	}
	if m.ProcessedTokens == nil {
		m.ProcessedTokens = []int{}
	}
	if m.Identity.StoreLayers == nil {
		m.Identity.StoreLayers = map[string]int{}
	}
	types := cp.Meta.Identity.Geometry.LayerTypes
	for i, hd := range id.OwnLayerHeadDims {
		typ := "sliding_attention"
		if i < len(types) && types[i] != "" {
			typ = types[i]
		} else if hd == id.GHD && id.GHD != id.HD {
			typ = "full_attention"
		}
		n := int64(cp.Cache.Position) * int64(hd) * 2
		m.Layers = append(m.Layers, CoreLLMLayer{Layer: i, Type: typ, HeadDim: hd, Rows: cp.Cache.Position,
			KFile: fmt.Sprintf("k_%d.bin", i), VFile: fmt.Sprintf("v_%d.bin", i), KBytes: n, VBytes: n})
	}
	return m
}

// encode renders the manifest as corellm-chat does: pretty-printed with
// two spaces, sorted keys, no trailing newline.
func (m *CoreLLMManifest) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// parseCoreLLMManifest decodes manifest.json; the error is the reason.
func parseCoreLLMManifest(data []byte) (*CoreLLMManifest, error) {
	var m CoreLLMManifest
	if err := json.Unmarshal(data, &m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || len(bytes.TrimSpace(data)) == 0 {
			return nil, errors.New(jsonDamage(data, err))
		}
		return nil, fmt.Errorf("not a corellm-chat manifest: %v", err)
	}
	return &m, nil
}

// checkVersion is corellm-chat's first import check.
func (m *CoreLLMManifest) checkVersion() *FileError {
	switch {
	case m.SchemaVersion > CoreLLMSchemaVersion:
		return &FileError{File: coreLLMManifest, Err: ErrNewerVersion,
			Reason: fmt.Sprintf("schemaVersion %d is newer than the %d orchard reads", m.SchemaVersion, CoreLLMSchemaVersion)}
	case m.SchemaVersion != CoreLLMSchemaVersion:
		return &FileError{File: coreLLMManifest, Err: ErrCorrupt,
			Reason: fmt.Sprintf("schemaVersion %d, want %d", m.SchemaVersion, CoreLLMSchemaVersion)}
	}
	return nil
}

// checkLayout runs corellm-chat's remaining import checks (layer count,
// per layer head dim, rows = position, file size = rows·hd·2 = kBytes) and
// orchard's own (token count and hash, safe file names). size returns a
// file's size.
func (m *CoreLLMManifest) checkLayout(size func(file string) (int64, error)) *FileError {
	bad := func(format string, a ...any) *FileError {
		return &FileError{File: coreLLMManifest, Reason: fmt.Sprintf(format, a...), Err: ErrCorrupt}
	}
	id := &m.Identity
	if id.FirstShared < 0 || len(id.OwnLayerHeadDims) != id.FirstShared {
		return bad("identity lists %d own-layer head dims for firstShared %d", len(id.OwnLayerHeadDims), id.FirstShared)
	}
	if m.Position < 0 || id.Ctx > 0 && m.Position > id.Ctx {
		return bad("position %d outside the context of %d", m.Position, id.Ctx)
	}
	if m.TokenCount != len(m.ProcessedTokens) {
		return bad("tokenCount %d but %d processedTokens", m.TokenCount, len(m.ProcessedTokens))
	}
	if TokenSHA256(m.ProcessedTokens) != m.TokenSeqSHA256 {
		return bad("tokenSeqSHA256 does not match processedTokens")
	}
	if len(m.Layers) != id.FirstShared {
		return bad("%d layers, want firstShared = %d", len(m.Layers), id.FirstShared)
	}
	names := map[string]bool{coreLLMManifest: true}
	for i, l := range m.Layers {
		if l.Layer != i {
			return bad("layers[%d] is layer %d", i, l.Layer)
		}
		if hd := id.OwnLayerHeadDims[i]; l.HeadDim != hd {
			return bad("layer %d: headDim %d, the identity says %d", i, l.HeadDim, hd)
		}
		if l.Rows != m.Position {
			return bad("layer %d: %d rows at position %d", i, l.Rows, m.Position)
		}
		want, err := shapeBytes([]int{l.Rows, l.HeadDim}, coreml.Float16)
		if err != nil {
			return bad("layer %d: %v", i, err)
		}
		for _, f := range []struct {
			name  string
			bytes int64
		}{{l.KFile, l.KBytes}, {l.VFile, l.VBytes}} {
			if !validFileName(f.name) || names[f.name] {
				return bad("layer %d: file name %q is not allowed or repeated", i, f.name)
			}
			names[f.name] = true
			if f.bytes != want {
				return bad("layer %d: %s is recorded as %d bytes, rows·hd·2 = %d", i, f.name, f.bytes, want)
			}
			n, err := size(f.name)
			if err != nil {
				return &FileError{File: f.name, Reason: err.Error(), Err: ErrCorrupt}
			}
			if n != want {
				return &FileError{File: f.name, Reason: sizeReason(n, want), Err: ErrCorrupt}
			}
		}
	}
	return nil
}

func sizeReason(have, want int64) string {
	if have < want {
		return fmt.Sprintf("truncated: %d bytes, want %d", have, want)
	}
	return fmt.Sprintf("%d bytes, want %d", have, want)
}
