package engine

import (
	"errors"
	"fmt"
	"strconv"
)

// Settings are the generation settings of a session.
type Settings struct {
	System        string
	Thinking      bool
	MaxTokens     int      // 0 = until EOS or the context ends
	Speculation   SpecMode // on, off, auto
	DraftLen      int      // tokens copied per draft (bounded by the verify width)
	NGramMin      int
	NGramMax      int
	Sampling      Sampling
	ContextPolicy ContextPolicy
}

// SpecMode is the user's speculation choice.
type SpecMode string

const (
	SpecModeOn   SpecMode = "on"
	SpecModeOff  SpecMode = "off"
	SpecModeAuto SpecMode = "auto" // on, with the adaptive break-even policy
)

// Sampling parameters; the zero value is greedy.
type Sampling struct {
	Temperature       float64
	TopK              int
	TopP              float64
	MinP              float64
	RepetitionPenalty float64
	Seed              uint64
}

// Greedy reports whether these settings pick the argmax.
func (s Sampling) Greedy() bool { return s.Temperature == 0 }

// ContextPolicy says what happens when the conversation fills the context.
type ContextPolicy string

const (
	ContextStop       ContextPolicy = "stop"        // refuse with a clear message
	ContextDropOldest ContextPolicy = "drop-oldest" // the model stops seeing the oldest turns (never the system prompt; the conversation keeps them), re-prefill
	ContextCompact    ContextPolicy = "compact"     // the model summarises the oldest turns it sees (compact.go); the conversation keeps them
)

// DefaultSettings are the built-in defaults.
func DefaultSettings() Settings {
	return Settings{Speculation: SpecModeAuto, DraftLen: 4, NGramMin: 2, NGramMax: 3, ContextPolicy: ContextCompact,
		Sampling: Sampling{TopP: 1}}
}

// Settings errors. A *SettingError wraps one of them, so a front end can
// tell a value out of range from one the bundle cannot honour (a server
// answers both with 400 Bad Request, the CLI exits with status 2).
var (
	ErrSettingInvalid     = errors.New("invalid setting")
	ErrSettingUnsupported = errors.New("the bundle cannot honour this setting")
)

// SettingError is a refused setting: which one, the value asked for, and
// why — naming the capability the bundle lacks when that is the reason.
type SettingError struct {
	Setting    string // as users spell it: "draft length", "top-k", "speculation", …
	Value      string // the value asked for
	Capability string // the capability the bundle lacks ("logits", "verify width 4"); "" for a bad value
	Reason     string // the sentence after the value
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Setting, e.Value, e.Reason)
}

// Unwrap is ErrSettingUnsupported when the bundle lacks a capability, else
// ErrSettingInvalid.
func (e *SettingError) Unwrap() error {
	if e.Capability != "" {
		return ErrSettingUnsupported
	}
	return ErrSettingInvalid
}

// MaxNGram is the longest n-gram prompt lookup matches (pld.go).
const MaxNGram = 8

// MaxSystemBytes bounds a system prompt before anything tokenises it: a
// MiB is some 250k tokens of prose, about the largest context orchard
// opens (bundle.MaxContext). Whether a shorter one fits the bundle's
// context is the session's to say (SetSettings: it has the tokenizer).
const MaxSystemBytes = 1 << 20

// CheckSettings validates next against what the bundle described by info
// can do, given the settings cur now in force, and returns next with its
// defaults filled in. It is the one place settings are judged: the session
// calls it on every change, and front ends (the chat screen, orchard run, a
// server) may call it first to refuse a request before sending it.
//
// A bundle without logits always decodes greedily, so every sampling knob
// away from its neutral value is refused; a bundle without a verify
// function refuses speculation "on" and a change of the draft length; a
// draft longer than the widest verify call is refused.
func CheckSettings(info ModelInfo, cur, next Settings) (Settings, error) {
	n := next
	invalid := func(setting, value, reason string) (Settings, error) {
		return cur, &SettingError{Setting: setting, Value: value, Reason: reason}
	}
	switch n.Speculation {
	case SpecModeOn, SpecModeOff, SpecModeAuto:
	case "":
		n.Speculation = SpecModeAuto
	default:
		return invalid("speculation", strconv.Quote(string(n.Speculation)), "want on, off or auto")
	}
	switch n.ContextPolicy {
	case ContextStop, ContextDropOldest, ContextCompact:
	case "":
		n.ContextPolicy = ContextCompact
	default:
		return invalid("context policy", strconv.Quote(string(n.ContextPolicy)), "want compact, drop-oldest or stop")
	}
	sm := n.Sampling
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case n.DraftLen < 0 || n.DraftLen > 16:
		return invalid("draft length", strconv.Itoa(n.DraftLen), "want 1…16 tokens")
	case n.MaxTokens < 0:
		return invalid("max tokens", strconv.Itoa(n.MaxTokens), "want 0 (no cap) or more")
	case sm.Temperature < 0:
		return invalid("temperature", g(sm.Temperature), "want 0 (greedy) or more")
	case sm.TopK < 0:
		return invalid("top-k", strconv.Itoa(sm.TopK), "want 0 (off) or more")
	case sm.TopP < 0 || sm.TopP > 1:
		return invalid("top-p", g(sm.TopP), "want a number above 0 and at most 1")
	case sm.MinP < 0 || sm.MinP > 1:
		return invalid("min-p", g(sm.MinP), "want a number from 0 to 1")
	case sm.RepetitionPenalty < 0:
		return invalid("repetition penalty", g(sm.RepetitionPenalty), "want 1 (none) or another positive number")
	case n.NGramMin < 0 || n.NGramMin > MaxNGram:
		return invalid("ngram min", strconv.Itoa(n.NGramMin), fmt.Sprintf("want 1…%d tokens (0: the default, 2)", MaxNGram))
	case n.NGramMax < 0 || n.NGramMax > MaxNGram:
		return invalid("ngram max", strconv.Itoa(n.NGramMax), fmt.Sprintf("want ngram min…%d tokens: prompt lookup matches at most %d", MaxNGram, MaxNGram))
	case len(n.System) > MaxSystemBytes:
		return invalid("system prompt", fmt.Sprintf("of %s bytes", thousands(len(n.System))),
			fmt.Sprintf("orchard takes at most %d MiB, about the largest context it opens; shorten it", MaxSystemBytes>>20))
	}
	if n.DraftLen == 0 {
		n.DraftLen = 4
	}
	if n.NGramMin <= 0 {
		n.NGramMin = 2
	}
	if n.NGramMax < n.NGramMin {
		n.NGramMax = max(3, n.NGramMin)
	}

	bundle := "this bundle"
	if info.Family != "" {
		bundle = "this " + info.Family + " bundle"
	}
	unsupported := func(setting, value, capability, reason string) (Settings, error) {
		return cur, &SettingError{Setting: setting, Value: value, Capability: capability, Reason: reason}
	}
	if !info.Logits {
		argmax := bundle + " emits argmax token ids only (no logits), so it always decodes greedily; sampling needs a bundle with logits, such as stateful3-logits"
		switch {
		case sm.Temperature > 0:
			return unsupported("temperature", g(sm.Temperature), "logits", argmax)
		case sm.TopK > 0:
			return unsupported("top-k", strconv.Itoa(sm.TopK), "logits", argmax)
		case sm.TopP > 0 && sm.TopP < 1:
			return unsupported("top-p", g(sm.TopP), "logits", argmax)
		case sm.MinP > 0:
			return unsupported("min-p", g(sm.MinP), "logits", argmax)
		case sm.RepetitionPenalty > 0 && sm.RepetitionPenalty != 1:
			return unsupported("repetition penalty", g(sm.RepetitionPenalty), "logits", argmax)
		case sm.Seed != 0 && sm.Seed != cur.Sampling.Seed:
			return unsupported("seed", strconv.FormatUint(sm.Seed, 10), "logits", argmax)
		}
	}
	verify := 0
	for _, w := range info.VerifyWidths {
		verify = max(verify, w)
	}
	switch {
	case verify == 0 && n.Speculation == SpecModeOn:
		return unsupported("speculation", "on", "verify",
			bundle+" has no verify function, so drafts cannot be checked and speculation stays off")
	case verify == 0 && n.DraftLen != cur.DraftLen && cur.DraftLen != 0:
		return unsupported("draft length", strconv.Itoa(n.DraftLen), "verify",
			bundle+" has no verify function, so it never drafts")
	case verify > 0 && n.DraftLen > verify:
		return unsupported("draft length", strconv.Itoa(n.DraftLen), fmt.Sprintf("verify width %d", verify),
			fmt.Sprintf("%s verifies at most %d tokens per call (verify width %d); use %d or less", bundle, verify, verify, verify))
	}
	return n, nil
}
