//go:build darwin && cgo

package darwin

// These tests need a Mac. The model test runs against a real chunk:
//
//	ORCHARD_COREML_MODEL=~/models/gemma-4-e2b-stateful/chunk_1.mlmodelc \
//	ORCHARD_COREML_FUNCTION=prefill_b8 ORCHARD_COREML_UNITS=cpuAndNeuralEngine \
//	go test ./coreml/darwin -run CoreML -v

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
)

func TestCoreMLAlloc(t *testing.T) {
	rt, err := NewCoreML()
	if err != nil {
		t.Fatal(err)
	}
	a := rt.Alloc([]int{1, 3, 5}, coreml.Float16)
	if len(a.Data) != 30 || a.Len() != 15 || slices.ContainsFunc(a.Data, func(b byte) bool { return b != 0 }) {
		t.Fatalf("Alloc = %v %s, %d bytes, want 30 zero bytes", a.Shape, a.DType, len(a.Data))
	}
	if !rt.(*coreMLRuntime).mem.owns(a.Data) || rt.(*coreMLRuntime).mem.owns(make([]byte, 30)) {
		t.Error("arena ownership is wrong")
	}
	a.SetF16(14, f16.FromF32(1.5))
	if a.Float(14) != 1.5 {
		t.Error("Alloc'd memory does not hold a value")
	}
}

func TestCoreMLModel(t *testing.T) {
	path := os.Getenv("ORCHARD_COREML_MODEL")
	if path == "" {
		t.Skip("set ORCHARD_COREML_MODEL to a .mlmodelc folder to run a real chunk")
	}
	units, err := coreml.ParseComputeUnits(os.Getenv("ORCHARD_COREML_UNITS"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := NewCoreML()
	if err != nil {
		t.Fatal(err)
	}
	o := coreml.LoadOptions{Function: os.Getenv("ORCHARD_COREML_FUNCTION"), ComputeUnits: units}
	m, err := rt.Load(path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d := m.Description()
	for _, kind := range []struct {
		name  string
		specs map[string]coreml.TensorSpec
	}{{"input", d.Inputs}, {"output", d.Outputs}, {"state", d.States}} {
		for _, name := range slices.Sorted(maps.Keys(kind.specs)) {
			s := kind.specs[name]
			t.Logf("%s %s: %s %s", kind.name, name, s.DType, s.ShapeString())
		}
	}

	in := make(coreml.Features)
	for name, s := range d.Inputs {
		in[name] = rt.Alloc(s.Shape, s.DType) // zeros at the default shape
	}
	var st coreml.State
	if len(d.States) > 0 {
		if st, err = m.NewState(); err != nil {
			t.Fatal(err)
		}
	}
	for step := range 2 {
		out, err := m.Predict(in, st, nil)
		if err != nil {
			t.Fatalf("predict %d: %v", step, err)
		}
		for name, s := range d.Outputs {
			if s.Shapeless() {
				// coremltools declares no shape for an output that depends
				// on a flexible input (E4B's hidden, the heads' token):
				// only its presence and dtype can be checked.
				if o := out[name]; o == nil || o.DType != s.DType || o.Len() == 0 {
					t.Errorf("predict %d: shapeless output %s: %v", step, name, o)
				} else if step == 0 {
					t.Logf("output %s declares no shape; the call returned %v", name, o.Shape)
				}
				continue
			}
			if err := s.Check(name, out[name]); err != nil {
				t.Errorf("predict %d: %v", step, err)
			}
		}
	}
	for name, s := range d.States {
		a, err := st.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		a.SetF16(0, f16.FromF32(0.5))
		if err := st.Write(name, a); err != nil {
			t.Fatal(err)
		}
		b, err := st.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Data, b.Data) || s.DType != b.DType {
			t.Errorf("state %s: write then read differs", name)
		}
	}
	if st != nil {
		if _, err := st.Read("orchard_no_such_state"); err == nil {
			t.Error("reading an unknown state succeeded")
		}
	}

	_, err = rt.Load(path, coreml.LoadOptions{Function: "orchard_no_such_function", ComputeUnits: units})
	if !errors.Is(err, coreml.ErrFunctionUnavailable) {
		t.Errorf("loading a missing function: %v, want ErrFunctionUnavailable", err)
	}
	t.Log(err)
}

func TestCoreMLCompile(t *testing.T) {
	src := os.Getenv("ORCHARD_COREML_PACKAGE")
	if src == "" {
		t.Skip("set ORCHARD_COREML_PACKAGE to a .mlpackage to compile one")
	}
	pkg := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := copyTree(pkg, src); err != nil {
		t.Fatal(err)
	}
	dst, err := CompileModel(pkg, func(msg string) { t.Log(msg) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "coremldata.bin")); err != nil {
		t.Errorf("compiled model: %v", err)
	}
	rt, err := NewCoreML()
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.Load(dst, coreml.LoadOptions{ComputeUnits: coreml.CPUOnly})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
}
