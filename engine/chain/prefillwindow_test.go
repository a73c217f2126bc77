package chain_test

import (
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
)

// callsRuntime is the reference runtime counting predictions and keeping
// what chunk_1's batched prefill emits for each call (by current_pos).
type callsRuntime struct {
	*reference.Runtime
	mu     sync.Mutex
	calls  int
	hidden map[int][]byte // current_pos → chunk_1 prefill hidden_states_out
}

func (r *callsRuntime) Load(path string, o coreml.LoadOptions) (coreml.Model, error) {
	m, err := r.Runtime.Load(path, o)
	if err != nil {
		return nil, err
	}
	return &callsModel{Model: m, rt: r, watch: filepath.Base(path) == "chunk_1.mlmodelc" && o.Function != ""}, nil
}

type callsModel struct {
	coreml.Model
	rt    *callsRuntime
	watch bool
}

func (m *callsModel) Predict(in coreml.Features, st coreml.State, o *coreml.Outputs) (coreml.Features, error) {
	out, err := m.Model.Predict(in, st, o)
	m.rt.mu.Lock()
	defer m.rt.mu.Unlock()
	m.rt.calls++
	if err == nil && m.watch {
		h := out["hidden_states_out"]
		if k, ok := h.KeptHandle().(*coreml.Tensor); ok {
			h = k
		}
		m.rt.hidden[int(in["current_pos"].I32(0))] = slices.Clone(h.Data)
	}
	return out, err
}

// s3Prompt is a prompt of n ids crossing the tiny preset's 16-slot window.
func s3Prompt(b *bundle.Bundle, n int) []int {
	p := []int{2}
	for len(p) < n {
		p = append(p, 5+(len(p)*37)%(b.Geometry.Vocab-5))
	}
	return p
}

// TestS3BatchPastWindowIsCausal: past the sliding window a batch's row t
// must not see the rows after it (the published engine's mask lets it:
// §3.4). Changing the tokens after row t of a batch leaves what chunk_1
// emits for rows 0…t unchanged.
func TestS3BatchPastWindowIsCausal(t *testing.T) {
	b := testbundle.Tiny(t, "stateful3")
	W := b.Geometry.SlidingWindow
	run := func(prompt []int) map[int][]byte {
		rt := &callsRuntime{Runtime: reference.New(), hidden: map[int][]byte{}}
		c, err := chain.Open(b, rt, chain.Options{BatchPastWindow: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Prefill(prompt); err != nil {
			t.Fatal(err)
		}
		return rt.hidden
	}
	a := s3Prompt(b, 4*W)
	batch := W + 8 // a batch wholly past the window: rows W+8…W+15
	const t0 = 2   // rows 0…2 of that batch must not depend on what follows
	bb := slices.Clone(a)
	for i := batch + t0 + 1; i < len(bb); i++ {
		bb[i] = 5 + (bb[i]+11)%(b.Geometry.Vocab-5)
	}
	ha, hb := run(a), run(bb)
	if ha[batch] == nil || hb[batch] == nil {
		t.Fatalf("no batched call at position %d (batched at %v)", batch, slices.Sorted(maps.Keys(ha)))
	}
	row := len(ha[batch]) / 8
	if !slices.Equal(ha[batch][:(t0+1)*row], hb[batch][:(t0+1)*row]) {
		t.Errorf("rows 0…%d of the batch at %d changed with the tokens after them: a row saw later rows", t0, batch)
	}
	if slices.Equal(ha[batch][(t0+1)*row:], hb[batch][(t0+1)*row:]) {
		t.Error("the changed rows gave the same output: the test cannot tell")
	}
}

// TestS3BatchPastWindowCalls: past the window, batching takes about T×
// fewer chunk calls per prompt token; below it nothing changes; off (the
// default) stays token by token past W, exact against the oracle.
func TestS3BatchPastWindowCalls(t *testing.T) {
	b := testbundle.Tiny(t, "stateful3")
	prompt := s3Prompt(b, 6*b.Geometry.SlidingWindow)
	calls := func(o chain.Options, p []int) (int, int) {
		rt := &callsRuntime{Runtime: reference.New(), hidden: map[int][]byte{}}
		c, err := chain.Open(b, rt, o)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rt.calls = 0
		tok, err := c.Prefill(p)
		if err != nil {
			t.Fatal(err)
		}
		return rt.calls, tok
	}
	off, tokOff := calls(chain.Options{}, prompt)
	on, _ := calls(chain.Options{BatchPastWindow: true}, prompt)
	if on*3 > off {
		t.Errorf("%d calls batched past the window against %d token by token: want at least 3× fewer", on, off)
	}
	if want := chaintest.OracleGreedy(t, b, prompt, nil, 1)[0]; tokOff != want {
		t.Errorf("token by token past W: %d, the oracle %d", tokOff, want)
	}
	short := prompt[:b.Geometry.SlidingWindow]
	a, ta := calls(chain.Options{}, short)
	c, tc := calls(chain.Options{BatchPastWindow: true}, short)
	if a != c || ta != tc {
		t.Errorf("within the window: %d calls → %d, token %d → %d", a, c, ta, tc)
	}
	t.Logf("%d-token prompt, window %d: %d calls token by token past W, %d batched (%.2f → %.2f per prompt token)",
		len(prompt), b.Geometry.SlidingWindow, off, on, float64(off)/float64(len(prompt)), float64(on)/float64(len(prompt)))
}

// BenchmarkS3PrefillPastWindow: reference-runtime calls per prompt token
// for a prompt crossing the sliding window, token by token past W (the
// default, exact) against batched with the causal mask.
func BenchmarkS3PrefillPastWindow(b *testing.B) {
	bun := testbundle.Tiny(b, "stateful3")
	prompt := s3Prompt(bun, bun.Geometry.Context-8)
	for _, tt := range []struct {
		name string
		o    chain.Options
	}{{"token-by-token-past-W", chain.Options{}}, {"batched-past-W", chain.Options{BatchPastWindow: true}}} {
		b.Run(tt.name, func(b *testing.B) {
			rt := &callsRuntime{Runtime: reference.New(), hidden: map[int][]byte{}}
			c, err := chain.Open(bun, rt, tt.o)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			rt.calls = 0
			b.ResetTimer()
			for range b.N {
				if err := c.Reset(); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Prefill(prompt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rt.calls)/float64(b.N*len(prompt)), "calls/prompt-token")
		})
	}
}
