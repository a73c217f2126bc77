package engine

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// TestLoadReportsTheRestoredSettings: a checkpoint restores its settings,
// and the Cleared event of the load carries them, so a front end shows the
// settings in force rather than the ones it had.
func TestLoadReportsTheRestoredSettings(t *testing.T) {
	store := tempStore(t)
	saved := Settings{MaxTokens: 4, Speculation: SpecModeOff, DraftLen: 2, Thinking: true, System: "Be terse."}
	s := newSession(t, testbundle.Tiny(t, "r1"), saved)
	e := Start(s, ModelInfo{})
	defer e.Close()
	e.UseStore(store, 0)
	e.Send("hello")
	collect(t, e, isEnd)
	e.SaveCheckpoint("terse")
	collect(t, e, func(ev Event) bool { c, ok := ev.(Checkpoints); return ok && c.Op == "save" })
	e.SetSettings(Settings{MaxTokens: 4})
	collect(t, e, func(ev Event) bool { _, ok := ev.(SettingsChanged); return ok })
	e.Clear()
	var cleared Cleared
	collect(t, e, func(ev Event) bool { c, ok := ev.(Cleared); cleared = c; return ok })
	if cleared.Settings.Thinking || cleared.Settings.Speculation != SpecModeAuto {
		t.Fatalf("Cleared after /clear carries %+v, want the changed settings", cleared.Settings)
	}
	e.LoadCheckpoint("terse")
	collect(t, e, func(ev Event) bool { c, ok := ev.(Cleared); cleared = c; return ok })
	want, _ := CheckSettings(s.info(), DefaultSettings(), saved)
	if cleared.Settings != want || e.Settings() != want {
		t.Fatalf("after the load: event %+v, engine %+v, want %+v", cleared.Settings, e.Settings(), want)
	}
}

// TestCancelledReplyIsInterrupted: a reply cut short (a cancel; the engine
// closing when the connection drops) is marked, and the mark survives a
// checkpoint.
func TestCancelledReplyIsInterrupted(t *testing.T) {
	b := testbundle.Tiny(t, "v2")
	s := newSession(t, b, Settings{MaxTokens: 40})
	s.stops = nil
	var n int
	s.Send("Tell me everything.", func(ev Event) {
		if _, ok := ev.(*Delta); ok {
			if n++; n == 3 {
				s.Cancel()
			}
		}
	})
	msgs := s.Messages()
	if len(msgs) != 2 || !msgs[1].Interrupted || msgs[0].Interrupted {
		t.Fatalf("after a cancel: %+v", msgs)
	}
	cp, err := s.Checkpoint("cut", 0)
	if err != nil {
		t.Fatal(err)
	}
	c := newSession(t, b, Settings{})
	if err := c.Restore(cp); err != nil {
		t.Fatal(err)
	}
	if m := c.Messages(); len(m) != 2 || !m[1].Interrupted {
		t.Fatalf("restored: %+v", m)
	}
	reply(t, c, "Go on.")
	if m := c.Messages(); m[3].Interrupted {
		t.Fatal("a finished reply is marked interrupted")
	}
}

// TestFirstTokenHasNoLatency: the first token of a turn is the prefill's
// prediction (its time is the TTFT), so it is not a per-token latency;
// the minimum is a real decode time, not 0.
func TestFirstTokenHasNoLatency(t *testing.T) {
	for _, fam := range []string{"r1", "v2"} {
		s := newSession(t, testbundle.Tiny(t, fam), specOn(testbundle.Tiny(t, fam), Settings{MaxTokens: 12}))
		s.stops, s.now = nil, fakeClock()
		_, end := reply(t, s, "Copy: a b c a b c a b c.")
		m := end.(Finished).Metrics
		if len(m.PerTokenMillis) != m.GeneratedTokens-1 || m.PerTokenMinMs <= 0 || m.TTFTSeconds <= 0 {
			t.Fatalf("%s: %d latencies for %d tokens, min %.3f ms, TTFT %.3f s", fam, len(m.PerTokenMillis), m.GeneratedTokens, m.PerTokenMinMs, m.TTFTSeconds)
		}
	}
}

// scriptChain is a chain whose prediction after position p is
// script[p%len(script)]: a model that spells exactly what a test needs.
type scriptChain struct {
	script []int
	pos    int
	ctx    int
}

func (c *scriptChain) next() int                    { return c.script[c.pos%len(c.script)] }
func (c *scriptChain) Reset() error                 { c.pos = 0; return nil }
func (c *scriptChain) Prefill(t []int) (int, error) { c.pos += len(t); return c.next(), nil }
func (c *scriptChain) SetSoft([]chain.SoftSpan)     {}
func (c *scriptChain) Decode(int) (int, error)      { c.pos++; return c.next(), nil }
func (c *scriptChain) Verify([]int) ([]int, error)  { return nil, errUnsupported("verify") }
func (c *scriptChain) Rewind(p int) error           { c.pos = p; return nil }
func (c *scriptChain) Position() int                { return c.pos }
func (c *scriptChain) Logits() []float32            { return nil }
func (c *scriptChain) Close() error                 { return nil }
func (c *scriptChain) Capabilities() chain.Capabilities {
	return chain.Capabilities{Family: bundle.R1, Context: c.ctx, PrefillWidths: []int{1}}
}
func (c *scriptChain) Snapshot() (*chain.CacheState, error) {
	return &chain.CacheState{Family: bundle.R1, Position: c.pos}, nil
}
func (c *scriptChain) Restore(s *chain.CacheState) error { c.pos = s.Position; return nil }

type errUnsupported string

func (e errUnsupported) Error() string { return string(e) + " is not supported" }

// TestContinuationKeepsCharactersWhole: a reply cut at its token cap in
// the middle of a character spelled by byte tokens, checkpointed and
// continued in a new session, reads exactly as the uninterrupted reply —
// the character is whole, never two U+FFFD halves.
func TestContinuationKeepsCharactersWhole(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	tok := newSession(t, b, Settings{}).tok
	var script []int
	for _, piece := range []string{"a", "<0xC3>", "<0xA9>", "b", "<0xE2>", "<0x82>", "<0xAC>", "c"} {
		id, ok := tok.TokenID(piece)
		if !ok {
			t.Fatalf("the tiny tokenizer has no %s", piece)
		}
		script = append(script, id)
	}
	open := func() *Session {
		s, err := NewSession(b, &scriptChain{script: script, ctx: 512}, tok, Settings{Speculation: SpecModeOff})
		if err != nil {
			t.Fatal(err)
		}
		s.Memory, s.stops = nil, nil
		return s
	}
	text := func(run func(func(Event)) error) string {
		var sb strings.Builder
		if err := run(func(ev Event) {
			if d, ok := ev.(*Delta); ok {
				sb.WriteString(d.Text)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return sb.String()
	}
	const total = 16
	whole := open()
	whole.set.MaxTokens = total
	want := text(func(emit func(Event)) error { return whole.Send("Spell.", emit) })
	if !strings.Contains(want, "é") || !strings.Contains(want, "€") || !utf8.ValidString(want) || strings.ContainsRune(want, utf8.RuneError) {
		t.Fatalf("the scripted reply is %q", want)
	}
	for cut := 1; cut < total; cut++ {
		first := open()
		first.set.MaxTokens = cut
		got := text(func(emit func(Event)) error { return first.Send("Spell.", emit) })
		cp, err := first.Checkpoint("cut", 0)
		if err != nil {
			t.Fatal(err)
		}
		second := open()
		if err := second.Restore(cp); err != nil {
			t.Fatal(err)
		}
		second.set.MaxTokens = total - cut
		got += text(second.Continue)
		if got != want {
			t.Fatalf("cut after %d tokens: %q, want %q", cut, got, want)
		}
	}
}
