package checkpoints

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// identity is a synthetic bundle identity; seed makes different bundles.
func identity(fam bundle.Family, seed string) bundle.Identity {
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	cfg := "convert_config.json"
	if fam != bundle.R1 {
		cfg = "model_config.json"
	}
	return bundle.Identity{Family: fam, ConfigFile: cfg, ConfigSHA256: sum("config " + seed),
		Geometry: bundle.Geometry{Layers: 35, Hidden: 1536, HeadDim: 256, GlobalHeadDim: 512, Context: 2048, SlidingWindow: 512,
			LayerTypes: e2bLayerTypes()},
		ID: sum("id " + string(fam) + seed)}
}

// e2bLayerTypes is Gemma 4 E2B's pattern: every fifth layer is full.
func e2bLayerTypes() []string {
	t := make([]string, 35)
	for i := range t {
		t[i] = "sliding_attention"
		if (i+1)%5 == 0 {
			t[i] = "full_attention"
		}
	}
	return t
}

// coreLLMIdentity is the corellm-chat identity for identity(R1, seed) with
// own layers of the given head dims.
func coreLLMIdentity(id bundle.Identity, dims []int) *CoreLLMIdentity {
	return &CoreLLMIdentity{ConvertConfigSHA256: id.ConfigSHA256, NumLayers: 35, Hidden: 1536, PLEDim: 256,
		FirstShared: len(dims), Ctx: 2048, HD: 256, GHD: 512, Sliding: 512, SidecarStage: "int8",
		OwnLayerHeadDims: dims, StoreLayers: map[string]int{"sliding_attention": 13, "full_attention": 14}}
}

// e2bDims are E2B's own-layer head dims: sliding 256, full 512 at 4, 9, 14.
func e2bDims(n int) []int {
	d := make([]int, n)
	for i := range d {
		d[i] = 256
		if (i+1)%5 == 0 {
			d[i] = 512
		}
	}
	return d
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

func tokens(n, seed int) []int {
	t := make([]int, n)
	for i := range t {
		t[i] = (i*7919 + seed*131) % 262144
	}
	return t
}

// r1Checkpoint is an r1 checkpoint with own layers of head dims dims at pos.
func r1Checkpoint(name string, dims []int, pos int, seed uint64) *Checkpoint {
	id := identity(bundle.R1, "e2b")
	r := rand.New(rand.NewPCG(seed, 1))
	cp := &Checkpoint{
		Meta: Meta{Name: name, Created: time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC), OS: "darwin/arm64", ComputeUnits: "all",
			OrchardVersion: "v0.0.0-test", BundleName: "gemma-4-e2b-speculative-pal6", Identity: id, CoreLLM: coreLLMIdentity(id, dims)},
		Conversation: conversation(),
		Tokens:       tokens(pos, int(seed)),
		Cache:        Cache{Family: bundle.R1, Position: pos},
	}
	next := 106
	cp.Pending = &next
	for i, hd := range dims {
		for _, kv := range []string{"k", "v"} {
			cp.Cache.Buffers = append(cp.Cache.Buffers, Buffer{Name: fmt.Sprintf("%s_%d", kv, i), Shape: []int{pos, hd},
				DType: coreml.Float16, Data: randomBytes(r, pos*hd*2)})
		}
	}
	return cp
}

// v2Checkpoint is an MLState checkpoint: per layer k_cache_<l>/v_cache_<l>
// [kvHeads, pos, hd] in two chunks, plus an int32 and an fp32 buffer so
// every dtype is exercised.
func v2Checkpoint(name string, layers, kvHeads, pos int, seed uint64) *Checkpoint {
	id := identity(bundle.V2, "e4b")
	r := rand.New(rand.NewPCG(seed, 2))
	cp := &Checkpoint{
		Meta:         Meta{Name: name, Created: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), ComputeUnits: "cpuAndGPU", BundleName: "gemma-4-e4b-speculative", Identity: id},
		Conversation: conversation(),
		Tokens:       tokens(pos, int(seed)),
		Cache:        Cache{Family: bundle.V2, Position: pos},
	}
	for l := range layers {
		chunk := "chunk_0_12"
		if l >= layers/2 {
			chunk = "chunk_12_24"
		}
		hd := 256
		if (l+1)%6 == 0 {
			hd = 512
		}
		for _, kv := range []string{"k", "v"} {
			cp.Cache.Buffers = append(cp.Cache.Buffers, Buffer{Name: fmt.Sprintf("%s/%s_cache_%d", chunk, kv, l),
				Shape: []int{kvHeads, pos, hd}, DType: coreml.Float16, Data: randomBytes(r, kvHeads*pos*hd*2)})
		}
	}
	if layers > 0 {
		cp.Cache.Buffers = append(cp.Cache.Buffers,
			Buffer{Name: "chunk_0_12/ring_pos", Shape: []int{1}, DType: coreml.Int32, Data: []byte{7, 0, 0, 0}},
			Buffer{Name: "chunk_0_12/scale", Shape: []int{2}, DType: coreml.Float32, Data: randomBytes(r, 8)})
	}
	return cp
}

func conversation() Conversation {
	return Conversation{System: "You are terse.", Thinking: true,
		Messages: []Message{{Role: "user", Content: "hello <there> & \"you\"\n"}, {Role: "model", Content: "hi"}, {Role: "user", Content: "again"}, {Role: "model", Content: "ok 👍"}},
		Settings: json.RawMessage(`{"MaxTokens":256,"Speculation":"auto"}`)}
}

func openStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "checkpoints"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tree is every path under root with a hash of its contents and its mode,
// to show that an operation left the store unchanged.
func tree(t testing.TB, root string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		info, _ := d.Info()
		line := fmt.Sprintf("%s %v", rel, info.Mode())
		if d.Type().IsRegular() && d.Name() != lockFile {
			data, _ := os.ReadFile(p)
			h := sha256.Sum256(data)
			line += " " + hex.EncodeToString(h[:8])
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// sameCheckpoint compares what a checkpoint holds.
func sameCheckpoint(t testing.TB, got, want *Checkpoint) {
	t.Helper()
	g, w := got.Meta, want.Meta
	if g.Name != w.Name || !g.Created.Equal(w.Created) || g.OS != w.OS || g.ComputeUnits != w.ComputeUnits ||
		g.OrchardVersion != w.OrchardVersion || g.BundleName != w.BundleName || g.TokenSHA256 != w.TokenSHA256 ||
		g.CacheBytes != w.CacheBytes || g.Bytes != w.Bytes || g.SchemaVersion != w.SchemaVersion {
		t.Errorf("meta:\n got %+v\nwant %+v", g, w)
	}
	if js(g.Identity) != js(w.Identity) || js(g.CoreLLM) != js(w.CoreLLM) || js(g.Files) != js(w.Files) {
		t.Errorf("identity or files differ")
	}
	if js(got.Conversation) != js(want.Conversation) || js(got.Tokens) != js(want.Tokens) || js(got.Pending) != js(want.Pending) {
		t.Errorf("conversation or tokens differ")
	}
	if got.Cache.Family != want.Cache.Family || got.Cache.Position != want.Cache.Position || len(got.Cache.Buffers) != len(want.Cache.Buffers) {
		t.Fatalf("cache header differs: %s %d %d, want %s %d %d", got.Cache.Family, got.Cache.Position, len(got.Cache.Buffers),
			want.Cache.Family, want.Cache.Position, len(want.Cache.Buffers))
	}
	for i, b := range got.Cache.Buffers {
		o := want.Cache.Buffers[i]
		if b.Name != o.Name || fmt.Sprint(b.Shape) != fmt.Sprint(o.Shape) || b.DType != o.DType || !bytes.Equal(b.Data, o.Data) {
			t.Errorf("buffer %d: %s %v %s, want %s %v %s (data equal %v)", i, b.Name, b.Shape, b.DType, o.Name, o.Shape, o.DType, bytes.Equal(b.Data, o.Data))
		}
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// unchangedBy checks that what was done left the store's tree as before
// and old loadable as it was saved.
func unchangedBy(t testing.TB, what string, s *Store, before string, old *Checkpoint) {
	t.Helper()
	if after := tree(t, s.Root()); after != before {
		t.Errorf("%s changed the store:\n%s\n---\n%s", what, before, after)
	}
	got, err := s.Load(old.Meta.Name, old.Meta.Identity)
	if err != nil {
		t.Fatal(err)
	}
	sameCheckpoint(t, got, old)
}
