package chain

import (
	"errors"
	"fmt"
	"slices"
)

// Gate is one selftest verdict.
type Gate struct {
	Name   string
	Pass   bool
	Skip   bool   // not applicable to this bundle
	Detail string // the first difference, or why it was skipped
}

// Skip is the error a check returns when its gate does not apply to the
// bundle; Why says why.
type Skip struct{ Why string }

func (s Skip) Error() string { return "skipped: " + s.Why }

// Check is one named gate of a selftest. Run returns "" when the gate
// passes, the first difference when it fails, and an error when it could
// not run: a Skip when it does not apply.
type Check struct {
	Name string
	Run  func() (diff string, err error)
}

// Verdict runs the check and judges it.
func (c Check) Verdict() Gate {
	diff, err := c.Run()
	g := Gate{Name: c.Name, Pass: err == nil && diff == "", Detail: diff}
	var skip Skip
	switch {
	case errors.As(err, &skip):
		g.Pass, g.Skip, g.Detail = true, true, skip.Why
	case err != nil:
		g.Detail = err.Error()
	}
	return g
}

// RunChecks runs the checks in order, telling progress (when set) which
// one starts and onGate (when set) each verdict as soon as it is known.
func RunChecks(checks []Check, progress func(string), onGate func(Gate)) []Gate {
	gates := make([]Gate, 0, len(checks))
	for i, c := range checks {
		if progress != nil {
			progress(fmt.Sprintf("gate %d of %d: %s…", i+1, len(checks), c.Name))
		}
		g := c.Verdict()
		gates = append(gates, g)
		if onGate != nil {
			onGate(g)
		}
	}
	return gates
}

// Reference is what the chain's gates compare with: a fresh chain's
// greedy replies to the prompts.
type Reference struct {
	Prompts [][]int // token ids
	Replies [][]int // Steps tokens each, fewer where the context ends
	Steps   int
	// CopiedBytes is what the runtime copied across the seam while
	// decoding the replies (prefill left out), from its own meter, over
	// Decoded tokens; Decoded is 0 when the runtime keeps no meter.
	CopiedBytes int64
	Decoded     int
}

// NewReference has base reply greedily to every prompt, steps tokens
// each.
func NewReference(base Chain, prompts [][]int, steps int) (*Reference, error) {
	ref := &Reference{Prompts: prompts, Replies: make([][]int, len(prompts)), Steps: steps}
	for i, p := range prompts {
		var err error
		if ref.Replies[i], err = greedy(base, p, steps, ref); err != nil {
			return nil, err
		}
	}
	return ref, nil
}

// Greedy resets c, prefills prompt and decodes until it has n tokens or
// the context is full.
func Greedy(c Chain, prompt []int, n int) ([]int, error) { return greedy(c, prompt, n, nil) }

// greedy is Greedy, adding the seam copies of its decode steps to meter
// when one is given and the runtime keeps a meter.
func greedy(c Chain, prompt []int, n int, meter *Reference) ([]int, error) {
	if err := c.Reset(); err != nil {
		return nil, err
	}
	next, err := c.Prefill(prompt)
	if err != nil {
		return nil, err
	}
	out := []int{next}
	m0, metered := SeamCopies(c)
	for len(out) < n && c.Position() < c.Capabilities().Context {
		if next, err = c.Decode(next); err != nil {
			return nil, err
		}
		out = append(out, next)
	}
	if m1, _ := SeamCopies(c); metered && meter != nil {
		meter.CopiedBytes, meter.Decoded = meter.CopiedBytes+m1-m0, meter.Decoded+len(out)-1
	}
	return out, nil
}

// Checks are the gates of the chain itself, against ref, which base
// replied: batched prefill == token by token, rewind == fresh, checkpoint
// restore == uninterrupted. open makes a fresh chain of the same bundle.
// base is left wherever the last gate put it.
func Checks(base Chain, open func(Options) (Chain, error), ref *Reference) []Check {
	return []Check{
		{"batched prefill == token by token", func() (string, error) {
			c, err := open(Options{NoBatchedPrefill: true})
			if err != nil {
				return "", err
			}
			defer c.Close()
			for i, p := range ref.Prompts {
				got, err := Greedy(c, p, ref.Steps)
				if err != nil {
					return "", err
				}
				if d := FirstDiff(ref.Replies[i], got); d != "" {
					return fmt.Sprintf("prompt %d: %s", i+1, d), nil
				}
			}
			return "", nil
		}},
		{"rewind == fresh", func() (string, error) {
			for i, p := range ref.Prompts {
				if _, err := Greedy(base, p, ref.Steps); err != nil {
					return "", err
				}
				back := min(ref.Steps/2, base.Position()-base.Capabilities().MinRewind)
				target := base.Position() - back
				if target < len(p) {
					target, back = len(p), base.Position()-len(p)
				}
				if err := base.Rewind(target); err != nil {
					return "", err
				}
				want := ref.Replies[i]
				next := want[target-len(p)]
				got := slices.Clone(want[:target-len(p)+1])
				for len(got) < len(want) {
					var err error
					if next, err = base.Decode(next); err != nil {
						return "", err
					}
					got = append(got, next)
				}
				if d := FirstDiff(want, got); d != "" {
					return fmt.Sprintf("prompt %d, back %d: %s", i+1, back, d), nil
				}
			}
			return "", nil
		}},
		{"checkpoint restore == uninterrupted", func() (string, error) {
			c, err := open(Options{})
			if err != nil {
				return "", err
			}
			defer c.Close()
			for i, p := range ref.Prompts {
				first, err := Greedy(base, p, ref.Steps/2)
				if err != nil {
					return "", err
				}
				snap, err := base.Snapshot()
				if err != nil {
					return "", err
				}
				if err := c.Restore(snap); err != nil {
					return "", err
				}
				got, next := first, first[len(first)-1]
				for len(got) < len(ref.Replies[i]) {
					if next, err = c.Decode(next); err != nil {
						return "", err
					}
					got = append(got, next)
				}
				if d := FirstDiff(ref.Replies[i], got); d != "" {
					return fmt.Sprintf("prompt %d: %s", i+1, d), nil
				}
			}
			return "", nil
		}},
	}
}

// FirstDiff describes the first differing token, "" when equal.
func FirstDiff(want, got []int) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("token %d is %d, want %d", i, got[i], want[i])
		}
	}
	if len(want) != len(got) {
		return fmt.Sprintf("%d tokens, want %d", len(got), len(want))
	}
	return ""
}
