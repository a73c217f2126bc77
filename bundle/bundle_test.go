package bundle_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/reference"
)

var synthOnce sync.Map

// synth writes a tiny bundle of a family into a fresh folder (a copy of
// one written once per run, so tests can damage theirs freely).
func synth(t *testing.T, family string) (root, dir string) {
	t.Helper()
	type entry struct {
		once      sync.Once
		root, dir string
		err       error
	}
	e, _ := synthOnce.LoadOrStore(family, &entry{})
	en := e.(*entry)
	en.once.Do(func() {
		en.root, en.err = os.MkdirTemp("", "orchard-bundle-test-")
		rootsMu.Lock()
		roots = append(roots, en.root)
		rootsMu.Unlock()
		if en.err == nil {
			en.dir, en.err = reference.Synthesize(reference.SynthOptions{Family: family, Preset: "tiny", Seed: 1, Out: en.root})
		}
	})
	if en.err != nil {
		t.Fatal(en.err)
	}
	root = t.TempDir()
	if err := os.CopyFS(root, os.DirFS(en.root)); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(en.root, en.dir)
	return root, filepath.Join(root, rel)
}

// roots are the shared synthetic bundles, removed when the tests end.
var (
	rootsMu sync.Mutex
	roots   []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, r := range roots {
		os.RemoveAll(r)
	}
	os.Exit(code)
}

func TestDetectEveryFamily(t *testing.T) {
	for _, fam := range bundle.Families() {
		t.Run(string(fam), func(t *testing.T) {
			root, dir := synth(t, string(fam))
			b, err := bundle.Open(root) // from the top: finds the subfolder of stateful3
			if err != nil {
				t.Fatal(err)
			}
			if b.Family != fam || b.Dir != dir {
				t.Fatalf("family %s at %s, want %s at %s", b.Family, b.Dir, fam, dir)
			}
			g := b.Geometry
			if g.Layers != 15 && g.Layers != 12 || g.Hidden != 32 || g.Context != 128 || g.SlidingWindow != 16 || g.Vocab != 512 {
				t.Fatalf("geometry %+v", g)
			}
			if len(b.Identity.ID) != 64 || b.Identity.ConfigSHA256 == "" {
				t.Fatalf("identity %+v", b.Identity)
			}
			if b.Tokenizer == "" {
				t.Fatal("no tokenizer")
			}
			for _, f := range b.Files {
				if f.Status != "ok" {
					t.Errorf("%s: %s", f.Path, f.Status)
				}
			}
		})
	}
}

func TestFindHuggingFaceSnapshot(t *testing.T) {
	_, dir := synth(t, "r1")
	cache := t.TempDir()
	snap := filepath.Join(cache, "models--okayuji--Gemma-4-E2B-it-coreml-speculative", "snapshots", "57a1ad91")
	if err := os.MkdirAll(filepath.Dir(snap), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, snap); err != nil {
		t.Fatal(err)
	}
	got, err := bundle.Find(filepath.Join(cache, "models--okayuji--Gemma-4-E2B-it-coreml-speculative"))
	if err != nil || got != snap {
		t.Fatalf("Find = %q, %v; want %q", got, err, snap)
	}
}

// problems opens dir and returns the validation problems (failing when Open succeeds).
func problems(t *testing.T, dir string) string {
	t.Helper()
	_, err := bundle.Open(dir)
	var ve *bundle.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Open: %v, want a validation error", err)
	}
	return strings.Join(ve.Problems, "\n")
}

func TestSidecarErrorsNameFileAndSizes(t *testing.T) {
	cases := []struct {
		family, file string
		damage       func(path string) error
		want         []string
	}{
		{"r1", "embed_int8.bin", func(p string) error { return os.Truncate(p, 100) }, []string{"embed_int8.bin", "size 100 bytes", "want 16384"}},
		{"r1", "ple_scale_f32.bin", os.Remove, []string{"ple_scale_f32.bin", "missing"}},
		{"v2", "embed_scale.bin", func(p string) error { return os.Truncate(p, 8) }, []string{"embed_scale.bin", "size 8 bytes", "want 2048"}},
		{"stateful3", "embed_tokens_per_layer_q8.bin", func(p string) error { return os.Truncate(p, 1) }, []string{"embed_tokens_per_layer_q8.bin", "want 61440"}},
		{"stateful3", "cos_full.npy", func(p string) error {
			return os.WriteFile(p, []byte("\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'}"), 0o600)
		}, []string{"cos_full.npy"}},
		{"stateful3", "sin_sliding.npy", os.Remove, []string{"sin_sliding.npy"}},
		{"stateful3", "chunk_2.mlmodelc", os.RemoveAll, []string{"chunk_2.mlmodelc", "missing"}},
		{"r1", "lmhead_v4.mlmodelc", os.RemoveAll, []string{"lmhead_v4.mlmodelc", "missing"}},
	}
	for _, c := range cases {
		t.Run(c.family+"/"+c.file, func(t *testing.T) {
			_, dir := synth(t, c.family)
			if err := c.damage(filepath.Join(dir, c.file)); err != nil {
				t.Fatal(err)
			}
			msg := problems(t, dir)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("problems %q lack %q", msg, w)
				}
			}
		})
	}
}

func editJSON(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, _ = json.Marshal(m)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFormatAndFamilyErrors(t *testing.T) {
	t.Run("unknown format", func(t *testing.T) {
		_, dir := synth(t, "r1")
		editJSON(t, filepath.Join(dir, "manifest.json"), func(m map[string]any) { m["format"] = "coreml-something-v9" })
		_, err := bundle.Open(dir)
		if err == nil || !strings.Contains(err.Error(), `"coreml-something-v9"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no format", func(t *testing.T) {
		_, dir := synth(t, "v2")
		editJSON(t, filepath.Join(dir, "manifest.json"), func(m map[string]any) { delete(m, "format") })
		if _, err := bundle.Open(dir); err == nil || !strings.Contains(err.Error(), "no \"format\"") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("wrong family", func(t *testing.T) {
		// An r1 manifest over a v2 folder: the r1 config is missing.
		_, dir := synth(t, "v2")
		editJSON(t, filepath.Join(dir, "manifest.json"), func(m map[string]any) { m["format"] = bundle.FormatR1 })
		if msg := problems(t, dir); !strings.Contains(msg, "convert_config.json") {
			t.Fatalf("problems %q", msg)
		}
	})
	t.Run("not a bundle", func(t *testing.T) {
		if _, err := bundle.Open(t.TempDir()); !errors.Is(err, bundle.ErrNotBundle) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("wrong type names the key", func(t *testing.T) {
		_, dir := synth(t, "r1")
		editJSON(t, filepath.Join(dir, "convert_config.json"), func(m map[string]any) { m["hidden"] = "wide" })
		if msg := problems(t, dir); !strings.Contains(msg, `"hidden"`) {
			t.Fatalf("problems %q", msg)
		}
	})
	t.Run("missing required key", func(t *testing.T) {
		_, dir := synth(t, "v2")
		editJSON(t, filepath.Join(dir, "convert_config_v2int4_int8.json"), func(m map[string]any) { delete(m, "eos_ids") })
		if msg := problems(t, dir); !strings.Contains(msg, "eos_ids") {
			t.Fatalf("problems %q", msg)
		}
	})
	t.Run("config disagrees with the graph", func(t *testing.T) {
		_, dir := synth(t, "stateful3")
		editJSON(t, filepath.Join(dir, "model_config.json"), func(m map[string]any) { m["context_length"] = 4096 })
		if msg := problems(t, dir); !strings.Contains(msg, "context_length = 4096, but chunk_1 declares 128") {
			t.Fatalf("problems %q", msg)
		}
	})
	t.Run("v2 ladder build", func(t *testing.T) {
		_, dir := synth(t, "v2")
		editJSON(t, filepath.Join(dir, "convert_config_v2int4_int8.json"), func(m map[string]any) { m["kind"] = "ladder"; m["WSLIDE"] = 1024 })
		if msg := problems(t, dir); !strings.Contains(msg, "ladder") {
			t.Fatalf("problems %q", msg)
		}
	})
	t.Run("v2 on the neural engine", func(t *testing.T) {
		_, dir := synth(t, "v2")
		editJSON(t, filepath.Join(dir, "manifest.json"), func(m map[string]any) { m["computeUnits"] = "cpuAndNeuralEngine" })
		if msg := problems(t, dir); !strings.Contains(msg, "require the GPU") {
			t.Fatalf("problems %q", msg)
		}
	})
}

func TestUnknownKeysKeptAndIdentity(t *testing.T) {
	_, dir := synth(t, "r1")
	b1, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b1.R1.Extra["orchard_synthetic"]; !ok {
		t.Fatal("unknown key orchard_synthetic was not kept")
	}
	b2, _ := bundle.Open(dir)
	if b1.Identity.ID != b2.Identity.ID {
		t.Fatal("identity is not stable")
	}
	editJSON(t, filepath.Join(dir, "convert_config.json"), func(m map[string]any) { m["eos_token_ids"] = []int{1} })
	b3, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b3.Identity.ID == b1.Identity.ID {
		t.Fatal("identity did not change with the config bytes")
	}
}

func TestEOSUnionAndTemplate(t *testing.T) {
	_, dir := synth(t, "r1")
	editJSON(t, filepath.Join(dir, "manifest.json"), func(m map[string]any) { m["eos"] = []int{106, 50} })
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.EOS; len(got) != 3 || got[0] != 1 || got[1] != 106 || got[2] != 50 {
		t.Fatalf("EOS %v, want config ∪ manifest = [1 106 50]", got)
	}
	if b.Template.PromptPrefix == nil || *b.Template.PromptPrefix != "<|turn>user\n" {
		t.Fatalf("template %+v", b.Template)
	}
}

// TestOptionalKeysOfTheWrongType: optional config keys written in another
// type — eos_token_id as a list, a number as a string, a word where a
// number belongs — are read or noted; the bundle still opens. A required
// key of the wrong type still refuses it, naming the key.
func TestOptionalKeysOfTheWrongType(t *testing.T) {
	_, dir := synth(t, "stateful3")
	var ctx float64
	editJSON(t, filepath.Join(dir, "model_config.json"), func(m map[string]any) {
		ctx = m["context_length"].(float64)
		m["eos_token_id"] = []int{1, 106}
		m["context_length"] = fmtFloat(ctx)
		m["embed_scale"] = "thirty-nine"
	})
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if len(b.EOS) != 2 || b.EOS[0] != 1 || b.EOS[1] != 106 {
		t.Errorf("EOS %v, want [1 106] from the list", b.EOS)
	}
	if b.Geometry.Context != int(ctx) {
		t.Errorf("context %d, want %v read from the string", b.Geometry.Context, ctx)
	}
	notes := strings.Join(b.Notes, "\n")
	for _, want := range []string{`"context_length"`, `"embed_scale"`, "ignored, the default is used"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note with %s:\n%s", want, notes)
		}
	}

	_, dir = synth(t, "r1")
	editJSON(t, filepath.Join(dir, "convert_config.json"), func(m map[string]any) { m["hidden"] = "wide" })
	if _, err := bundle.Open(dir); err == nil || !strings.Contains(err.Error(), `"hidden"`) {
		t.Errorf("a required key of the wrong type: %v", err)
	}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
