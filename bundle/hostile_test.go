package bundle_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/bundle"
)

func hostio(m map[string]any) map[string]any { return m["hostio"].(map[string]any) }

// Every geometry number is checked for range and against the others and
// the chunks before anything is sized from it; inspect lists every
// problem. The probe's cases: hostio.CTX of 1e9 (out of memory), 2^62
// (a panic) and 1e7 (1.86 GB allocated before an error) on r1 and v2.
func TestGeometryOutOfRange(t *testing.T) {
	const r1cfg, v2cfg, s3cfg = "convert_config.json", "convert_config_v2int4_int8.json", "model_config.json"
	cases := []struct {
		family, file, what string
		edit               func(m map[string]any)
		want               []string
	}{
		{"r1", r1cfg, "CTX 1e9", func(m map[string]any) { hostio(m)["CTX"] = 1e9 }, []string{
			"hostio.CTX = 1000000000 is more than the 262144 orchard accepts",
			"chunk_0_5_pal6: 11 tensors (\"k_0_in\", \"k_1_in\", \"k_2_in\", \"k_3_in\", …) are 128 wide, but convert_config.json hostio.CTX is 1000000000"}},
		{"r1", r1cfg, "CTX 2^62", func(m map[string]any) { hostio(m)["CTX"] = 1 << 62 }, []string{"hostio.CTX = 4611686018427387904 is more than"}},
		{"r1", r1cfg, "CTX 1e7", func(m map[string]any) { hostio(m)["CTX"] = 1e7 }, []string{"hostio.CTX = 10000000 is more than"}},
		{"r1", r1cfg, "CTX within limits but not the graphs'", func(m map[string]any) { hostio(m)["CTX"] = 4096 }, []string{
			"chunk_0_5_pal6: 11 tensors (\"k_0_in\", \"k_1_in\", \"k_2_in\", \"k_3_in\", …) are 128 wide, but convert_config.json hostio.CTX is 4096"}},
		{"r1", r1cfg, "negative head dim", func(m map[string]any) { hostio(m)["HD"] = -8 }, []string{"hostio.HD = -8 is negative"}},
		{"r1", r1cfg, "no PLE", func(m map[string]any) { m["ple_dim"] = 0 }, []string{"ple_dim = 0; r1 chunks take per-layer embeddings"}},
		{"r1", r1cfg, "prefill wider than the context", func(m map[string]any) {
			m["corellm"].(map[string]any)["prefill"].(map[string]any)["N"] = []int{32, 4096}
		}, []string{"corellm.prefill.N[1] = 4096 is not a width of 1…hostio.CTX (128)"}},
		{"r1", r1cfg, "store layer out of range", func(m map[string]any) {
			m["store_layers"] = map[string]int{"sliding_attention": 40, "full_attention": 9}
		}, []string{"store_layers.sliding_attention = 40 is not an own layer"}},
		{"r1", r1cfg, "unknown layer type", func(m map[string]any) {
			hostio(m)["layer_types"].([]any)[3] = "\x1b]0;x\x07"
		}, []string{`hostio.layer_types[3] = "\x1b]0;x\a" is neither`}},
		{"r1", r1cfg, "layers past the limit", func(m map[string]any) { m["num_layers"] = 100000 }, []string{"num_layers = 100000 is more than the 256"}},
		{"r1", r1cfg, "EOS outside the vocabulary", func(m map[string]any) { m["eos_token_ids"] = []int{1, 9999} }, []string{"EOS id 9999 is outside the vocabulary (0…511)"}},
		{"v2", v2cfg, "CTX 1e9", func(m map[string]any) { m["CTX"] = 1e9 }, []string{
			"CTX (else N_MAX, else SLIDING) = 1000000000 is more than the 262144", "are 128 wide, but " + v2cfg + " CTX is 1000000000"}},
		{"v2", v2cfg, "CTX 2^62", func(m map[string]any) { m["CTX"] = 1 << 62 }, []string{"= 4611686018427387904 is more than"}},
		{"v2", v2cfg, "CTX 0", func(m map[string]any) { m["CTX"] = 0 }, []string{"CTX (or N_MAX) = 0; the context must be at least 1"}},
		{"v2", v2cfg, "heads past the limit", func(m map[string]any) { m["NKV"] = 100000 }, []string{"NKV = 100000 is more than the 512"}},
		{"v2", v2cfg, "S range upside down", func(m map[string]any) {
			m["S_range"] = map[string]int{"lower": 9, "upper": 4, "default": 1}
		}, []string{"S_range {lower 9, default 1, upper 4} is not an ordered range"}},
		{"stateful3", s3cfg, "vocab 0", func(m map[string]any) { m["vocab_size"] = 0 }, []string{"vocab_size = 0; it must be at least 1"}},
		{"stateful3", s3cfg, "vocab 2^40", func(m map[string]any) { m["vocab_size"] = 1 << 40 }, []string{"vocab_size = 1099511627776 is more than the 4194304"}},
		{"stateful3", s3cfg, "layers negative", func(m map[string]any) { m["num_layers"] = -3 }, []string{"num_layers = -3 is negative"}},
		{"stateful3", s3cfg, "shared layers past the model", func(m map[string]any) { m["num_kv_shared_layers"] = 99 }, []string{"num_kv_shared_layers = 99"}},
	}
	for _, c := range cases {
		t.Run(c.family+"/"+c.what, func(t *testing.T) {
			_, dir := synth(t, c.family)
			editJSON(t, filepath.Join(dir, c.file), c.edit)
			msg := problems(t, dir)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("problems lack %q:\n%s", w, msg)
				}
			}
			if strings.ContainsAny(msg, "\x1b\x07") {
				t.Errorf("problems carry control characters: %q", msg)
			}
		})
	}
}

// Embedding shapes without rows are problems, not "ok".
func TestSidecarShapesWithoutRows(t *testing.T) {
	for _, shape := range [][]int{{0, 32}, {-512, 32}, {1 << 40, 32}} {
		_, dir := synth(t, "r1")
		editJSON(t, filepath.Join(dir, "convert_config.json"), func(m map[string]any) {
			m["corellm"].(map[string]any)["sidecars"].(map[string]any)["int8"].(map[string]any)["embed"].(map[string]any)["shape"] = shape
		})
		if msg := problems(t, dir); !strings.Contains(msg, "embed_int8.bin (embedding): shape") || !strings.Contains(msg, "the row count must be 1…4194304") {
			t.Errorf("shape %v: problems %q", shape, msg)
		}
	}
}

// A truncated, empty or garbage tokenizer.json, or one whose ids run past
// the embedding, is a problem inspect lists, beside every other one.
func TestTokenizerProblemsListed(t *testing.T) {
	for _, c := range []struct {
		what string
		data func(good []byte) []byte
		want string
	}{
		{"empty", func([]byte) []byte { return nil }, "tokenizer.json: parse tokenizer.json: unexpected end of JSON"},
		{"truncated", func(g []byte) []byte { return g[:len(g)/2] }, "unexpected end of JSON"},
		{"garbage", func([]byte) []byte { return []byte("\x89PNG\r\n\x1a\n") }, `tokenizer.json: parse tokenizer.json: offset 0: expected '{'`},
		{"id past the vocabulary", func(g []byte) []byte {
			return []byte(strings.Replace(string(g), `"vocab":{`, `"vocab":{"\u001b[2J":2000000000,`, 1))
		}, `token "\x1b[2J" has id 2000000000, beyond the vocabulary`},
	} {
		t.Run(c.what, func(t *testing.T) {
			_, dir := synth(t, "r1")
			p := filepath.Join(dir, "tokenizer.json")
			good, _ := os.ReadFile(p)
			os.WriteFile(p, c.data(good), 0o600)
			os.Truncate(filepath.Join(dir, "embed_scale_f32.bin"), 3) // a second problem, listed too
			msg := problems(t, dir)
			if !strings.Contains(msg, c.want) || !strings.Contains(msg, "embed_scale_f32.bin") {
				t.Errorf("problems lack %q and the scale file:\n%s", c.want, msg)
			}
		})
	}
	// A tokenizer larger than the embedding names its last token.
	_, dir := synth(t, "r1")
	editJSON(t, filepath.Join(dir, "convert_config.json"), func(m map[string]any) {
		sc := m["corellm"].(map[string]any)["sidecars"].(map[string]any)["int8"].(map[string]any)
		sc["embed"].(map[string]any)["shape"] = []int{200, 32}
		sc["ple"].(map[string]any)["shape"] = []int{200, 120}
	})
	if msg := problems(t, dir); !strings.Contains(msg, "has id 511, but the embedding has 200 rows (ids 0…199)") {
		t.Errorf("problems %q", msg)
	}
}

// A chunk's metadata.json is a hint: absurd shapes in it are noted and
// ignored, never a crash or a refusal.
func TestChunkMetadataProblems(t *testing.T) {
	_, dir := synth(t, "v2")
	meta := filepath.Join(dir, "chunk_0_3.mlmodelc", "metadata.json")
	os.WriteFile(meta, []byte(`[{"inputSchema":[{"name":"hidden_in","shape":"[1, -32]"},{"name":"x","shape":"[4194305]"}]}]`), 0o600)
	os.WriteFile(filepath.Join(dir, "chunk_3_6.mlmodelc", "metadata.json"), []byte(`{"inputSchema": 7`), 0o600)
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(b.Notes, "\n")
	for _, w := range []string{`chunk_0_3.mlmodelc/metadata.json: input "hidden_in": shape [1 -32] has a negative dimension; ignored`,
		`input "x": shape [4194305] has a dimension over 4194304`} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
}

// A FIFO or a huge file in a config's place is refused at once.
func TestSpecialConfigFiles(t *testing.T) {
	_, dir := synth(t, "r1")
	p := filepath.Join(dir, "convert_config.json")
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	_, dir2 := synth(t, "v2")
	for _, f := range []string{"tokenizer.json", filepath.Join("chunk_0_3.mlmodelc", "metadata.json"), "manifest.json"} {
		os.Remove(filepath.Join(dir2, f))
		syscall.Mkfifo(filepath.Join(dir2, f), 0o600)
	}
	done := make(chan string, 2)
	go func() { done <- problems(t, dir) }()
	go func() { _, err := bundle.Open(dir2); done <- err.Error() }()
	for range 2 {
		select {
		case msg := <-done:
			if !strings.Contains(msg, "convert_config.json: is a named pipe (FIFO), not a regular file") && !strings.Contains(msg, "manifest.json: is a named pipe (FIFO)") {
				t.Errorf("problems %q", msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Open blocked on a FIFO")
		}
	}
	os.Remove(filepath.Join(dir2, "manifest.json"))
	_, fresh := synth(t, "v2")
	data, _ := os.ReadFile(filepath.Join(fresh, "manifest.json"))
	os.WriteFile(filepath.Join(dir2, "manifest.json"), data, 0o600)
	msg := problems(t, dir2)
	for _, w := range []string{"tokenizer.json (tokenizer): is not a regular file"} {
		if !strings.Contains(msg, w) {
			t.Errorf("problems lack %q:\n%s", w, msg)
		}
	}
	_, dir = synth(t, "stateful3")
	os.Truncate(filepath.Join(dir, "model_config.json"), 17<<20)
	if msg := problems(t, dir); !strings.Contains(msg, "model_config.json: is 17 MiB, more than the 16 MiB allowed") {
		t.Errorf("problems %q", msg)
	}
}

func TestCheckGeometry(t *testing.T) {
	ok := bundle.Geometry{Layers: 35, Hidden: 1536, Heads: 8, KVHeads: 1, HeadDim: 256, GlobalHeadDim: 512, Context: 2048,
		SlidingWindow: 512, PLEDim: 256, Vocab: 262144, FirstShared: 15, MaxRows: 512}
	if p := bundle.CheckGeometry(ok); len(p) != 0 {
		t.Fatalf("E2B geometry refused: %v", p)
	}
	for _, c := range []struct {
		edit func(g *bundle.Geometry)
		want string
	}{
		{func(g *bundle.Geometry) { g.FirstShared = 40 }, "first shared = 40 is past the last of 35 layers"},
		{func(g *bundle.Geometry) { g.KVHeads = 9 }, "kv heads = 9 is more than the 8 query heads"},
		{func(g *bundle.Geometry) { g.MaxRows = 4096 }, "max rows = 4096 rows per call is more than the context of 2048"},
		{func(g *bundle.Geometry) {
			g.Layers, g.FirstShared, g.KVHeads, g.Heads, g.HeadDim, g.Context = 256, 256, 64, 64, 4096, 1<<18
		},
			"needs about"},
	} {
		g := ok
		c.edit(&g)
		if p := strings.Join(bundle.CheckGeometry(g), "; "); !strings.Contains(p, c.want) {
			t.Errorf("CheckGeometry = %q, want %q", p, c.want)
		}
	}
}
