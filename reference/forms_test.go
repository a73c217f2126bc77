package reference

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
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

// TestParseForms: the names `bundle synth --form` takes, refused where
// they do not apply or are misspelt.
func TestParseForms(t *testing.T) {
	f, err := ParseForms("stateful3-logits", []string{"shapeless-outputs", "fp32-inputs", "logits-output=out_1", "declines-backings", "metadata=none", "prefill-batch=4"})
	if err != nil {
		t.Fatal(err)
	}
	want := Form{AllShapeless: true, F32Inputs: true, LogitsOutput: "out_1", Backings: BackingsDecline, Metadata: MetaNone, S3Batch: 4}
	if f != want {
		t.Fatalf("%+v, want %+v", f, want)
	}
	for _, bad := range []struct{ family, form, err string }{
		{"r1", "logits-output=x", "applies to stateful3-logits"},
		{"v2", "shapless-outputs", "not a form"},
		{"r1", "missing-width", "needs a value"},
		{"r1", "fp32-inputs=yes", "takes no value"},
		{"stateful3", "prefill-batch=3", "want 4, 8, 16 or none"},
	} {
		if _, err := ParseForms(bad.family, []string{bad.form}); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s %s: %v, want %q", bad.family, bad.form, err, bad.err)
		}
	}
}

// TestDeclaredForms: what a twin in each form declares, and that its
// metadata.json says the same.
func TestDeclaredForms(t *testing.T) {
	dir, err := Synthesize(SynthOptions{Family: "stateful3-logits", Preset: "tiny", Seed: 1, Out: t.TempDir(),
		Form: Form{AllShapeless: true, F32Inputs: true, LogitsOutput: "out_1"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New().Load(filepath.Join(dir, "chunk_3.mlmodelc"), coreml.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := m.Description()
	if sp, ok := d.Outputs["out_1"]; !ok || !sp.Shapeless() || sp.DType != coreml.Float16 {
		t.Errorf("chunk_3 outputs %v: want a shapeless fp16 out_1", d.Outputs)
	}
	if d.Inputs["cos_s"].DType != coreml.Float32 || d.Inputs["hidden_states"].DType != coreml.Float16 {
		t.Errorf("inputs: cos_s %s, hidden_states %s: host-fed fp32, hand-over fp16", d.Inputs["cos_s"].DType, d.Inputs["hidden_states"].DType)
	}
	meta, err := bundle.ReadModelMeta(filepath.Join(dir, "chunk_3.mlmodelc"))
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := bundle.FindFeature(meta.Schema("").Outputs, "out_1"); !ok || len(f.Shape) != 0 {
		t.Errorf("metadata.json: out_1 %v %v, want no shape", f, ok)
	}
	// The v2 chunks' hidden and the head's token declare no shape in the
	// documented form too: coremltools writes none for them.
	dir, err = Synthesize(SynthOptions{Family: "v2", Preset: "tiny", Seed: 1, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New().Load(filepath.Join(dir, "lmhead.mlmodelc"), coreml.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sp := h.Description().Outputs["token"]; !sp.Shapeless() {
		t.Errorf("v2 lmhead token declares %v", sp.Shape)
	}
}
