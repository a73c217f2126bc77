package engine

import "github.com/orchard-llm/orchard/engine/chain"

// adaptive decides, round by round, whether drafting pays. The published
// runtimes leave speculation on even when it loses; this policy measures
// the cost of a verify call against a decode call and the tokens a verify
// commits, and pauses drafting while the expected gain is below
// break-even, probing again after a while.
type adaptive struct {
	decodeSec   float64 // EWMA seconds per decode call
	verifySec   float64 // EWMA seconds per verify call
	perVerify   float64 // EWMA tokens committed per verify round
	nDecode     int
	nVerify     int
	pausedUntil int // token count at which to probe again
	pauses      int
}

const (
	ewma        = 0.2
	warmRounds  = 4    // verify rounds before judging
	probeAfter  = 48   // tokens to wait before probing again
	breakEvenBy = 1.05 // a verify round must beat decoding by 5% to be worth its overhead
)

// observeDecode records a decode call's time; a cold call (one that loaded
// or first ran a model: coldCalls changed across it) measured Core ML's
// compiling, not decoding, and is left out.
func (a *adaptive) observeDecode(sec float64, cold bool) {
	if cold {
		return
	}
	a.decodeSec = mix(a.decodeSec, sec, a.nDecode)
	a.nDecode++
}

// observeVerify records a verify round; a cold one is left out (r1's first
// verify loads and compiles the width-4 functions: seconds that would keep
// drafting paused for hundreds of tokens).
func (a *adaptive) observeVerify(sec float64, committed int, cold bool) {
	if cold {
		return
	}
	a.verifySec = mix(a.verifySec, sec, a.nVerify)
	a.perVerify = mix(a.perVerify, float64(committed), a.nVerify)
	a.nVerify++
}

func mix(old, v float64, n int) float64 {
	if n == 0 {
		return v
	}
	return old + ewma*(v-old)
}

// gain is the expected speed-up of a verify round over decoding: tokens
// per second drafting versus tokens per second decoding.
func (a *adaptive) gain() float64 {
	if a.verifySec <= 0 || a.decodeSec <= 0 {
		return 0
	}
	return (a.perVerify / a.verifySec) / (1 / a.decodeSec)
}

// allow reports whether to draft now; generated counts the session's
// tokens so pauses end on their own.
func (a *adaptive) allow(generated int) bool {
	if generated < a.pausedUntil {
		return false
	}
	if a.nVerify >= warmRounds && a.nDecode == 0 {
		return false // one plain step to learn what a decode costs
	}
	if a.nVerify >= warmRounds && a.gain() < breakEvenBy {
		a.pausedUntil = generated + probeAfter
		a.pauses++
		// Forget the verdict so the probe is judged on fresh rounds.
		a.nVerify = warmRounds - 2
		return false
	}
	return true
}

// paused reports whether the policy is currently holding drafting off.
func (a *adaptive) paused(generated int) bool { return generated < a.pausedUntil }

// coldCalls is the chain's count of calls that loaded or first ran a
// model (ColdCalls), 0 for chains that do not count them.
func coldCalls(c chain.Chain) int {
	if cc, ok := c.(interface{ ColdCalls() int }); ok {
		return cc.ColdCalls()
	}
	return 0
}
