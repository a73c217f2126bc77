package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

// forceChain is a real chain whose prediction for the token at a position
// is replaced where force says: an argmax head that writes what a test
// needs (a media placeholder, say) while the cache stays the model's.
type forceChain struct {
	chain.Chain
	force map[int]int
}

func (c *forceChain) at(next int) int {
	if f, ok := c.force[c.Chain.Position()]; ok {
		return f
	}
	return next
}

func (c *forceChain) Prefill(t []int) (int, error) {
	n, err := c.Chain.Prefill(t)
	return c.at(n), err
}

func (c *forceChain) Decode(t int) (int, error) {
	n, err := c.Chain.Decode(t)
	return c.at(n), err
}

// failChain fails on request: a Prefill after feeding half its tokens, or
// the nth Decode from now, as Core ML may fail mid-turn.
type failChain struct {
	chain.Chain
	prefill bool
	decodes int // fail the decodes-th Decode from now; 0: never
}

var errInjected = errors.New("injected chain failure")

func (c *failChain) Prefill(t []int) (int, error) {
	if c.prefill {
		c.prefill = false
		if h := len(t) / 2; h > 0 {
			c.Chain.Prefill(t[:h])
		}
		return 0, errInjected
	}
	return c.Chain.Prefill(t)
}

func (c *failChain) Decode(t int) (int, error) {
	if c.decodes > 0 {
		if c.decodes--; c.decodes == 0 {
			return 0, errInjected
		}
	}
	return c.Chain.Decode(t)
}

// wrappedSession is a media session over b's chain as wrap makes it.
func wrappedSession(t testing.TB, b *bundle.Bundle, set Settings, wrap func(chain.Chain) chain.Chain) *Session {
	t.Helper()
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(b, wrap(chaintest.Open(t, b, chain.Options{})), tok, set)
	if err != nil {
		t.Fatal(err)
	}
	s.Memory, s.stops = nil, nil
	s.Media = NewEncoders(b, reference.New(), coreml.CPUAndGPU)
	return s
}

// TestReplyWithPlaceholderContinues: a reply that holds the image
// placeholder token (an argmax head can emit any id) no longer breaks the
// conversation for good ("the prompt's media spans do not match the
// attachments (span 1 at … holds 2 tokens)"): the placeholders the model
// wrote stay its own tokens, the picture's rows sit only where the
// template put its span, and the next turn is the oracle's — in the
// session, after a checkpoint round trip (--continue) and from a history
// entry kept as text.
func TestReplyWithPlaceholderContinues(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := Settings{MaxTokens: 6, Speculation: SpecModeOff}
	pic := writePNG(t, t.TempDir(), 5, 24, 24)
	file := MediaFile{Kind: MediaImage, Path: pic}
	mt, err := newSession(t, b, set).tok.MediaTokens(tokenizer.MediaImage)
	if err != nil {
		t.Fatal(err)
	}
	// Where the first reply begins: after the first turn's prompt.
	dry := wrappedSession(t, b, set, func(c chain.Chain) chain.Chain { return c })
	sendMedia(t, dry, "Look.", file)
	p := len(dry.LastPrompt())
	force := map[int]int{p: mt.Placeholder, p + 1: mt.Placeholder, p + 3: mt.Placeholder}
	forced := func(c chain.Chain) chain.Chain { return &forceChain{Chain: c, force: force} }

	s := wrappedSession(t, b, set, forced)
	first, _ := sendMedia(t, s, "Look.", file)
	if first[0] != mt.Placeholder || first[1] != mt.Placeholder {
		t.Fatalf("the first reply is %v, want it to start with two placeholders (%d)", first, mt.Placeholder)
	}
	cp, err := s.Checkpoint("placeholder", 0)
	if err != nil {
		t.Fatal(err)
	}
	asText, err := s.Checkpoint("placeholder", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := textOnly(asText); err != nil {
		t.Fatal(err)
	}
	want, _ := sendMedia(t, s, "And now?")
	prompt := s.LastPrompt()
	if !slices.Equal(prompt[p:p+len(first)], first) {
		t.Fatalf("the second prompt does not continue the reply's ids: %v, reply %v", prompt[p:p+len(first)], first)
	}
	if len(s.spans) != 1 || s.spans[0].Start >= p {
		t.Fatalf("media spans %+v: the reply's placeholders were taken for an attachment", s.spans)
	}
	enc, err := NewEncoders(b, reference.New(), coreml.CPUAndGPU).Encode(MediaImage, pic)
	if err != nil {
		t.Fatal(err)
	}
	oracle := chaintest.OracleGreedy(t, b, prompt, []chain.SoftSpan{{Start: s.spans[0].Start, Rows: enc.Rows[0]}}, len(want))
	if !slices.Equal(want, oracle) {
		t.Fatalf("second reply %v, oracle (rows at the picture's span only) %v", want, oracle)
	}

	for name, cp := range map[string]*checkpoints.Checkpoint{"checkpoint": cp, "history as text": asText} {
		t.Run(name, func(t *testing.T) {
			r := wrappedSession(t, b, set, forced)
			if err := r.Restore(cp); err != nil {
				t.Fatal(err)
			}
			got, _ := sendMedia(t, r, "And now?")
			if !slices.Equal(got, want) {
				t.Fatalf("after a restore %v, uninterrupted %v", got, want)
			}
		})
	}
}

// TestFailedSendChangesNothing: a send that fails — a refused picture,
// a message too long for the context, the chain failing mid-prefill or
// mid-reply — leaves the conversation, what the next turn continues and
// so the next turn's output exactly as they were: the reply to the next
// message is that of a session that never tried.
func TestFailedSendChangesNothing(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	set := Settings{MaxTokens: 6, Speculation: SpecModeOff}
	pic := writePNG(t, t.TempDir(), 6, 20, 20)
	setup := func(s *Session) {
		sendMedia(t, s, "Look.", MediaFile{Kind: MediaImage, Path: pic})
		sendMedia(t, s, "More.")
	}
	twin := wrappedSession(t, b, set, func(c chain.Chain) chain.Chain { return c })
	setup(twin)
	want, _ := sendMedia(t, twin, "Go on.")

	for _, tc := range []struct {
		name  string
		arm   func(*failChain)
		text  string
		files []MediaFile
	}{
		{"refused picture", nil, "look", []MediaFile{{Kind: MediaImage, Data: []byte("nope!"), Name: "notimage.png"}}},
		{"context full", nil, fmt.Sprint(slices.Repeat([]string{"word"}, 200)), nil},
		{"chain fails mid-prefill", func(c *failChain) { c.prefill = true }, "Tell me a long story about it.", nil},
		{"chain fails mid-reply", func(c *failChain) { c.decodes = 3 }, "Tell me a long story about it.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fc *failChain
			s := wrappedSession(t, b, set, func(c chain.Chain) chain.Chain { fc = &failChain{Chain: c}; return fc })
			setup(s)
			msgs, tail, turn := s.Messages(), s.tail(), s.turn
			if tc.arm != nil {
				tc.arm(fc)
			}
			var failed []Failed
			err := s.Send(tc.text, func(ev Event) {
				if f, ok := ev.(Failed); ok {
					failed = append(failed, f)
				}
			}, tc.files...)
			if err == nil || len(failed) != 1 || failed[0].Op != "send" {
				t.Fatalf("the send did not fail once: %v, %+v", err, failed)
			}
			if got := s.Messages(); fmt.Sprint(got) != fmt.Sprint(msgs) {
				t.Fatalf("messages after the failure %+v, before %+v", got, msgs)
			}
			if got := s.tail(); !slices.Equal(got.IDs, tail.IDs) || got.Pending != tail.Pending || got.ContOK != tail.ContOK ||
				got.PrevPrompt != tail.PrevPrompt || fmt.Sprint(got.Spans) != fmt.Sprint(tail.Spans) || s.turn != turn {
				t.Fatalf("state after the failure %+v (turn %d), before %+v (turn %d)", got, s.turn, tail, turn)
			}
			if tc.arm == nil && (s.chain.Position() != tail.Fed || len(s.committed) != tail.Fed) {
				t.Fatalf("a failure before the chain moved the cache: %d positions, %d before", s.chain.Position(), tail.Fed)
			}
			got, _ := sendMedia(t, s, "Go on.")
			if !slices.Equal(got, want) {
				t.Fatalf("the next reply %v, a session that never failed %v", got, want)
			}
		})
	}
}
