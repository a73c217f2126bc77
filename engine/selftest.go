package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/tokenizer"
)

// SelfTestPrompts are the fixed prompts of `orchard selftest`: a verbatim
// copy (speculation fires), an extraction and free prose.
var selfTestPrompts = []string{
	"Copy this list exactly: apple, mandarin, grape, peach, pear, strawberry, melon, watermelon, kiwi, banana.",
	"Extract every person, place, and date from this note as JSON with keys people, places, dates: Maya flew from Osaka to Reykjavik on March 3, 2026, and met Dr. Chen and Lena Novak at the Harpa concert hall on March 5, 2026.",
	"In one sentence, why do orchards need bees?",
}

// SelfTestPrompts returns the fixed prompts.
func SelfTestPrompts() []string { return slices.Clone(selfTestPrompts) }

// SelfTestOptions tune SelfTest.
type SelfTestOptions struct {
	Prompts []string // nil: SelfTestPrompts()
	Steps   int      // tokens compared per prompt (0: 48); cut to fit the context
	// Progress, when set, hears what is about to run and any adjustment
	// (prompts shortened to fit a small context), as sentences.
	Progress func(string)
	// OnGate, when set, receives each verdict as soon as it is known.
	OnGate func(chain.Gate)
	// OnCopies, when set, receives what the runtime really copied across
	// the seam per decoded token during the reference replies, from its
	// own meter (not called when the runtime keeps none).
	OnCopies func(bytesPerToken float64)
}

// SelfTest runs the gates a user runs on their Mac to trust a bundle and
// the runtime: speculation on == off, KV reuse == cold prefill, batched
// prefill == token by token, rewind == fresh, restore == uninterrupted.
// open makes a fresh chain. Prompts and steps are fitted to the bundle's
// context, so a small context runs shorter prompts rather than failing.
func SelfTest(b *bundle.Bundle, open func(chain.Options) (chain.Chain, error), tok *tokenizer.Tokenizer, o SelfTestOptions) ([]chain.Gate, error) {
	progress := o.Progress
	if progress == nil {
		progress = func(string) {}
	}
	prompts := o.Prompts
	if prompts == nil {
		prompts = SelfTestPrompts()
	}
	steps := o.Steps
	if steps <= 0 {
		steps = 48
	}
	base, err := open(chain.Options{})
	if err != nil {
		return nil, err
	}
	defer base.Close()
	tmpl, err := templateFor(b, tok)
	if err != nil {
		return nil, err
	}
	ctx := base.Capabilities().Context
	prompts, steps, note, err := fitSelfTest(tmpl, prompts, steps, ctx)
	if err != nil {
		return nil, err
	}
	if note != "" {
		progress(note)
	}
	var ids [][]int
	for _, p := range prompts {
		x, err := tmpl.Encode(tokenizer.Conversation{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: p}}})
		if err != nil {
			return nil, err
		}
		ids = append(ids, x)
	}
	var copied int64 // seam copies while decoding, and the decode steps
	var decoded int
	greedy := func(c chain.Chain, prompt []int, n int) ([]int, error) {
		if err := c.Reset(); err != nil {
			return nil, err
		}
		next, err := c.Prefill(prompt)
		if err != nil {
			return nil, err
		}
		out := []int{next}
		m0, metered := chain.SeamCopies(c)
		for len(out) < n && c.Position() < c.Capabilities().Context {
			if next, err = c.Decode(next); err != nil {
				return nil, err
			}
			out = append(out, next)
		}
		if m1, _ := chain.SeamCopies(c); metered {
			copied, decoded = copied+m1-m0, decoded+len(out)-1
		}
		return out, nil
	}
	var gates []chain.Gate
	add := func(name string, f func() (string, error)) {
		progress(fmt.Sprintf("gate %d of 5: %s…", len(gates)+1, name))
		detail, err := f()
		g := chain.Gate{Name: name, Pass: err == nil && detail == "", Detail: detail}
		if err != nil {
			g.Detail = err.Error()
		}
		if len(detail) > 5 && detail[:5] == "skip:" {
			g.Pass, g.Skip, g.Detail = true, true, detail[5:]
		}
		gates = append(gates, g)
		if o.OnGate != nil {
			o.OnGate(g)
		}
	}
	progress(fmt.Sprintf("reference replies for %d prompts, %d tokens each…", len(ids), steps))
	ref := make([][]int, len(ids))
	for i, p := range ids {
		if ref[i], err = greedy(base, p, steps); err != nil {
			return nil, err
		}
	}
	if o.OnCopies != nil && decoded > 0 {
		o.OnCopies(float64(copied) / float64(decoded))
	}

	add("speculation on == off", func() (string, error) {
		verify := base.Capabilities().MaxVerify()
		if verify == 0 {
			return "skip: the bundle cannot verify drafts", nil
		}
		for i, p := range prompts {
			var got [2][]int
			for j, mode := range []SpecMode{SpecModeOff, SpecModeOn} {
				c, err := open(chain.Options{})
				if err != nil {
					return "", err
				}
				s, err := NewSession(b, c, tok, Settings{Speculation: mode, MaxTokens: steps, DraftLen: min(8, verify), NGramMin: 1, NGramMax: 3})
				if err != nil {
					c.Close()
					return "", err
				}
				s.Memory = nil
				err = s.Send(p, func(e Event) {
					if d, ok := e.(*Delta); ok {
						got[j] = append(got[j], d.Tokens...)
					}
				})
				c.Close()
				if err != nil {
					return "", err
				}
			}
			if d := firstDiff(got[0], got[1]); d != "" {
				return fmt.Sprintf("prompt %d: %s", i+1, d), nil
			}
		}
		return "", nil
	})
	add("KV reuse == cold prefill", func() (string, error) {
		c, err := open(chain.Options{})
		if err != nil {
			return "", err
		}
		defer c.Close()
		s, err := NewSession(b, c, tok, Settings{Speculation: SpecModeOff, MaxTokens: steps / 2})
		if err != nil {
			return "", err
		}
		s.Memory = nil
		for i, p := range prompts {
			var got []int
			if err := s.Send(p, func(e Event) {
				if d, ok := e.(*Delta); ok {
					got = append(got, d.Tokens...)
				}
			}); err != nil {
				return "", err
			}
			want, err := greedy(base, s.LastPrompt(), len(got))
			if err != nil {
				return "", err
			}
			if d := firstDiff(want[:min(len(want), len(got))], got); d != "" {
				return fmt.Sprintf("turn %d: %s", i+1, d), nil
			}
		}
		return "", nil
	})
	add("batched prefill == token by token", func() (string, error) {
		c, err := open(chain.Options{NoBatchedPrefill: true})
		if err != nil {
			return "", err
		}
		defer c.Close()
		for i, p := range ids {
			got, err := greedy(c, p, steps)
			if err != nil {
				return "", err
			}
			if d := firstDiff(ref[i], got); d != "" {
				return fmt.Sprintf("prompt %d: %s", i+1, d), nil
			}
		}
		return "", nil
	})
	add("rewind == fresh", func() (string, error) {
		for i, p := range ids {
			if _, err := greedy(base, p, steps); err != nil {
				return "", err
			}
			back := min(steps/2, base.Position()-base.Capabilities().MinRewind)
			target := base.Position() - back
			if target < len(p) {
				target, back = len(p), base.Position()-len(p)
			}
			if err := base.Rewind(target); err != nil {
				return "", err
			}
			next := ref[i][target-len(p)]
			got := slices.Clone(ref[i][:target-len(p)+1])
			for len(got) < len(ref[i]) {
				if next, err = base.Decode(next); err != nil {
					return "", err
				}
				got = append(got, next)
			}
			if d := firstDiff(ref[i], got); d != "" {
				return fmt.Sprintf("prompt %d, back %d: %s", i+1, back, d), nil
			}
		}
		return "", nil
	})
	add("checkpoint restore == uninterrupted", func() (string, error) {
		c, err := open(chain.Options{})
		if err != nil {
			return "", err
		}
		defer c.Close()
		for i, p := range ids {
			half := steps / 2
			first, err := greedy(base, p, half)
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
			for len(got) < len(ref[i]) {
				if next, err = c.Decode(next); err != nil {
					return "", err
				}
				got = append(got, next)
			}
			if d := firstDiff(ref[i], got); d != "" {
				return fmt.Sprintf("prompt %d: %s", i+1, d), nil
			}
		}
		return "", nil
	})
	return gates, nil
}

// fitSelfTest shortens the prompts (whole words from the end) and the
// steps so that every gate fits the context: one prompt and its reply, and
// the KV reuse gate's conversation of every prompt with a reply of steps/2
// tokens. note says what was cut, "" when nothing was.
func fitSelfTest(tmpl *tokenizer.Template, prompts []string, steps, ctx int) ([]string, int, string, error) {
	n := max(len(prompts), 1)
	fitSteps := max(4, min(steps, ctx/4))
	// Per-turn overhead beyond the prompt's own encoding: the reply's end
	// of turn and the next turn's markers.
	const overhead = 6
	limit := (ctx-1)/n - fitSteps/2 - overhead
	out := make([]string, len(prompts))
	cut := 0
	for i, p := range prompts {
		words := strings.Fields(p)
		for {
			text := strings.Join(words, " ")
			ids, err := tmpl.Encode(tokenizer.Conversation{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: text}}})
			if err != nil {
				return nil, 0, "", err
			}
			if len(ids) <= limit && len(ids)+fitSteps < ctx {
				out[i] = text
				break
			}
			if len(words) <= 1 {
				return nil, 0, "", fmt.Errorf("selftest: the context of %d positions is too small for any prompt (one word is %d tokens)", ctx, len(ids))
			}
			words = words[:len(words)-1]
			if len(words) == len(strings.Fields(p))-1 {
				cut++
			}
		}
	}
	var notes []string
	if cut > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d prompts shortened", cut, len(prompts)))
	}
	if fitSteps != steps {
		notes = append(notes, fmt.Sprintf("%d tokens compared per prompt instead of %d", fitSteps, steps))
	}
	if len(notes) == 0 {
		return out, steps, "", nil
	}
	return out, fitSteps, fmt.Sprintf("the context holds %d positions: %s", ctx, strings.Join(notes, ", ")), nil
}

// firstDiff describes the first differing token, "" when equal.
func firstDiff(want, got []int) string {
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
