package coreml

import (
	"slices"
	"sync"
)

// Backings is one model's memory of which outputs Core ML takes an output
// backing for. Core ML may decline a backing in two ways: silently (it
// writes its own buffer, and the output is not the backing: Decline), or
// by failing the prediction (the call then runs again without backings:
// Plan.Run). Either disables the backing of that one output, never those
// of the model's other outputs. After a failure with several backings
// offered, it cannot tell which was refused, so the following calls offer
// them one at a time (the others are copied meanwhile) until each is
// either refused for good or taken. The zero value offers every backing; a
// nil *Backings offers none. Safe for concurrent use.
type Backings struct {
	mu       sync.Mutex
	off      bool
	declined map[string]bool
	suspects []string // offered together in a call that failed; probed one per call
}

// NoBackings returns a policy that never offers a backing (a backend that
// cannot take them, or a test).
func NoBackings() *Backings { return &Backings{off: true} }

// Offer reports whether to offer the named output a backing now.
func (b *Backings) Offer(name string) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.off || b.declined[name] {
		return false
	}
	if len(b.suspects) > 0 {
		return name == b.suspects[0]
	}
	return true
}

// Decline records that the backend did not use the named output's backing
// (it returned its own buffer): it is copied from now on.
func (b *Backings) Decline(name string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.decline(name)
}

func (b *Backings) decline(name string) {
	if b.declined == nil {
		b.declined = map[string]bool{}
	}
	b.declined[name] = true
	b.suspects = slices.DeleteFunc(b.suspects, func(s string) bool { return s == name })
}

// refused records a call that failed with these backings offered and
// succeeded without them.
func (b *Backings) refused(offered []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(offered) == 1 {
		b.decline(offered[0])
		return
	}
	b.suspects = slices.Sorted(slices.Values(offered))
}

// accepted records a call that succeeded with these backings offered: a
// probed suspect is cleared.
func (b *Backings) accepted(offered []string) {
	if len(offered) != 1 {
		return // a normal call: nothing to learn, and no lock per token
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.suspects) > 0 && b.suspects[0] == offered[0] {
		b.suspects = b.suspects[1:]
	}
}

// Declined lists the outputs whose backing Core ML declined, sorted.
func (b *Backings) Declined() []string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for n := range b.declined {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Run plans and runs one prediction under b: plan makes the call's Plan
// with the backings offered (nil: none), run predicts. When a call that offered
// backings fails, it is planned without any and run again; if that works,
// b learns which backing to stop offering and Run succeeds.
func (p *Plan) Run(b *Backings, plan func(*Backings) error, run func() error) error {
	if err := plan(b); err != nil {
		return err
	}
	err := run()
	if err == nil || b == nil || len(p.offered) == 0 {
		if err == nil && b != nil {
			b.accepted(p.offered)
		}
		return err
	}
	offered := slices.Clone(p.offered)
	if err := plan(nil); err != nil {
		return err
	}
	if err := run(); err != nil {
		return err
	}
	b.refused(offered)
	return nil
}
