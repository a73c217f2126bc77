package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/coreml"
)

func ckpt(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runCkpt(args, &out, &errb)
	return code, out.String(), errb.String()
}

// saveCkpt stores a small v2 checkpoint.
func saveCkpt(t *testing.T, dir, name string, created time.Time) {
	t.Helper()
	s, err := checkpoints.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(testCheckpoint(name, created)); err != nil {
		t.Fatal(err)
	}
}

// testCheckpoint is a small v2 checkpoint.
func testCheckpoint(name string, created time.Time) *checkpoints.Checkpoint {
	return &checkpoints.Checkpoint{
		Meta: checkpoints.Meta{Name: name, Created: created, BundleName: "gemma-4-e4b",
			Identity: bundle.Identity{Family: bundle.V2, ConfigFile: "convert_config_v2.json", ConfigSHA256: strings.Repeat("ab", 32), ID: strings.Repeat("cd", 32),
				Geometry: bundle.Geometry{Layers: 2, KVHeads: 2, HeadDim: 4, Context: 2048}}},
		Conversation: checkpoints.Conversation{Messages: []checkpoints.Message{{Role: "user", Content: "hello\nthere"}, {Role: "model", Content: "hi"}}},
		Tokens:       []int{2, 105, 9},
		Cache: checkpoints.Cache{Family: bundle.V2, Position: 3, Buffers: []checkpoints.Buffer{
			{Name: "chunk_0_12/k_cache_0", Shape: []int{2, 3, 4}, DType: coreml.Float16, Data: make([]byte, 48)},
			{Name: "chunk_0_12/v_cache_0", Shape: []int{2, 3, 4}, DType: coreml.Float16, Data: bytes.Repeat([]byte{1}, 48)},
		}},
	}
}

func TestCkptCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	if code, out, errs := ckpt(t, "ls", "--dir", dir); code != 0 || out != "" || !strings.Contains(errs, "no checkpoints") {
		t.Fatalf("ls of an empty store: %d %q %q", code, out, errs)
	}
	if code, out, _ := ckpt(t, "ls", "--dir", dir, "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("ls --json of an empty store: %d %q", code, out)
	}
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	saveCkpt(t, dir, "first chat", base)
	saveCkpt(t, dir, "Zweiter", base.Add(time.Hour))

	code, out, errs := ckpt(t, "ls", "--dir", dir)
	if code != 0 || !strings.Contains(out, "NAME") || strings.Index(out, "Zweiter") > strings.Index(out, "first chat") ||
		!strings.Contains(out, "gemma-4-e4b (v2 cdcdcdcdcdcd)") {
		t.Errorf("ls: %d\n%s%s", code, out, errs)
	}
	code, out, _ = ckpt(t, "ls", "--json", "--dir", dir)
	var list []checkpoints.Info
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 || list[1].Turns != 1 || list[1].Tokens != 3 {
		t.Errorf("ls --json: %d %s", code, out)
	}

	code, out, errs = ckpt(t, "show", "first chat", "--dir", dir, "--verify")
	for _, want := range []string{"name:", "first chat", "3 committed", "v2 at position 3, 2 buffers", "verified:", "state_chunk_0_12_k_cache_0.bin", "user:  hello there"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s%s", want, out, errs)
		}
	}
	code, out, _ = ckpt(t, "show", "--json", "--dir", dir, "Zweiter")
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["name"] != "Zweiter" || v["position"] != 3.0 {
		t.Errorf("show --json: %d %s", code, out)
	}
	if code, _, errs := ckpt(t, "show", "--dir", dir, "nope"); code != 2 || !strings.Contains(errs, `"nope"`) {
		t.Errorf("show of an unknown name: %d %s", code, errs)
	}

	if code, _, errs := ckpt(t, "mv", "--dir", dir, "first chat", "Zweiter"); code != 2 || !strings.Contains(errs, "exists") {
		t.Errorf("mv onto an existing name: %d %s", code, errs)
	}
	if code, _, errs := ckpt(t, "mv", "--dir", dir, "first chat", "a/b"); code != 2 || !strings.Contains(errs, "path separator") {
		t.Errorf("mv to an invalid name: %d %s", code, errs)
	}
	if code, _, errs := ckpt(t, "mv", "--dir", dir, "--", "first chat", "-dashed"); code != 0 {
		t.Errorf("mv to a name starting with a dash: %d %s", code, errs)
	}

	archive := filepath.Join(t.TempDir(), "chat.tar")
	if code, _, errs := ckpt(t, "export", "--dir", dir, "--", "-dashed", archive); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	if code, _, errs := ckpt(t, "export", "--dir", dir, "Zweiter", archive); code != 2 || !strings.Contains(errs, "exists") {
		t.Errorf("export over a file: %d %s", code, errs)
	}
	if code, out, errs := ckpt(t, "import", "--dir", dir, archive, "copy"); code != 0 || out != "copy\n" {
		t.Errorf("import: %d %q %s", code, out, errs)
	}
	if code, _, errs := ckpt(t, "import", "--dir", dir, archive); code != 2 || !strings.Contains(errs, "exists") || strings.Contains(errs, "import: import") {
		t.Errorf("import under the taken exported name: %d %s", code, errs)
	}
	data, _ := os.ReadFile(archive)
	bad := filepath.Join(t.TempDir(), "bad.tar")
	os.WriteFile(bad, data[:len(data)-1500], 0o600)
	if code, _, errs := ckpt(t, "import", "--dir", dir, bad, "bad"); code != 2 || strings.Contains(errs, "import: import") {
		t.Errorf("import of a truncated archive: %d %s", code, errs)
	}

	// A damaged checkpoint: show still works, --verify names the file (exit 1).
	f := filepath.Join(dir, "copy", "state_chunk_0_12_v_cache_0.bin")
	os.WriteFile(f, bytes.Repeat([]byte{2}, 48), 0o600)
	if code, _, errs := ckpt(t, "show", "--dir", dir, "--verify", "copy"); code != 1 || !strings.Contains(errs, "state_chunk_0_12_v_cache_0.bin: sha256 mismatch") {
		t.Errorf("show --verify of a damaged checkpoint: %d %s", code, errs)
	}

	if code, _, errs := ckpt(t, "rm", "--dir", dir, "copy", "nope"); code != 2 || !strings.Contains(errs, `no such checkpoint named "nope"`) {
		t.Errorf("rm with an unknown name: %d %s", code, errs)
	}
	if code, _, errs := ckpt(t, "rm", "--dir", dir, "Zweiter", "--", "-dashed"); code != 0 {
		t.Errorf("rm: %d %s", code, errs)
	}
	if code, out, _ := ckpt(t, "ls", "--dir", dir, "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("after rm: %s", out)
	}
}

func TestCkptUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{}, {"frobnicate"}, {"show", "--dir", dir}, {"mv", "--dir", dir, "a"}, {"ls", "--dir", dir, "extra"}, {"ls", "--bogus"}} {
		if code, _, _ := ckpt(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code, out, _ := ckpt(t, "help"); code != 0 || !strings.Contains(out, "orchard ckpt export NAME FILE|-") {
		t.Errorf("help: %d %s", code, out)
	}
}

// Without --dir the store is <data.dir>/checkpoints, from XDG_DATA_HOME.
func TestCkptDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("ORCHARD_CONFIG", "")
	t.Setenv("ORCHARD_DATA_DIR", "")
	saveCkpt(t, filepath.Join(home, "data", "orchard", "checkpoints"), "here", time.Now())
	if code, out, errs := ckpt(t, "ls"); code != 0 || !strings.Contains(out, "\nhere ") {
		t.Errorf("ls: %d %s %s", code, out, errs)
	}
	other := filepath.Join(home, "elsewhere")
	saveCkpt(t, filepath.Join(other, "checkpoints"), "there", time.Now())
	if code, out, errs := ckpt(t, "ls", "--data-dir", other); code != 0 || !strings.Contains(out, "\nthere ") || strings.Contains(out, "\nhere ") {
		t.Errorf("ls --data-dir: %d %s %s", code, out, errs)
	}
}

// TestCkptLsColumns: thousands separators as on the chat screen, and
// columns that stay aligned when a name has wide characters.
func TestCkptLsColumns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := checkpoints.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for i, name := range []string{"plain", "果樹園の計画 🍎"} {
		cp := testCheckpoint(name, base.Add(time.Duration(i)*time.Hour))
		cp.Tokens = make([]int, 12345)
		cp.Cache.Position = len(cp.Tokens)
		cp.Meta.Identity.Geometry.Context = 16384 // a position must be within the bundle's context
		if err := s.Save(cp); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := ckpt(t, "ls", "--dir", dir)
	if code != 0 || !strings.Contains(out, "12,345") {
		t.Fatalf("ls: %d\n%s%s", code, out, errs)
	}
	col := -1
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		at := strings.Index(l, "2026-")
		if strings.HasPrefix(l, "NAME") {
			at = strings.Index(l, "CREATED")
		}
		c := ansi.StringWidth(l[:at])
		if col >= 0 && c != col {
			t.Fatalf("the CREATED column moves:\n%s", out)
		}
		col = c
	}
}
