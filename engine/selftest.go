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
// the runtime: the session's (speculation on == off, KV reuse == cold
// prefill), then the chain's (chain.Checks: batched prefill == token by
// token, rewind == fresh, restore == uninterrupted). open makes a fresh
// chain. Prompts and steps are fitted to the bundle's
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
	progress(fmt.Sprintf("reference replies for %d prompts, %d tokens each…", len(ids), steps))
	ref, err := chain.NewReference(base, ids, steps)
	if err != nil {
		return nil, err
	}
	if o.OnCopies != nil && ref.Decoded > 0 {
		o.OnCopies(float64(ref.CopiedBytes) / float64(ref.Decoded))
	}
	checks := append([]chain.Check{
		{Name: "speculation on == off", Run: func() (string, error) {
			verify := base.Capabilities().MaxVerify()
			if verify == 0 {
				return "", chain.Skip{Why: "the bundle cannot verify drafts"}
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
				if d := chain.FirstDiff(got[0], got[1]); d != "" {
					return fmt.Sprintf("prompt %d: %s", i+1, d), nil
				}
			}
			return "", nil
		}},
		{Name: "KV reuse == cold prefill", Run: func() (string, error) {
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
				want, err := chain.Greedy(base, s.LastPrompt(), len(got))
				if err != nil {
					return "", err
				}
				if d := chain.FirstDiff(want[:min(len(want), len(got))], got); d != "" {
					return fmt.Sprintf("turn %d: %s", i+1, d), nil
				}
			}
			return "", nil
		}},
	}, chain.Checks(base, open, ref)...)
	return chain.RunChecks(checks, progress, o.OnGate), nil
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
