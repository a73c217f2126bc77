package checkpoints

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/reference"
)

// handManifest is a corellm-chat manifest.json written by hand from the
// documented schema (okayuji doc §2.5) in the shape Swift's JSONEncoder
// gives it (prettyPrinted, sortedKeys: `"key" : value`, escaped slashes),
// for own layers of head dims 256 and 512 at position 3.
const handManifest = `{
  "bundleName" : "gemma-4-e2b-speculative-pal6",
  "createdAtISO8601" : "2026-01-02T03:04:05Z",
  "createdOnOS" : "Version 15.3 (Build 24D60)",
  "createdWithComputeUnits" : "all",
  "identity" : {
    "convertConfigSHA256" : "%s",
    "ctx" : 2048,
    "firstShared" : 2,
    "ghd" : 512,
    "hd" : 256,
    "hidden" : 1536,
    "numLayers" : 35,
    "ownLayerHeadDims" : [
      256,
      512
    ],
    "pleDim" : 256,
    "sidecarStage" : "int8",
    "sliding" : 512,
    "storeLayers" : {
      "full_attention" : 14,
      "sliding_attention" : 13
    }
  },
  "layers" : [
    {
      "headDim" : 256,
      "kBytes" : 1536,
      "kFile" : "k_0.bin",
      "layer" : 0,
      "rows" : 3,
      "type" : "sliding_attention",
      "vBytes" : 1536,
      "vFile" : "v_0.bin"
    },
    {
      "headDim" : 512,
      "kBytes" : 3072,
      "kFile" : "k_1.bin",
      "layer" : 1,
      "rows" : 3,
      "type" : "full_attention",
      "vBytes" : 3072,
      "vFile" : "v_1.bin"
    }
  ],
  "pendingNextToken" : 236881,
  "position" : 3,
  "processedTokens" : [
    2,
    105,
    2364
  ],
  "schemaVersion" : 1,
  "tokenCount" : 3,
  "tokenSeqSHA256" : "%s"
}`

// writeHandDir writes a corellm-chat KV directory by hand; k_i.bin holds
// bytes of value 0x10+i, v_i.bin 0x20+i.
func writeHandDir(t *testing.T, manifest string) (string, *CoreLLMIdentity) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kv")
	os.Mkdir(dir, 0o755)
	id := coreLLMIdentity(identity(bundle.R1, "e2b"), []int{256, 512})
	if manifest == "" {
		manifest = fmt.Sprintf(handManifest, id.ConvertConfigSHA256, TokenSHA256([]int{2, 105, 2364}))
	}
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644)
	for i, hd := range []int{256, 512} {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("k_%d.bin", i)), bytes.Repeat([]byte{byte(0x10 + i)}, 3*hd*2), 0o644)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("v_%d.bin", i)), bytes.Repeat([]byte{byte(0x20 + i)}, 3*hd*2), 0o644)
	}
	return dir, id
}

func TestReadCoreLLMHandWritten(t *testing.T) {
	dir, id := writeHandDir(t, "")
	c, err := ReadCoreLLM(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	ids, pending := c.Tokens()
	if c.Cache.Family != bundle.R1 || c.Cache.Position != 3 || !slices.Equal(ids, []int{2, 105, 2364}) || pending == nil || *pending != 236881 {
		t.Errorf("read %+v", c.Manifest)
	}
	if c.Manifest.BundleName != "gemma-4-e2b-speculative-pal6" || c.Manifest.CreatedWithComputeUnits != "all" {
		t.Errorf("record fields %+v", c.Manifest)
	}
	var got []string
	for _, b := range c.Cache.Buffers {
		got = append(got, fmt.Sprintf("%s%v%s:%x", b.Name, b.Shape, b.DType, b.Data[0]))
		if len(b.Data) != b.Shape[0]*b.Shape[1]*2 {
			t.Errorf("%s: %d bytes", b.Name, len(b.Data))
		}
	}
	if s := strings.Join(got, " "); s != "k_0[3 256]fp16:10 v_0[3 256]fp16:20 k_1[3 512]fp16:11 v_1[3 512]fp16:21" {
		t.Errorf("buffers %s", s)
	}
	if _, err := ReadCoreLLM(dir, nil); err != nil {
		t.Errorf("without an identity to check: %v", err)
	}
}

// corellm-chat's import checks, each refused naming the file and reason.
func TestReadCoreLLMRefusals(t *testing.T) {
	good := func() string {
		id := coreLLMIdentity(identity(bundle.R1, "e2b"), nil)
		return fmt.Sprintf(handManifest, id.ConvertConfigSHA256, TokenSHA256([]int{2, 105, 2364}))
	}
	for _, c := range []struct {
		what, file, reason string
		kind               error
		edit               func(m string) string
		damage             func(dir string)
		anyIdentity        bool // skip the identity check that would catch it first
	}{
		{what: "future schema", file: "manifest.json", reason: "schemaVersion 2 is newer", kind: ErrNewerVersion,
			edit: func(m string) string { return strings.Replace(m, `"schemaVersion" : 1`, `"schemaVersion" : 2`, 1) }},
		{what: "no schema", file: "manifest.json", reason: "schemaVersion 0", kind: ErrCorrupt,
			edit: func(m string) string { return strings.Replace(m, `"schemaVersion" : 1,`, ``, 1) }},
		{what: "layer count", file: "manifest.json", reason: "1 own-layer head dims for firstShared 2", kind: ErrCorrupt,
			edit: func(m string) string { return strings.Replace(m, "256,\n      512", "256", 1) }, anyIdentity: true},
		{what: "head dim", file: "manifest.json", reason: "headDim 256, the identity says 512", kind: ErrCorrupt,
			edit: func(m string) string { return strings.Replace(m, `"headDim" : 512`, `"headDim" : 256`, 1) }},
		{what: "rows", file: "manifest.json", reason: "layer 0: 2 rows at position 3", kind: ErrCorrupt,
			edit: func(m string) string { return strings.Replace(m, `"rows" : 3`, `"rows" : 2`, 1) }},
		{what: "kBytes", file: "manifest.json", reason: "recorded as 1500 bytes", kind: ErrCorrupt,
			edit: func(m string) string { return strings.Replace(m, `"kBytes" : 1536`, `"kBytes" : 1500`, 1) }},
		{what: "token hash", file: "manifest.json", reason: "tokenSeqSHA256", kind: ErrCorrupt,
			edit: func(m string) string { return strings.Replace(m, "2364", "2365", 1) }},
		{what: "path escape", file: "manifest.json", reason: "not allowed", kind: ErrCorrupt,
			edit: func(m string) string { return strings.Replace(m, `"k_0.bin"`, `"..\/k_0.bin"`, 1) }},
		{what: "truncated manifest", file: "manifest.json", reason: "truncated", kind: ErrCorrupt,
			edit: func(m string) string { return m[:len(m)/2] }},
		{what: "truncated file", file: "k_1.bin", reason: "truncated: 3000 bytes, want 3072", kind: ErrCorrupt,
			damage: func(dir string) { os.Truncate(filepath.Join(dir, "k_1.bin"), 3000) }},
		{what: "long file", file: "v_0.bin", reason: "1537 bytes, want 1536", kind: ErrCorrupt,
			damage: func(dir string) { os.WriteFile(filepath.Join(dir, "v_0.bin"), make([]byte, 1537), 0o644) }},
		{what: "missing file", file: "v_1.bin", reason: "missing", kind: ErrCorrupt,
			damage: func(dir string) { os.Remove(filepath.Join(dir, "v_1.bin")) }},
		{what: "missing manifest", file: "manifest.json", reason: "missing", kind: ErrCorrupt,
			damage: func(dir string) { os.Remove(filepath.Join(dir, "manifest.json")) }},
	} {
		t.Run(c.what, func(t *testing.T) {
			m := good()
			if c.edit != nil {
				m = c.edit(m)
			}
			dir, id := writeHandDir(t, m)
			if c.damage != nil {
				c.damage(dir)
			}
			if c.anyIdentity {
				id = nil
			}
			_, err := ReadCoreLLM(dir, id)
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, c.kind) || fe.File != c.file || !strings.Contains(err.Error(), c.reason) ||
				!strings.Contains(err.Error(), filepath.Join(dir, c.file)) {
				t.Errorf("got %v, want %v naming %s and %q", err, c.kind, c.file, c.reason)
			}
		})
	}
	dir, id := writeHandDir(t, "")
	other := *id
	other.SidecarStage, other.Ctx = "fp16", 4096
	_, err := ReadCoreLLM(dir, &other)
	var ie *IdentityError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "sidecarStage int8 ≠ fp16") || !strings.Contains(err.Error(), "ctx 2048 ≠ 4096") ||
		!strings.Contains(err.Error(), "gemma-4-e2b-speculative-pal6") {
		t.Errorf("identity: %v", err)
	}
}

// WriteCoreLLM lays a checkpoint out exactly as corellm-chat's --kv-save.
func TestWriteCoreLLM(t *testing.T) {
	cp := r1Checkpoint("x", e2bDims(5), 7, 3)
	dir := filepath.Join(t.TempDir(), "kv")
	if err := WriteCoreLLM(dir, cp); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var files []string
	for _, e := range ents {
		files = append(files, e.Name())
	}
	want := []string{"k_0.bin", "k_1.bin", "k_2.bin", "k_3.bin", "k_4.bin", "manifest.json", "v_0.bin", "v_1.bin", "v_2.bin", "v_3.bin", "v_4.bin"}
	if !slices.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	for i, hd := range e2bDims(5) {
		for _, kv := range []string{"k", "v"} {
			name := fmt.Sprintf("%s_%d.bin", kv, i)
			data := mustRead(t, filepath.Join(dir, name))
			if len(data) != 7*hd*2 || !bytes.Equal(data, cp.Cache.Buffers[2*i+map[string]int{"k": 0, "v": 1}[kv]].Data) {
				t.Errorf("%s: %d bytes, want %d raw fp16 rows", name, len(data), 7*hd*2)
			}
		}
	}
	raw := mustRead(t, filepath.Join(dir, "manifest.json"))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(v any) string {
		var k []string
		for key := range v.(map[string]any) {
			k = append(k, key)
		}
		slices.Sort(k)
		return strings.Join(k, " ")
	}
	if got := keys(m); got != "bundleName createdAtISO8601 createdOnOS createdWithComputeUnits identity layers pendingNextToken position processedTokens schemaVersion tokenCount tokenSeqSHA256" {
		t.Errorf("manifest keys: %s", got)
	}
	if got := keys(m["identity"]); got != "convertConfigSHA256 ctx firstShared ghd hd hidden numLayers ownLayerHeadDims pleDim sidecarStage sliding storeLayers" {
		t.Errorf("identity keys: %s", got)
	}
	layers := m["layers"].([]any)
	if got := keys(layers[0]); got != "headDim kBytes kFile layer rows type vBytes vFile" {
		t.Errorf("layer keys: %s", got)
	}
	l4 := layers[4].(map[string]any)
	if l4["type"] != "full_attention" || l4["headDim"] != 512.0 || l4["kBytes"] != 7*512*2.0 || l4["vFile"] != "v_4.bin" || l4["rows"] != 7.0 {
		t.Errorf("layer 4: %v", l4)
	}
	if m["schemaVersion"] != 1.0 || m["position"] != 7.0 || m["tokenCount"] != 7.0 || m["tokenSeqSHA256"] != TokenSHA256(cp.Tokens) ||
		m["pendingNextToken"] != 106.0 || m["createdAtISO8601"] != "2026-03-04T05:06:07Z" || m["createdWithComputeUnits"] != "all" {
		t.Errorf("manifest: %v", m)
	}
	// Keys appear sorted in the text, as Swift's .sortedKeys writes them,
	// and the file ends without a newline as JSONEncoder's output does.
	var order []string
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		order = append(order, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if !slices.IsSorted(order) || raw[len(raw)-1] != '}' {
		t.Errorf("key order %v", order)
	}

	back, err := ReadCoreLLM(dir, cp.Meta.CoreLLM)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range back.Cache.Buffers {
		if b.Name != cp.Cache.Buffers[i].Name || !bytes.Equal(b.Data, cp.Cache.Buffers[i].Data) {
			t.Errorf("buffer %d differs after the round trip", i)
		}
	}

	// Writing again replaces it (fewer layers: stale files must go); a
	// folder holding anything else is refused.
	if err := WriteCoreLLM(dir, r1Checkpoint("x", e2bDims(2), 3, 4)); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 5 {
		t.Errorf("after the rewrite: %d files, want 5", len(ents))
	}
	if ents, _ := os.ReadDir(filepath.Dir(dir)); len(ents) != 1 {
		t.Errorf("temp or aside folders left beside it: %d entries", len(ents))
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600)
	if err := WriteCoreLLM(dir, cp); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("replacing a folder with other files: %v", err)
	}
	if err := WriteCoreLLM(filepath.Join(t.TempDir(), "v2"), v2Checkpoint("v", 1, 1, 1, 1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("a v2 cache: %v", err)
	}
}

// An r1 checkpoint folder in the store is itself a corellm-chat directory,
// and one corellm-chat wrote becomes a checkpoint through the engine.
func TestStoreFolderIsCoreLLMDir(t *testing.T) {
	s := openStore(t)
	cp := r1Checkpoint("chat", e2bDims(3), 5, 1)
	if err := s.Save(cp); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCoreLLM(filepath.Join(s.Root(), "chat"), cp.Meta.CoreLLM)
	if err != nil {
		t.Fatal(err)
	}
	ids, pending := c.Tokens()
	if !slices.Equal(ids, cp.Tokens) || *pending != *cp.Pending || len(c.Cache.Buffers) != 6 || !bytes.Equal(c.Cache.Buffers[5].Data, cp.Cache.Buffers[5].Data) {
		t.Error("corellm-chat's view of the checkpoint differs")
	}

	dir, id := writeHandDir(t, "")
	h, err := ReadCoreLLM(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	ids, pending = h.Tokens()
	imported := &Checkpoint{Meta: Meta{Name: "from corellm", BundleName: h.Manifest.BundleName, Identity: identity(bundle.R1, "e2b"), CoreLLM: &h.Manifest.Identity},
		Tokens: ids, Pending: pending, Cache: h.Cache}
	if err := s.Save(imported); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("from corellm", imported.Meta.Identity); err != nil {
		t.Fatal(err)
	}
}

// CoreLLMIdentityOf reads a real (synthetic) r1 bundle.
func TestCoreLLMIdentityOf(t *testing.T) {
	dir, err := reference.Synthesize(reference.SynthOptions{Family: "r1", Preset: "tiny", Seed: 1, Out: filepath.Join(t.TempDir(), "b")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := CoreLLMIdentityOf(b)
	if err != nil {
		t.Fatal(err)
	}
	g := b.Geometry
	if id.ConvertConfigSHA256 != b.Identity.ConfigSHA256 || id.FirstShared != g.FirstShared || len(id.OwnLayerHeadDims) != g.FirstShared ||
		id.HD != g.HeadDim || id.GHD != g.GlobalHeadDim || id.Ctx != g.Context || id.StoreLayers["full_attention"] == 0 && id.StoreLayers["sliding_attention"] == 0 {
		t.Errorf("identity %+v for geometry %+v", id, g)
	}
	for i, hd := range id.OwnLayerHeadDims {
		if want := map[bool]int{true: g.GlobalHeadDim, false: g.HeadDim}[g.LayerTypes[i] == "full_attention"]; hd != want {
			t.Errorf("layer %d: head dim %d, want %d", i, hd, want)
		}
	}
	if _, err := CoreLLMIdentityOf(&bundle.Bundle{Family: bundle.V2}); err == nil {
		t.Error("a v2 bundle has no corellm-chat identity")
	}
}
