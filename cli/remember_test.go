package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tui"
)

// The README: with no --model and no model.path, orchard opens the model
// chosen last in the picker, else the picker. Choosing the demo was not
// remembered (the picker asked again every time); now it is, as the demo,
// which is made again if its cache folder is gone. A remembered bundle
// that is gone sends the user back to the picker, saying so.
func TestPickerChoiceRemembered(t *testing.T) {
	home := isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	cfg, err := config.Load(config.Options{Env: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if _, _, ok := remembered(cfg, &stderr); ok {
		t.Fatal("a choice remembered before any was made")
	}
	dir, demo, err := takeChoice(cfg, tui.PickerEntry{Name: demoEntry, Family: "r1"}, &stderr)
	if err != nil || !demo {
		t.Fatalf("demo choice: %q %v %v", dir, demo, err)
	}
	again, demo, ok := remembered(cfg, &stderr)
	if !ok || !demo || again != dir {
		t.Fatalf("remembered %q demo %v ok %v, want the demo %s", again, demo, ok, dir)
	}
	os.RemoveAll(dir) // the cache cleared
	if again, demo, ok = remembered(cfg, &stderr); !ok || !demo || again != dir {
		t.Fatalf("after the cache was cleared: %q %v %v", again, demo, ok)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Errorf("the demo was not made again: %v", err)
	}

	b := filepath.Join(home, "models", "mine")
	if _, err := reference.Synthesize(reference.SynthOptions{Family: "v2", Preset: "tiny", Seed: 1, Out: b}); err != nil {
		t.Fatal(err)
	}
	if dir, demo, err = takeChoice(cfg, tui.PickerEntry{Name: "mine", Path: b}, &stderr); err != nil || demo || dir != b {
		t.Fatalf("bundle choice: %q %v %v", dir, demo, err)
	}
	if again, demo, ok = remembered(cfg, &stderr); !ok || demo || again != b {
		t.Fatalf("remembered %q %v %v, want %s", again, demo, ok, b)
	}
	os.RemoveAll(b)
	stderr.Reset()
	if _, _, ok = remembered(cfg, &stderr); ok || !strings.Contains(stderr.String(), "the model chosen last, "+b+", is gone; choose another") {
		t.Errorf("a remembered bundle that is gone: ok %v, %q", ok, stderr.String())
	}
}
