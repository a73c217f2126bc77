package chain_test

import (
	"fmt"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
)

// unitRuntime declares every input of the reference models with an extra
// leading unit dimension — as a published graph might declare [1,H] where
// the docs say [H] — and strips it again before predicting.
type unitRuntime struct{ rt *reference.Runtime }

func (u unitRuntime) Alloc(shape []int, dt coreml.DType) *coreml.Tensor { return u.rt.Alloc(shape, dt) }

func (u unitRuntime) Load(path string, o coreml.LoadOptions) (coreml.Model, error) {
	m, err := u.rt.Load(path, o)
	if err != nil {
		return nil, err
	}
	d := m.Description()
	in := map[string]coreml.TensorSpec{}
	for name, s := range d.Inputs {
		n := coreml.TensorSpec{DType: s.DType, Shape: append([]int{1}, s.Shape...)}
		if s.Ranges != nil {
			n.Ranges = append([][2]int{{1, 1}}, s.Ranges...)
		}
		in[name] = n
	}
	return &unitModel{Model: m, d: coreml.Description{Inputs: in, Outputs: d.Outputs, States: d.States}, inner: d}, nil
}

type unitModel struct {
	coreml.Model
	d, inner coreml.Description
}

func (m *unitModel) Description() coreml.Description { return m.d }

func (m *unitModel) Predict(in coreml.Features, st coreml.State, o *coreml.Outputs) (coreml.Features, error) {
	if err := m.d.CheckInputs(in); err != nil {
		return nil, err
	}
	stripped := coreml.Features{}
	for name, t := range in {
		stripped[name] = t.ViewAs(&coreml.Tensor{}, t.Shape[1:])
	}
	return m.Model.Predict(stripped, st, o)
}

// TestDeclaredRankDiffers: every family runs, token-equal to the oracle,
// when the graphs declare their inputs with an extra leading unit
// dimension; the driver's tensors are viewed under the declared shapes.
func TestDeclaredRankDiffers(t *testing.T) {
	for _, fam := range testbundle.Families() {
		b := testbundle.Tiny(t, fam)
		c, err := chain.Open(b, unitRuntime{reference.New()}, chain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := chaintest.Prompts(b.Geometry.Vocab)[5]
		got := chaintest.Greedy(t, c, p, 12)
		c.Close()
		if want := chaintest.OracleGreedy(t, b, p, nil, 12); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, want %v", fam, got, want)
		}
	}
}
