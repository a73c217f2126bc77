package engine

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

// nullRuntime loads a twin's contract without weights and predicts
// nothing: every output is a preallocated zero tensor. With it, a chain
// measures only orchard's own work between graph calls.
type nullRuntime struct{}

func (nullRuntime) Alloc(shape []int, dt coreml.DType) *coreml.Tensor {
	return coreml.NewTensor(shape, dt)
}

func (nullRuntime) Load(path string, o coreml.LoadOptions) (coreml.Model, error) {
	t, err := reference.ReadTwin(path)
	if err != nil {
		return nil, err
	}
	fn := o.Function
	if fn == "" {
		fn = t.DefaultFunction
	}
	d, err := reference.Describe(t, fn)
	if err != nil {
		return nil, err
	}
	return &nullModel{d: d, out: map[string]*coreml.Tensor{}}, nil
}

type nullModel struct {
	d   coreml.Description
	out map[string]*coreml.Tensor
	res coreml.Features // reused, so the null runtime allocates nothing itself
}

func (m *nullModel) Description() coreml.Description { return m.d }
func (m *nullModel) Close() error                    { return nil }
func (m *nullModel) NewState() (coreml.State, error) { return nullState{}, nil }

func (m *nullModel) Predict(in coreml.Features, st coreml.State) (coreml.Features, error) {
	if m.res == nil {
		m.res = make(coreml.Features, len(m.d.Outputs))
	}
	res := m.res
	rows := 0
	if h := in["hidden_in"]; h != nil {
		rows = h.Shape[0]
	} else if h := in["hidden"]; h != nil && len(h.Shape) == 2 {
		rows = h.Shape[0]
	}
	for name, sp := range m.d.Outputs {
		t := m.out[name]
		if t == nil || (sp.Ranges != nil && t.Shape[0] != rows) {
			shape := append([]int(nil), sp.Shape...)
			if sp.Ranges != nil {
				shape[0] = rows
			}
			t = coreml.NewTensor(shape, sp.DType)
			m.out[name] = t
		}
		res[name] = t
	}
	return res, nil
}

type nullState struct{}

func (nullState) Read(string) (*coreml.Tensor, error) { return nil, fmt.Errorf("null state") }
func (nullState) Write(string, *coreml.Tensor) error  { return nil }
func (nullState) Close() error                        { return nil }

// shapeBundles are E2B/E4B-geometry bundles without weights, made once.
var shapeBundles sync.Map

func shapeBundle(tb testing.TB, family, preset string) *bundle.Bundle {
	tb.Helper()
	key := family + "/" + preset
	type entry struct {
		once sync.Once
		dir  string
		err  error
	}
	e, _ := shapeBundles.LoadOrStore(key, &entry{})
	en := e.(*entry)
	en.once.Do(func() {
		root, err := mkdirTemp("orchard-shape-")
		if err != nil {
			en.err = err
			return
		}
		en.dir, en.err = reference.Synthesize(reference.SynthOptions{Family: family, Preset: preset, Out: root, NoWeights: true})
	})
	if en.err != nil {
		tb.Fatal(en.err)
	}
	b, err := bundle.Open(en.dir)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

var hostCases = []struct{ name, family, preset string }{
	{"r1-e2b", "r1", "e2b"}, {"v2-e4b", "v2", "e4b"}, {"stateful3-e2b", "stateful3", "e2b"},
}

// BenchmarkHostOverhead is everything orchard does per decoded token
// between graph calls — embedding and PLE dequant, masks, RoPE rows, KV
// hand-over, feature plumbing — at real E2B/E4B geometry with a null
// runtime. Target: under 100 µs and zero allocations per token.
func BenchmarkHostOverhead(b *testing.B) {
	for _, c := range hostCases {
		b.Run(c.name, func(b *testing.B) {
			bd := shapeBundle(b, c.family, c.preset)
			ch, err := Open(bd, nullRuntime{}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer ch.Close()
			if _, err := ch.Prefill([]int{2, 3}); err != nil {
				b.Fatal(err)
			}
			ctx := ch.Capabilities().Context
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if ch.Position() >= ctx-1 {
					b.StopTimer()
					ch.Reset()
					ch.Prefill([]int{2, 3})
					b.StartTimer()
				}
				if _, err := ch.Decode(5 + i%400); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHostPathAllocatesNothing: a decode step of every family allocates
// nothing on orchard's side once warm.
func TestHostPathAllocatesNothing(t *testing.T) {
	if os.Getenv("ORCHARD_SKIP_SHAPE") != "" {
		t.Skip("ORCHARD_SKIP_SHAPE set")
	}
	for _, c := range hostCases {
		bd := shapeBundle(t, c.family, c.preset)
		ch, err := Open(bd, nullRuntime{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Prefill([]int{2, 3}); err != nil {
			t.Fatal(err)
		}
		i := 0
		allocs := testing.AllocsPerRun(50, func() {
			i++
			if _, err := ch.Decode(5 + i); err != nil {
				t.Fatal(err)
			}
		})
		ch.Close()
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per decoded token", c.name, allocs)
		}
	}
}

// BenchmarkSessionPerToken is the whole per-token path of a turn — host
// inputs, chain plumbing, stop checks, detokenizing, metrics and the
// event — over the null runtime at E2B geometry, per generated token.
func BenchmarkSessionPerToken(b *testing.B) {
	bd := shapeBundle(b, "r1", "e2b")
	tok, err := tokenizer.Load(bd.Tokenizer)
	if err != nil {
		b.Fatal(err)
	}
	ch, err := Open(bd, nullRuntime{}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ch.Close()
	const perTurn = 1024 // a new conversation (zeroing 36 MB of cache) only every 1,024 tokens
	s, err := NewSession(bd, ch, tok, Settings{MaxTokens: perTurn, Speculation: SpecModeOff})
	if err != nil {
		b.Fatal(err)
	}
	s.Memory, s.stops = nil, nil
	if err := s.Send("warm up", func(Event) {}); err != nil { // first-use buffers
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += perTurn {
		s.Clear()
		if err := s.Send("hi", func(Event) {}); err != nil {
			b.Fatal(err)
		}
	}
}
