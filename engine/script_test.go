package engine

import (
	"slices"
	"strings"
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

// The scripted bundle (reference.Scripted) through the real engine: the
// template, the tokenizer, every family's chain and KV cache, speculation
// and checkpoints, with the head emitting the script's tokens.

const testScript = `{"replies":[
 {"match":"(?i)^hello","reply":"Hi! Grüße 🍎"},
 {"match":"(?i)repeat","reply":"one two, one two, one two, one two, one two."},
 {"match":"^Second","reply":"The second answer."}
]}`

// scriptedRuntime is a reference runtime playing script on bundle b.
func scriptedRuntime(t testing.TB, b *bundle.Bundle, script string) *reference.Scripted {
	t.Helper()
	return chaintest.Scripted(t, b, script)
}

// scriptedSession is newSession over a scripted runtime.
func scriptedSession(t testing.TB, b *bundle.Bundle, rt *reference.Scripted, set Settings) *Session {
	t.Helper()
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := chain.Open(b, rt, chain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := NewSession(b, c, tok, set)
	if err != nil {
		t.Fatal(err)
	}
	s.Memory = nil
	return s
}

// replyText runs a turn and returns its text and metrics.
func replyText(t testing.TB, s *Session, text string) (string, TurnMetrics) {
	t.Helper()
	_, end := reply(t, s, text)
	f, ok := end.(Finished)
	if !ok {
		t.Fatalf("turn %q ended with %#v", text, end)
	}
	return f.Reply, f.Metrics
}

// TestScriptedReplies: on every family, matched messages get their reply
// byte for byte (multi-byte characters included) and end the turn with
// the end-of-turn token; an unmatched message gets what the weights say,
// the same tokens as an unscripted runtime's; later turns reuse the cache
// and a cold chain fed the same prompt agrees.
func TestScriptedReplies(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			rt := scriptedRuntime(t, b, testScript)
			s := scriptedSession(t, b, rt, Settings{MaxTokens: 24, System: "Be brief."})

			got, m := replyText(t, s, "hello there")
			if want := "Hi! Grüße 🍎"; got != want || m.FinishReason != "eos" {
				t.Fatalf("turn 1: %q (%s), want %q (eos)", got, m.FinishReason, want)
			}
			got, m = replyText(t, s, "Second question")
			if got != "The second answer." || m.FinishReason != "eos" {
				t.Fatalf("turn 2: %q (%s)", got, m.FinishReason)
			}
			if m.ReusedTokens == 0 {
				t.Error("turn 2 reused nothing of the cache")
			}
			// Unmatched: the weights speak, exactly as without a script.
			plain := newSession(t, b, Settings{MaxTokens: 8})
			wantIDs, _ := reply(t, plain, "nothing matches this")
			one := scriptedSession(t, b, scriptedRuntime(t, b, testScript), Settings{MaxTokens: 8})
			if gotIDs, _ := reply(t, one, "nothing matches this"); !slices.Equal(gotIDs, wantIDs) {
				t.Fatalf("unmatched message: scripted runtime %v, plain %v", gotIDs, wantIDs)
			}
			// A cold scripted chain fed the warm turn's prompt agrees.
			held := len(s.Committed())
			warm, end := reply(t, s, "hello again")
			if f := end.(Finished); f.Metrics.ReusedTokens != held {
				t.Errorf("turn 3 reused %d of %d cached tokens", f.Metrics.ReusedTokens, held)
			}
			cold, err := chain.Open(b, scriptedRuntime(t, b, testScript), chain.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer cold.Close()
			if want := chaintest.Greedy(t, cold, s.lastPrompt, len(warm)); !slices.Equal(warm, want) {
				t.Fatalf("turn 3: warm %v, cold %v", warm, want)
			}
		})
	}
}

// TestScriptedSpeculation: a repetitive scripted reply comes back the
// same with speculation on and off, token for token, and prompt-lookup
// drafts of it are accepted (the verify calls run the real chain; the head
// answers each row from the ids fed, drafts included).
func TestScriptedSpeculation(t *testing.T) {
	for _, fam := range []string{"r1", "v2"} {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			off := scriptedSession(t, b, scriptedRuntime(t, b, testScript), Settings{Speculation: SpecModeOff, MaxTokens: 40})
			on := scriptedSession(t, b, scriptedRuntime(t, b, testScript), specOn(b, Settings{MaxTokens: 40}))
			for _, msg := range []string{"please repeat", "hello"} {
				wantIDs, wantEnd := reply(t, off, msg)
				gotIDs, gotEnd := reply(t, on, msg)
				want, got := wantEnd.(Finished), gotEnd.(Finished)
				if !slices.Equal(gotIDs, wantIDs) || got.Reply != want.Reply {
					t.Fatalf("%q: speculation on %q, off %q", msg, got.Reply, want.Reply)
				}
				if msg == "please repeat" {
					if !strings.HasPrefix(got.Reply, "one two, one two") {
						t.Fatalf("not the scripted reply: %q", got.Reply)
					}
					sp := got.Metrics.Spec
					if sp.Rounds == 0 || sp.PLDRate <= 0 || sp.Accepted <= sp.Rounds {
						t.Fatalf("drafts of a repetitive reply not accepted: %+v", sp)
					}
					t.Logf("%s: %d verify rounds, %d of %d drafted accepted, PLD rate %.2f", fam, sp.Rounds, sp.Accepted, sp.Drafted, sp.PLDRate)
				}
			}
			if !slices.Equal(on.Committed(), off.Committed()) {
				t.Fatal("the caches differ after the turns")
			}
		})
	}
}

// TestScriptedSampling: a logits bundle sampling at a temperature still
// says the scripted reply (every other logit is fp16's lowest), and an
// unmatched message samples the same tokens as without a script.
func TestScriptedSampling(t *testing.T) {
	b := testbundle.Tiny(t, "stateful3-logits")
	set := Settings{MaxTokens: 16, Sampling: Sampling{Temperature: 1.5, TopP: 0.95, MinP: 0.01, RepetitionPenalty: 1.3, Seed: 5}}
	s := scriptedSession(t, b, scriptedRuntime(t, b, testScript), set)
	if got, _ := replyText(t, s, "Hello"); got != "Hi! Grüße 🍎" {
		t.Fatalf("sampled scripted reply %q", got)
	}
	one := scriptedSession(t, b, scriptedRuntime(t, b, testScript), set)
	plain := newSession(t, b, set)
	got, _ := reply(t, one, "nothing matches")
	want, _ := reply(t, plain, "nothing matches")
	if !slices.Equal(got, want) {
		t.Fatalf("unmatched, sampled: scripted runtime %v, plain %v", got, want)
	}
}

// TestScriptedCheckpoint: a checkpoint saved between turns and restored —
// into a runtime that has since run another conversation, or into a fresh
// one — continues with the scripted replies, as the uninterrupted session
// does (the next turn feeds its whole user message). Regenerating the
// restored reply feeds only the last prompt token: where the runtime has
// seen the conversation's ids (same process) the script speaks; in a
// fresh runtime those ids are unknown and the weights answer, exactly as
// an unscripted runtime would — unless the chain must feed everything
// again (stateful3's wrapped ring), which teaches it the ids.
func TestScriptedCheckpoint(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			store := tempStore(t)
			rt := scriptedRuntime(t, b, testScript)
			set := Settings{MaxTokens: 16, System: "Be terse."}
			a := scriptedSession(t, b, rt, set)
			replyText(t, a, "hello there")
			saveTo(t, store, a, "mid")
			want, _ := replyText(t, a, "Second question")
			if want != "The second answer." {
				t.Fatalf("uninterrupted: %q", want)
			}
			load := func() *checkpoints.Checkpoint {
				cp, err := store.Load("mid", b.Identity)
				if err != nil {
					t.Fatal(err)
				}
				return cp
			}
			for _, same := range []bool{true, false} {
				r := rt
				if !same {
					r = scriptedRuntime(t, b, testScript)
				}
				c := scriptedSession(t, b, r, set)
				replyText(t, c, "something else entirely") // a conversation to replace
				if err := c.Restore(load()); err != nil {
					t.Fatal(err)
				}
				if got, m := replyText(t, c, "Second question"); got != want || m.ReusedTokens == 0 {
					t.Fatalf("same runtime %v: after restore %q (reused %d), uninterrupted %q", same, got, m.ReusedTokens, want)
				}
				// Regenerate the restored reply.
				if err := c.Restore(load()); err != nil {
					t.Fatal(err)
				}
				gotIDs, end := regenerate(t, c)
				f := end.(Finished)
				scripted := f.Reply == "Hi! Grüße 🍎"
				fedAll := f.Metrics.ReusedTokens == 0
				switch {
				case same || fedAll:
					if !scripted {
						t.Fatalf("same runtime %v, reused %d: regenerated %q, want the scripted reply", same, f.Metrics.ReusedTokens, f.Reply)
					}
				default:
					p := newSession(t, b, set)
					if err := p.Restore(load()); err != nil {
						t.Fatal(err)
					}
					wantIDs, _ := regenerate(t, p)
					if !slices.Equal(gotIDs, wantIDs) {
						t.Fatalf("fresh runtime: regenerated %v (%q), the weights say %v", gotIDs, f.Reply, wantIDs)
					}
				}
				t.Logf("same runtime %v: regenerate reused %d tokens, scripted %v", same, f.Metrics.ReusedTokens, scripted)
			}
		})
	}
}

// regenerate runs Regenerate and returns the ids and the final event.
func regenerate(t testing.TB, s *Session) ([]int, Event) {
	t.Helper()
	var ids []int
	var last Event
	if err := s.Regenerate(func(e Event) {
		if d, ok := e.(*Delta); ok {
			ids = append(ids, d.Tokens...)
		}
		last = e
	}); err != nil {
		t.Fatal(err)
	}
	return ids, last
}

// TestScriptedMedia: a message with a picture or a clip is matched on its
// text (the soft rows are placeholders the lookup does not know), and the
// reply after it is the scripted one, on the families that take files.
func TestScriptedMedia(t *testing.T) {
	dir := t.TempDir()
	pic, clip := writePNG(t, dir, 3, 40, 30), writeWAV(t, dir, 1.5, 440)
	script := `{"replies":[{"match":"^What is this\\?$","reply":"A picture of noise."},{"match":"^Transcribe\\.$","reply":"A tone."}]}`
	for _, c := range mediaCases(pic, clip) {
		t.Run(c.family+"-"+c.kind, func(t *testing.T) {
			b := testbundle.Tiny(t, c.family)
			rt := scriptedRuntime(t, b, script)
			s := scriptedSession(t, b, rt, Settings{MaxTokens: 30})
			s.Media = NewEncoders(b, rt, coreml.CPUAndGPU)
			ids, _ := sendMedia(t, s, c.text, MediaFile{Kind: c.kind, Path: c.path})
			want := map[string]string{MediaImage: "A picture of noise.", MediaAudio: "A tone."}[c.kind]
			if got := s.tok.Decode(ids, true); got != want {
				t.Fatalf("reply %q, want %q", got, want)
			}
		})
	}
}

// TestScriptedLogitsF32: a logits head returning fp32 logits is answered
// in fp32 (the published cardbud form).
func TestScriptedLogitsF32(t *testing.T) {
	out, err := reference.Synthesize(reference.SynthOptions{Family: "stateful3-logits", Preset: "tiny", Seed: 7, Out: t.TempDir(),
		Form: reference.Form{LogitsF32: true}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	s := scriptedSession(t, b, scriptedRuntime(t, b, testScript), Settings{MaxTokens: 16, Sampling: Sampling{Temperature: 0.7, Seed: 1}})
	if got, _ := replyText(t, s, "hello"); got != "Hi! Grüße 🍎" {
		t.Fatalf("fp32 logits: %q", got)
	}
}

// BenchmarkScriptedTurn: a whole turn (prefill and decode) on the tiny r1
// bundle, unscripted and scripted; ns/token compares what the script adds
// to the reference runtime's own work.
func BenchmarkScriptedTurn(b *testing.B) {
	bd := testbundle.Tiny(b, "r1")
	for _, scripted := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "scripted"}[scripted]
		b.Run(name, func(b *testing.B) {
			set := Settings{MaxTokens: 40, Speculation: SpecModeOff}
			s := newSession(b, bd, set)
			if scripted {
				s = scriptedSession(b, bd, scriptedRuntime(b, bd, testScript), set)
			}
			tokens := 0
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Clear(); err != nil {
					b.Fatal(err)
				}
				ids, _ := reply(b, s, "please repeat")
				tokens += len(ids)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tokens), "ns/token")
		})
	}
}
