package reference

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
)

// TestSynthForms: each form writes what it says (the engine's
// TestBundleForms then shows orchard runs them alike).
func TestSynthForms(t *testing.T) {
	synth := func(family string, f Form) string {
		dir, err := Synthesize(SynthOptions{Family: family, Preset: "tiny", Seed: 1, Out: t.TempDir(), Form: f})
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// Per-function schemas: no top-level schema, each function its own.
	dir := synth("stateful3-logits", Form{Metadata: MetaPerFunction})
	m, err := bundle.ReadModelMeta(filepath.Join(dir, "chunk_3.mlmodelc"))
	if err != nil {
		t.Fatal(err)
	}
	if m.DefaultFunction != "infer" || len(m.Functions) != 2 {
		t.Fatalf("functions %v default %q", m.Functions, m.DefaultFunction)
	}
	if s := m.Schema("prefill_b8"); s == nil {
		t.Fatal("no schema for prefill_b8")
	} else if _, ok := bundle.FindFeature(s.Outputs, "logits"); !ok {
		t.Errorf("prefill_b8 outputs %v lack logits", s.Outputs)
	}
	// No metadata at all.
	dir = synth("v2", Form{Metadata: MetaNone, V2StateRank4: true})
	chunks, _ := filepath.Glob(filepath.Join(dir, "chunk_0_*.mlmodelc"))
	if len(chunks) != 1 {
		t.Fatalf("first chunk: %v", chunks)
	}
	if _, err := os.Stat(filepath.Join(chunks[0], "metadata.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("metadata.json written with MetaNone: %v", err)
	}
	tw, err := ReadTwin(chunks[0])
	if err != nil {
		t.Fatal(err)
	}
	d, _ := Describe(tw, tw.DefaultFunction)
	for name, s := range d.States {
		if len(s.Shape) != 4 || s.Shape[0] != 1 {
			t.Errorf("state %s: shape %v, want rank 4", name, s.Shape)
		}
	}
	// Single-function chunks list no functions, as Core ML's asset does.
	dir = synth("stateful3", Form{S3Default: "main", S3Batch: -1})
	fns, err := New().Functions(filepath.Join(dir, "chunk_1.mlmodelc"))
	if err != nil || len(fns) != 0 {
		t.Errorf("single-function chunk lists %v (%v)", fns, err)
	}
}
