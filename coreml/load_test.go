package coreml

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// fakeRuntime loads the functions it has and counts loads.
type fakeRuntime struct {
	functions map[string]bool // false: present but broken (a non-capability error)
	loads     []string
}

type fakeModel struct{ function string }

func (m *fakeModel) Description() Description                            { return Description{} }
func (m *fakeModel) NewState() (State, error)                            { return nil, errors.New("stateless") }
func (m *fakeModel) Predict(Features, State, *Outputs) (Features, error) { return nil, nil }
func (m *fakeModel) Close() error                                        { return nil }

func (r *fakeRuntime) Load(path string, o LoadOptions) (Model, error) {
	r.loads = append(r.loads, o.Function)
	ok, present := r.functions[o.Function]
	switch {
	case !present:
		return nil, &Error{Op: "load", Path: path, Function: o.Function, Err: ErrFunctionUnavailable}
	case !ok:
		return nil, &Error{Op: "load", Path: path, Function: o.Function, Err: errors.New("weights are corrupt")}
	}
	return &fakeModel{function: o.Function}, nil
}

func (r *fakeRuntime) Alloc(shape []int, dt DType) *Tensor { return NewTensor(shape, dt) }

func TestLoadFirst(t *testing.T) {
	probe := []string{"prefill_b16", "prefill_b8", "prefill_b4"}
	for _, tt := range []struct {
		name      string
		functions map[string]bool
		want      string
		wantErr   error
		tried     []string
	}{
		{"Mac: widest wins", map[string]bool{"prefill_b16": true, "prefill_b8": true}, "prefill_b16", nil, probe[:1]},
		{"iPhone: b16 fails to compile", map[string]bool{"prefill_b8": true}, "prefill_b8", nil, probe[:2]},
		{"none: T=1 only", map[string]bool{"infer": true}, "", ErrFunctionUnavailable, probe},
		{"broken model stops the probe", map[string]bool{"prefill_b8": false, "prefill_b4": true}, "", nil, probe[:2]},
	} {
		rt := &fakeRuntime{functions: tt.functions}
		m, fn, err := LoadFirst(rt, "chunk_1.mlmodelc", CPUAndNeuralEngine, probe...)
		if fn != tt.want || (m != nil) != (tt.want != "") {
			t.Errorf("%s: LoadFirst = %v, %q, %v; want function %q", tt.name, m, fn, err, tt.want)
		}
		if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: error %v does not wrap %v", tt.name, err, tt.wantErr)
		}
		if tt.want == "" && err == nil {
			t.Errorf("%s: no error", tt.name)
		}
		if !slices.Equal(rt.loads, tt.tried) {
			t.Errorf("%s: tried %q, want %q", tt.name, rt.loads, tt.tried)
		}
	}
}

func TestLazy(t *testing.T) {
	rt := &fakeRuntime{functions: map[string]bool{"": true}}
	l := NewLazy(rt, "lmhead_v4.mlmodelc", LoadOptions{ComputeUnits: CPUOnly})
	if l.Loaded() || len(rt.loads) != 0 {
		t.Fatal("loaded before use")
	}
	for range 3 {
		if m, err := l.Model(); m == nil || err != nil {
			t.Fatalf("Model() = %v, %v", m, err)
		}
	}
	if len(rt.loads) != 1 {
		t.Errorf("%d loads, want 1", len(rt.loads))
	}
	if err := l.Close(); err != nil || l.Loaded() {
		t.Errorf("Close() = %v, Loaded() = %v", err, l.Loaded())
	}

	missing := NewLazy(rt, "chunk_1.mlmodelc", LoadOptions{Function: "verify_q4"})
	_, err1 := missing.Model()
	_, err2 := missing.Model()
	if !errors.Is(err1, ErrFunctionUnavailable) || err1 != err2 || len(rt.loads) != 2 {
		t.Errorf("failed load: %v, %v after %d loads; want the same ErrFunctionUnavailable, one attempt", err1, err2, len(rt.loads)-1)
	}
}

func ExampleLoadFirst() {
	rt := &fakeRuntime{functions: map[string]bool{"infer": true, "prefill_b8": true}}
	_, fn, err := LoadFirst(rt, "chunk_1.mlmodelc", CPUAndNeuralEngine, "prefill_b16", "prefill_b8")
	fmt.Println(fn, err)
	// Output: prefill_b8 <nil>
}
