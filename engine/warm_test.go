package engine

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

// testClock is a clock tests move: one millisecond per reading (a verify
// and a decode call each take one), plus whatever a slow call adds.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// slowFirstRuntime is the reference runtime whose models take cost on
// their first prediction, as Core ML does while it specializes a model
// for the device.
type slowFirstRuntime struct {
	*reference.Runtime
	clock *testClock
	cost  time.Duration
}

func (r *slowFirstRuntime) Load(path string, o coreml.LoadOptions) (coreml.Model, error) {
	m, err := r.Runtime.Load(path, o)
	if err != nil {
		return nil, err
	}
	return &slowFirstModel{Model: m, rt: r}, nil
}

type slowFirstModel struct {
	coreml.Model
	rt   *slowFirstRuntime
	used bool
}

func (m *slowFirstModel) Predict(in coreml.Features, st coreml.State, o *coreml.Outputs) (coreml.Features, error) {
	if !m.used {
		m.used = true
		m.rt.clock.advance(m.rt.cost)
	}
	return m.Model.Predict(in, st, o)
}

// slowSession opens r1 over a runtime whose first call of every model
// costs 30 s on the session's clock; with good drafts, speculation pays.
func slowSession(t *testing.T, warm bool) (*Session, *testClock, []chain.WarmStep) {
	t.Helper()
	b := testbundle.Tiny(t, "r1")
	clock := &testClock{t: time.Unix(0, 0)}
	rt := &slowFirstRuntime{Runtime: reference.New(), clock: clock, cost: 30 * time.Second}
	c, err := chain.Open(b, rt, chain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var steps []chain.WarmStep
	if warm {
		if steps, err = chain.Warm(c, nil, chain.WarmOptions{DraftLen: 4}, clock.now, nil); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(b, c, tok, Settings{Speculation: SpecModeAuto, MaxTokens: 60, DraftLen: 4})
	if err != nil {
		t.Fatal(err)
	}
	s.Memory, s.stops, s.now = nil, nil, clock.now
	ref := newSession(t, b, Settings{Speculation: SpecModeOff, MaxTokens: 60})
	ref.stops = nil
	reply(t, ref, "Go.")
	n := 0
	s.Drafter = oracleDrafter{truth: append(ref.Committed(), ref.pending), rounds: &n}
	return s, clock, steps
}

// TestColdCallsStayOutOfThePolicy: r1's first verify call loads and
// compiles the width-4 functions (30 s here). That call must not enter
// the policy's averages, or drafting that pays would stay paused for
// hundreds of tokens; with it left out, drafting stays on.
func TestColdCallsStayOutOfThePolicy(t *testing.T) {
	s, _, _ := slowSession(t, false)
	_, end := reply(t, s, "Go.")
	spec := end.(Finished).Metrics.Spec
	if s.policy.pauses != 0 || spec.Rounds < 8 {
		t.Fatalf("a slow first call paused drafting: %d pauses, %d verify rounds", s.policy.pauses, spec.Rounds)
	}
}

// TestWarmBeforeTheFirstWord: Warm runs every function r1 uses (decode,
// each prefill width, verify) before the session starts, so no call of
// the turn is cold and the first token comes without the 30 s.
func TestWarmBeforeTheFirstWord(t *testing.T) {
	s, _, steps := slowSession(t, true)
	var names []string
	for _, st := range steps {
		if st.Err != "" || st.Cold < 30 || st.Warm > 1 {
			t.Errorf("step %+v: want a cold first call (≥ 30 s) and a warm second", st)
		}
		names = append(names, st.Function)
	}
	joined := strings.Join(names, "; ")
	for _, want := range []string{"decode", "prefill32", "prefill16", "prefill8", "verify"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warm-up steps %q lack %s", joined, want)
		}
	}
	if s.chain.Position() != 0 {
		t.Fatalf("position %d after warm-up", s.chain.Position())
	}
	before := coldCalls(s.chain)
	_, end := reply(t, s, "Go.")
	m := end.(Finished).Metrics
	if coldCalls(s.chain) != before || m.TTFTSeconds > 1 {
		t.Errorf("after warm-up: %d cold calls in the turn, TTFT %.1f s", coldCalls(s.chain)-before, m.TTFTSeconds)
	}
	if s.policy.pauses != 0 {
		t.Errorf("%d pauses", s.policy.pauses)
	}
}

// TestWarmEveryFamily: each family warms its functions and its encoders,
// then gives the tokens a chain that was never warmed gives.
func TestWarmEveryFamily(t *testing.T) {
	for _, fam := range testbundle.Families() {
		b := testbundle.Tiny(t, fam)
		want := chaintest.Greedy(t, chaintest.Open(t, b, chain.Options{}), chaintest.Prompts(b.Geometry.Vocab)[5], 8)
		rt := reference.New()
		c, err := chain.Open(b, rt, chain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		enc := NewEncoders(b, rt, coreml.DefaultUnits)
		var lines []string
		steps, err := chain.Warm(c, enc.WarmTasks(), chain.WarmOptions{}, nil, func(s chain.WarmStep) { lines = append(lines, s.Line()) })
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) < 2 || len(lines) != len(steps) {
			t.Errorf("%s: %d steps, %d lines", fam, len(steps), len(lines))
		}
		for _, s := range steps {
			if s.Err != "" {
				t.Errorf("%s: %s", fam, s.Line())
			}
		}
		if len(b.Encoders) > 0 && !strings.Contains(strings.Join(lines, "\n"), "vision encoder") {
			t.Errorf("%s: the encoders were not warmed: %q", fam, lines)
		}
		if got := chaintest.Greedy(t, c, chaintest.Prompts(b.Geometry.Vocab)[5], 8); !equalInts(got, want) {
			t.Errorf("%s after warm-up: %v, want %v", fam, got, want)
		}
		c.Prefill([]int{2})
		if _, err := chain.Warm(c, nil, chain.WarmOptions{}, nil, nil); err != chain.ErrWarmPosition {
			t.Errorf("%s: warm-up of a used chain: %v", fam, err)
		}
	}
}

// unitsRuntime records the compute units each model folder is loaded with.
type unitsRuntime struct {
	*reference.Runtime
	mu    sync.Mutex
	units map[string]coreml.ComputeUnits
}

func (r *unitsRuntime) Load(path string, o coreml.LoadOptions) (coreml.Model, error) {
	r.mu.Lock()
	r.units[filepath.Base(path)] = o.ComputeUnits
	r.mu.Unlock()
	return r.Runtime.Load(path, o)
}

// TestEncoderUnits: the encoders run on cpuAndGPU unless placed otherwise,
// whatever the chunks use (the seed cards: the vision encoder is 7× faster
// there than on all, the audio tower overflows on the Neural Engine).
func TestEncoderUnits(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	rt := &unitsRuntime{Runtime: reference.New(), units: map[string]coreml.ComputeUnits{}}
	c, err := chain.Open(b, rt, chain.Options{ComputeUnits: coreml.CPUAndNeuralEngine})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	enc := NewEncoders(b, rt, coreml.DefaultUnits)
	if _, err := chain.Warm(c, enc.WarmTasks(), chain.WarmOptions{}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if v, a := rt.units["vision_fp16.mlmodelc"], rt.units["audio_fp16.mlmodelc"]; v != coreml.CPUAndGPU || a != coreml.CPUAndGPU {
		t.Errorf("encoders loaded on %s and %s, want cpuAndGPU for both", v, a)
	}
	enc.SetUnits(EncoderUnits{Vision: coreml.All})
	if _, err := chain.Warm(c, enc.WarmTasks(), chain.WarmOptions{}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if v, a := rt.units["vision_fp16.mlmodelc"], rt.units["audio_fp16.mlmodelc"]; v != coreml.All || a != coreml.CPUAndGPU {
		t.Errorf("after SetUnits: %s and %s, want all and cpuAndGPU", v, a)
	}
	if u := enc.Units(); u.Vision != coreml.All || u.Audio != coreml.CPUAndGPU {
		t.Errorf("Units() = %+v", u)
	}
}
