package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/reference"
)

func TestModelsCommand(t *testing.T) {
	home := isolate(t)
	hub := filepath.Join(home, "hub")
	t.Setenv("HF_HUB_CACHE", hub)
	search := filepath.Join(home, "models")

	if code, out, _ := call(runModels); code != 0 || !strings.Contains(out, "no bundles found in "+hub) || !strings.Contains(out, "orchard --demo") || !strings.Contains(out, "--models-dir DIR") {
		t.Errorf("no bundles: %d %q", code, out)
	}

	// One bundle in the cache, one in a search folder, one that is not usable.
	snap := filepath.Join(hub, "models--okayuji--gemma", "snapshots", "0123456789abcdef")
	if _, err := reference.Synthesize(reference.SynthOptions{Family: "r1", Preset: "tiny", Seed: 1, Out: snap}); err != nil {
		t.Fatal(err)
	}
	s3, err := reference.Synthesize(reference.SynthOptions{Family: "stateful3", Preset: "tiny", Seed: 1, Out: filepath.Join(search, "e2b")})
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(search, "odd")
	os.MkdirAll(odd, 0o755)
	os.WriteFile(filepath.Join(odd, "manifest.json"), []byte(`{"format": "coreml-corellm-v1"}`), 0o644)

	code, out, errs := call(runModels, "--models-dir", search, "--models-dir", filepath.Join(home, "gone"))
	if code != 0 {
		t.Fatalf("models: %d %s", code, errs)
	}
	for _, re := range []string{
		`(?m)^NAME +FAMILY +SIZE +PATH +STATUS$`,
		`(?m)^synthetic-stateful3-tiny-seed1 +stateful3 +[0-9.]+ KiB +` + regexp.QuoteMeta(s3) + ` +ok$`,
		`(?m)^odd +\? +[0-9]+ B +` + regexp.QuoteMeta(odd) + ` +invalid: manifest.json format "coreml-corellm-v1" is not one orchard knows`,
		`(?m)^okayuji/gemma +r1 +[0-9.]+ KiB +` + regexp.QuoteMeta(snap) + ` +ok$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("models output lacks %s:\n%s", re, out)
		}
	}
	if !strings.Contains(errs, filepath.Join(home, "gone")) {
		t.Errorf("a missing search folder is not reported: %q", errs)
	}

	// --json, with the search folder from the environment.
	t.Setenv("ORCHARD_MODEL_SEARCH_DIRS", search)
	code, out, errs = call(runModels, "--json")
	var found []config.Found
	if code != 0 || json.Unmarshal([]byte(out), &found) != nil {
		t.Fatalf("models --json: %d %s\n%s", code, errs, out)
	}
	var names []string
	for _, f := range found {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "synthetic-stateful3-tiny-seed1,odd,okayuji/gemma" {
		t.Errorf("models --json lists %v", names)
	}
	if f := found[1]; f.Valid || f.Problem == "" || f.Family != "" {
		t.Errorf("odd bundle %+v", f)
	}

	if code, _, _ := call(runModels, "extra"); code != 2 {
		t.Errorf("models extra: exit %d, want 2", code)
	}
	t.Setenv("ORCHARD_MODEL_SEARCH_DIRS", "")
	t.Setenv("ORCHARD_SPECULATION_DRAFT_LENGTH", "99")
	if code, _, errs := call(runModels); code != 2 || !strings.Contains(errs, "env ORCHARD_SPECULATION_DRAFT_LENGTH") {
		t.Errorf("models with a bad config: %d %s", code, errs)
	}
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 30: "5.0 GiB", 3 << 40: "3.0 TiB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
