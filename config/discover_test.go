package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
)

// TestDiscover scans two search folders and a Hugging Face cache holding
// valid and invalid bundles of every family, symlinks, a loop and clutter.
func TestDiscover(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	search := filepath.Join(root, "search")
	hub := filepath.Join(root, "hub")

	copyTree(t, templates["r1"], filepath.Join(search, "a-r1"))
	broken := filepath.Join(search, "broken")
	copyTree(t, templates["r1"], broken)
	truncated := truncateSidecar(t, broken)
	copyTree(t, templates["stateful3"], filepath.Join(search, "deep", "x", "y", "gemma4_e2b_stateful_chunks"))
	os.MkdirAll(filepath.Join(search, "empty"), 0o755)
	os.MkdirAll(filepath.Join(search, "odd"), 0o755)
	os.WriteFile(filepath.Join(search, "odd", "manifest.json"), []byte(`{"format": "coreml-something-else"}`), 0o644)
	copyTree(t, templates["r1"], filepath.Join(search, ".hidden"))
	os.Symlink(".", filepath.Join(search, "loop"))
	os.Symlink(search, filepath.Join(search, "deep", "x", "up"))

	search2 := filepath.Join(home, "more")
	copyTree(t, templates["v2"], filepath.Join(search2, "v2"))
	os.Symlink(filepath.Join(search, "a-r1"), filepath.Join(search2, "again")) // listed once

	multi := filepath.Join(hub, "models--acme--multi")
	hfSnapshot(t, templates["r1"], multi, "aaaaaaaaaaaaaaaa", "")
	hfSnapshot(t, templates["r1"], multi, "bbbbbbbbbbbbbbbb", "")
	os.MkdirAll(filepath.Join(multi, "refs"), 0o755)
	os.WriteFile(filepath.Join(multi, "refs", "main"), []byte("bbbbbbbbbbbbbbbb"), 0o644)
	variants := filepath.Join(hub, "models--okayuji--gemma")
	hfSnapshot(t, templates["r1"], variants, "main", "e2b")
	hfSnapshot(t, templates["v2"], variants, "main", "e4b")
	// A download cut short: one blob never arrived.
	partial := filepath.Join(hub, "models--okayuji--partial")
	hfSnapshot(t, templates["r1"], partial, "r", "")
	os.Remove(mustReadlink(t, filepath.Join(partial, "snapshots", "r", truncated)))
	hfSnapshot(t, templates["stateful3-logits"], filepath.Join(hub, "models--solo"), "r", "")
	os.MkdirAll(filepath.Join(hub, ".locks", "models--acme--multi"), 0o755)
	os.MkdirAll(filepath.Join(hub, "models--empty", "snapshots", "r"), 0o755)

	env := mapEnv(map[string]string{"HOME": home, "HF_HUB_CACHE": hub})
	found := Discover([]string{search, "~/more", filepath.Join(root, "missing")}, env)

	type row struct {
		Name   string
		Family bundle.Family
		Path   string
		Valid  bool
		Origin string
	}
	want := []row{
		{"synthetic-r1-tiny-seed1", bundle.R1, filepath.Join(search, "a-r1"), true, search},
		{"synthetic-r1-tiny-seed1", bundle.R1, broken, false, search},
		{"synthetic-stateful3-tiny-seed1", bundle.Stateful3, filepath.Join(search, "deep", "x", "y", "gemma4_e2b_stateful_chunks"), true, search},
		{"odd", "", filepath.Join(search, "odd"), false, search},
		{"synthetic-v2-tiny-seed1", bundle.V2, filepath.Join(search2, "v2"), true, search2},
		{"acme/multi@aaaaaaaa", bundle.R1, filepath.Join(multi, "snapshots", "aaaaaaaaaaaaaaaa"), true, hub},
		{"acme/multi@bbbbbbbb", bundle.R1, filepath.Join(multi, "snapshots", "bbbbbbbbbbbbbbbb"), true, hub},
		{"okayuji/gemma/e2b", bundle.R1, filepath.Join(variants, "snapshots", "main", "e2b"), true, hub},
		{"okayuji/gemma/e4b", bundle.V2, filepath.Join(variants, "snapshots", "main", "e4b"), true, hub},
		{"okayuji/partial", bundle.R1, filepath.Join(partial, "snapshots", "r"), false, hub},
		{"solo", bundle.Stateful3Logits, filepath.Join(hub, "models--solo", "snapshots", "r"), true, hub},
	}
	var got []row
	for _, f := range found {
		got = append(got, row{f.Name, f.Family, f.Path, f.Valid, f.Origin})
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("found\n%s\nwant\n%s", rows(got), rows(want))
	}

	// The invalid ones carry the bundle package's first problem.
	_, err := bundle.Open(broken)
	var ve *bundle.ValidationError
	if !errors.As(err, &ve) || found[1].Problem != ve.Problems[0] || !strings.Contains(found[1].Problem, truncated) {
		t.Errorf("broken bundle problem %q, want %v naming %s", found[1].Problem, err, truncated)
	}
	if p := found[3].Problem; !strings.Contains(p, `manifest.json format "coreml-something-else"`) || strings.Contains(p, search) {
		t.Errorf("unknown format problem %q", p)
	}
	if p := found[9].Problem; !strings.Contains(p, truncated) || !strings.Contains(p, "missing") {
		t.Errorf("partial download problem %q, want %s missing", p, truncated)
	}
	for _, f := range found {
		if f.Valid != (f.Problem == "") {
			t.Errorf("%s: valid %v with problem %q", f.Name, f.Valid, f.Problem)
		}
	}

	// Sizes count real bytes, through the cache's blob links too.
	r1 := treeSize(t, templates["r1"])
	if found[0].Size != r1 || found[5].Size != r1 || found[7].Size != r1 {
		t.Errorf("sizes %d (copy) %d (cache) %d (variant), want %d", found[0].Size, found[5].Size, found[7].Size, r1)
	}
	if again := Discover([]string{search, "~/more", filepath.Join(root, "missing")}, env); !reflect.DeepEqual(again, found) {
		t.Error("a second scan of the same tree differs")
	}
}

func TestDiscoverUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every folder")
	}
	search := t.TempDir()
	copyTree(t, templates["r1"], filepath.Join(search, "ok"))
	locked := filepath.Join(search, "locked")
	copyTree(t, templates["r1"], filepath.Join(locked, "b"))
	os.Chmod(locked, 0)
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	found := Discover([]string{search}, mapEnv(map[string]string{"HF_HUB_CACHE": t.TempDir()}))
	if len(found) != 1 || found[0].Path != filepath.Join(search, "ok") {
		t.Errorf("found %+v, want only the readable bundle", found)
	}
}

func TestHFCacheDir(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/h"}, "/h/.cache/huggingface/hub"},
		{map[string]string{"HOME": "/h", "XDG_CACHE_HOME": "/c"}, "/c/huggingface/hub"},
		{map[string]string{"HOME": "/h", "XDG_CACHE_HOME": "/c", "HF_HOME": "/hf"}, "/hf/hub"},
		{map[string]string{"HOME": "/h", "HF_HOME": "/hf", "HF_HUB_CACHE": "/hub"}, "/hub"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		if got := HFCacheDir(mapEnv(tt.env)); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.env, got, tt.want)
		}
	}
}

// truncateSidecar cuts the first file the bundle checks by size to one
// byte and returns its path relative to the bundle.
func truncateSidecar(t *testing.T, dir string) string {
	t.Helper()
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Files {
		if f.Want > 1 {
			if err := os.Truncate(filepath.Join(b.Dir, f.Path), 1); err != nil {
				t.Fatal(err)
			}
			return f.Path
		}
	}
	t.Fatal("no sized file to truncate")
	return ""
}

func mustReadlink(t *testing.T, link string) string {
	t.Helper()
	target, err := os.Readlink(link)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(filepath.Dir(link), target)
}

func rows[T any](rs []T) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "  %+v\n", r)
	}
	return b.String()
}

// One bad bundle never stops a listing: the probe's tokenizer.json of
// 8,000,000 nested arrays (16 MB) overflowed the stack of `orchard models`
// and the picker; now that bundle is listed with its problem, naming the
// file, and the others as before. A panic while one bundle is read becomes
// that bundle's problem too.
func TestDiscoverListsBadBundles(t *testing.T) {
	t.Parallel()
	search := t.TempDir()
	copyTree(t, templates["r1"], filepath.Join(search, "a-good"))
	deep := filepath.Join(search, "b-deep")
	copyTree(t, templates["r1"], deep)
	const n = 8_000_000
	doc := `{"model":{"vocab":{"a":0}},"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	if err := os.WriteFile(filepath.Join(deep, "tokenizer.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	copyTree(t, templates["r1"], filepath.Join(search, "c-panics"))
	copyTree(t, templates["r1"], filepath.Join(search, "d-good"))

	d := &discoverer{visited: map[string]bool{}, seen: map[string]bool{}, origin: search,
		open: func(dir string) (*bundle.Bundle, error) {
			if filepath.Base(dir) == "c-panics" {
				panic("index out of range [3] with length 3")
			}
			return bundle.Open(dir)
		}}
	d.scan(search, 0, nil)
	var got []string
	for _, f := range d.found {
		got = append(got, fmt.Sprintf("%s valid=%v", filepath.Base(f.Path), f.Valid))
	}
	if want := []string{"a-good valid=true", "b-deep valid=false", "c-panics valid=false", "d-good valid=true"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("found %q, want %q", got, want)
	}
	if p := d.found[1].Problem; !strings.Contains(p, "tokenizer.json") || !strings.Contains(p, "nested deeper than the limit of 128 levels") {
		t.Errorf("deep tokenizer problem %q", p)
	}
	if p := d.found[2].Problem; !strings.Contains(p, "index out of range") || !strings.Contains(p, "report") {
		t.Errorf("panicking bundle problem %q", p)
	}
	// Discover itself, as `orchard models` and the picker call it.
	if found := Discover([]string{search}, mapEnv(map[string]string{"HF_HUB_CACHE": t.TempDir()})); len(found) != 4 || found[1].Valid {
		t.Errorf("Discover: %+v", found)
	}
}
