package chain

import (
	"errors"
	"fmt"
	"time"
)

// Core ML loads a function's graph and specializes it for the device on
// its first prediction: seconds, against milliseconds for the next. Paid
// in the middle of a reply, that stall freezes the first word, and paid by
// r1's first verify call it made the speculation policy pause drafting for
// hundreds of tokens. Warm pays it at open for every function a chain will
// use, as the Swift runtime's preloadVerifyAssets does, and reports each.

// WarmStep is one function made ready: its first call (load and first
// prediction) and a second call, timed apart.
type WarmStep struct {
	Function string  `json:"function"`
	Index    int     `json:"index"` // 1-based, of Total
	Total    int     `json:"total"`
	Cold     float64 `json:"coldSeconds"`
	Warm     float64 `json:"warmSeconds"`
	Err      string  `json:"error,omitempty"` // the function is unusable; the chain goes on without it
}

// Line is the step as a progress line.
func (s WarmStep) Line() string {
	if s.Err != "" {
		return fmt.Sprintf("warm-up %d/%d: %s unavailable: %s", s.Index, s.Total, s.Function, s.Err)
	}
	return fmt.Sprintf("warm-up %d/%d: %s ready (first call %s, then %s)", s.Index, s.Total, s.Function, secs(s.Cold), secs(s.Warm))
}

func secs(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.0f ms", 1000*s)
	}
	return fmt.Sprintf("%.1f s", s)
}

// WarmOptions tune Warm.
type WarmOptions struct {
	// DraftLen is the speculation draft length in use: a chain whose
	// verify width varies (v2) warms the widths up to DraftLen+1. 0 warms
	// every width.
	DraftLen int
	// NoVerify leaves the verify functions unloaded (speculation is off;
	// under 7 GB the published app never loads them).
	NoVerify bool
}

// WarmTask is one function to make ready: Run makes one call of it.
type WarmTask struct {
	Name string
	Run  func() error
}

// warmer is a chain that lists its functions for Warm.
type warmer interface {
	warmTasks(o WarmOptions) []WarmTask
}

// ErrWarmPosition is returned by Warm on a chain that already holds tokens.
var ErrWarmPosition = errors.New("warm-up runs on a fresh chain (position 0)")

// Warm loads and runs, twice, every function the chain will use (decode,
// each prefill width, verify and its head) and then the extra tasks (the
// encoders'), before the first word, handing each step to progress as it completes; the chain
// is reset afterwards. A function that fails is reported and left out, as
// a failed load is elsewhere: only a failure to reset is an error. now
// times the calls (nil: the wall clock).
func Warm(c Chain, extra []WarmTask, o WarmOptions, now func() time.Time, progress func(WarmStep)) ([]WarmStep, error) {
	if c.Position() != 0 {
		return nil, ErrWarmPosition
	}
	if now == nil {
		now = time.Now
	}
	var tasks []WarmTask
	if w, ok := c.(warmer); ok {
		tasks = w.warmTasks(o)
	}
	tasks = append(tasks, extra...)
	steps := make([]WarmStep, 0, len(tasks))
	for i, t := range tasks {
		s := WarmStep{Function: t.Name, Index: i + 1, Total: len(tasks)}
		for call := range 2 {
			t0 := now()
			err := t.Run()
			d := now().Sub(t0).Seconds()
			if err != nil {
				s.Err = err.Error()
				break
			}
			if call == 0 {
				s.Cold = d
			} else {
				s.Warm = d
			}
		}
		steps = append(steps, s)
		if progress != nil {
			progress(s)
		}
	}
	if err := c.Reset(); err != nil {
		return steps, fmt.Errorf("warm-up: reset: %w", err)
	}
	return steps, nil
}

// warmTokens are the ids a warm-up call feeds: the BOS id, whose rows every
// table has.
func warmTokens(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 2
	}
	return out
}

func (c *r1Chain) warmTasks(o WarmOptions) []WarmTask {
	at0 := func(f func() error) func() error {
		return func() error { err := f(); c.pos = 0; return err }
	}
	tasks := []WarmTask{{"decode + lmhead", at0(func() error { _, err := c.Decode(2); return err })}}
	if c.plainOK {
		n := c.plainN
		tasks = append(tasks, WarmTask{c.fns[n] + " (plain block)", at0(func() error {
			blk, err := c.block(n, true)
			if err != nil {
				c.dropWidth(n, true, err)
				return err
			}
			_, err = c.runBlock(blk, warmTokens(n), n)
			return err
		})})
	}
	for _, w := range c.widths {
		tasks = append(tasks, WarmTask{c.fns[w], at0(func() error {
			blk, err := c.block(w, false)
			if err != nil {
				c.dropWidth(w, false, err)
				return err
			}
			_, err = c.runBlock(blk, warmTokens(w), w)
			return err
		})})
	}
	if c.verifyN > 0 && !o.NoVerify {
		n := c.verifyN
		tasks = append(tasks, WarmTask{c.fns[n] + " + " + c.b.Heads[1].Name + " (verify)", at0(func() error {
			_, err := c.Verify(warmTokens(n))
			return err
		})})
	}
	return tasks
}

func (c *s3Chain) warmTasks(WarmOptions) []WarmTask {
	at0 := func(f func() error) func() error {
		return func() error { err := f(); c.pos = 0; return err }
	}
	tasks := []WarmTask{{"T=1 (" + c.infer[0].fnName() + ") + chunk_3", at0(func() error { _, err := c.step(warmTokens(1), true); return err })}}
	if c.T > 0 {
		tasks = append(tasks, WarmTask{c.batch[0].fnName(), at0(func() error { _, err := c.step(warmTokens(c.T), false); return err })})
	}
	return tasks
}

func (c *v2Chain) warmTasks(o WarmOptions) []WarmTask {
	at0 := func(f func() error) func() error {
		return func() error { err := f(); c.pos = 0; return err }
	}
	tasks := []WarmTask{{"S=1 (decode) + lmhead", at0(func() error { _, err := c.Decode(2); return err })}}
	if !c.o.NoBatchedPrefill && c.maxS > 1 {
		tasks = append(tasks, WarmTask{fmt.Sprintf("S=%d (prefill)", c.maxS), at0(func() error {
			_, err := c.Prefill(warmTokens(c.maxS))
			return err
		})})
	}
	for _, w := range c.Capabilities().VerifyWidths {
		if o.NoVerify || w < 2 || w == c.maxS || (o.DraftLen > 0 && w > o.DraftLen+1) {
			continue
		}
		tasks = append(tasks, WarmTask{fmt.Sprintf("S=%d (verify)", w), at0(func() error {
			_, err := c.Verify(warmTokens(w))
			return err
		})})
	}
	return tasks
}

// fnName is the graph's function, "default" for a model's default one.
func (g *graph) fnName() string {
	if g.fn == "" {
		return "default function"
	}
	return g.fn
}
