package bundle_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/reference"
)

// TestInspectContract loads every function of every model and compares
// each with its metadata.json: agreement, a doctored file, and no file.
func TestInspectContract(t *testing.T) {
	dir, err := reference.Synthesize(reference.SynthOptions{Family: "stateful3", Preset: "tiny", Seed: 1, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := bundle.InspectContract(b, reference.New(), "reference", coreml.CPUAndNeuralEngine)
	if len(c.Models) != 3 || !c.DefaultsLoad() {
		t.Fatalf("contract: %+v", c)
	}
	one := c.Models[0]
	if len(one.Loaded) != 2 || one.Loaded[0].MetaSays != "agrees" || one.Loaded[1].Name != "prefill_b8" {
		t.Fatalf("chunk_1: %+v", one)
	}
	if one.Loaded[0].States == nil || one.Default != "infer" {
		t.Errorf("chunk_1 states %v default %q", one.Loaded[0].States, one.Default)
	}

	// A metadata.json that says the context is 1024: the loaded model wins,
	// and the report names the tensor.
	meta := filepath.Join(dir, "chunk_1.mlmodelc", "metadata.json")
	data, _ := os.ReadFile(meta)
	var arr []map[string]any
	json.Unmarshal(data, &arr)
	for _, f := range arr[0]["inputSchema"].([]any) {
		if f := f.(map[string]any); f["name"] == "causal_mask_full" {
			f["shape"] = "[1, 1, 1, 1024]"
		}
	}
	data, _ = json.Marshal(arr)
	os.WriteFile(meta, data, 0o600)
	os.Remove(filepath.Join(dir, "chunk_2.mlmodelc", "metadata.json"))
	b2, _ := bundle.Open(dir) // the config disagrees now: Open lists it, inspect still runs
	if b2 == nil {
		t.Fatal("no bundle")
	}
	c = bundle.InspectContract(b2, reference.New(), "reference", coreml.CPUAndNeuralEngine)
	f := c.Models[0].Loaded[0]
	if f.MetaSays != "disagrees" || len(f.Metadata) != 1 || !strings.Contains(f.Metadata[0], "causal_mask_full") {
		t.Errorf("doctored metadata: %s %q", f.MetaSays, f.Metadata)
	}
	if s := c.Models[1].Loaded[0].MetaSays; s != "absent" {
		t.Errorf("chunk_2 without metadata.json: %s", s)
	}
	var out strings.Builder
	c.WriteText(&out)
	for _, want := range []string{"chunk_1 (chunk_1.mlmodelc)", "(default: infer)", "metadata.json disagrees", "state kv_cache_full", "metadata.json absent"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestRefineChecksGeometry: a geometry the loaded models declare is
// range-checked like a config's before the bundle takes it.
func TestRefineChecksGeometry(t *testing.T) {
	dir, err := reference.Synthesize(reference.SynthOptions{Family: "stateful3", Preset: "tiny", Seed: 1, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := b.Identity
	g := b.Geometry
	g.Context = 1 << 40
	if err := b.Refine(b.Family, g, []string{"huge"}); err == nil || !strings.Contains(err.Error(), "context") {
		t.Errorf("a context of 2^40 was taken: %v", err)
	}
	if b.Identity.ID != before.ID || b.Geometry.Context == 1<<40 {
		t.Error("a refused refinement changed the bundle")
	}
	g = b.Geometry
	g.SlidingWindow = 8
	if err := b.Refine(bundle.Stateful3Logits, g, []string{"smaller window"}); err != nil || b.Family != bundle.Stateful3Logits {
		t.Errorf("a sound refinement: %v, family %s", err, b.Family)
	}
}
