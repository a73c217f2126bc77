package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// compactScript answers "Question N" with a reply of known length and the
// summarisation prompt for the messages up to M with "Summary M."; every
// seventh question matches nothing, so the weights answer it and a cold
// chain can check the cache after a compaction.
func compactScript(t testing.TB) string {
	t.Helper()
	type entry struct {
		Match string `json:"match"`
		Reply string `json:"reply"`
	}
	var rs []entry
	for m := 1; m <= 100; m++ {
		rs = append(rs, entry{fmt.Sprintf(`^Summarise the conversation up to message %d in`, m), fmt.Sprintf("Summary %d.", m)})
	}
	for n := 1; n <= 40; n++ {
		if n%7 != 0 {
			rs = append(rs, entry{fmt.Sprintf(`^Q%d\b`, n), fmt.Sprintf("A%d ok.", n)})
		}
	}
	data, err := json.Marshal(map[string]any{"replies": rs})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// compactRun is a scripted conversation's record.
type compactRun struct {
	replies    []string
	compacted  []Compacted
	reused     []int // each turn's reused tokens
	afterCompa []int // the turns that followed a compaction
}

// runQuestions sends Question from..to on s, failing on any refusal.
func runQuestions(t *testing.T, s *Session, from, to int, run *compactRun) {
	t.Helper()
	for n := from; n <= to; n++ {
		var fin *Finished
		compacted := false
		err := s.Send(fmt.Sprintf("Q%d", n), func(ev Event) {
			switch e := ev.(type) {
			case Compacted:
				run.compacted = append(run.compacted, e)
				compacted = true
			case Finished:
				fin = &e
			case Failed:
				t.Fatalf("question %d: %v", n, e.Err)
			}
		})
		if err != nil || fin == nil {
			t.Fatalf("question %d: %v (finished %v)", n, err, fin != nil)
		}
		run.replies = append(run.replies, fin.Reply)
		run.reused = append(run.reused, fin.Metrics.ReusedTokens)
		if compacted {
			run.afterCompa = append(run.afterCompa, n)
		}
	}
}

// TestCompactFortyTurns: under the compact policy a scripted 40-turn
// conversation in a 128-token context runs to the end without a refusal;
// the record holds all 40 turns; every compaction's summary is the one
// the script gives for the summarisation prompt it matched; the turn after
// a compaction reuses the system prompt from the cache; an unmatched
// message after a compaction gets the reply a cold chain gives the same
// prompt; and a conversation checkpointed halfway and restored goes on
// exactly as the uninterrupted one, with speculation on or off.
func TestCompactFortyTurns(t *testing.T) {
	fams := testbundle.Families()
	if raceEnabled {
		fams = []string{"v2", "stateful3"} // the cheapest two; every family without -race
	}
	for _, fam := range fams {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			script := compactScript(t)
			set := Settings{MaxTokens: 12, System: "Be brief.", ContextPolicy: ContextCompact}
			s := scriptedSession(t, b, scriptedRuntime(t, b, script), set)
			var run compactRun
			runQuestions(t, s, 1, 40, &run)

			msgs := s.Messages()
			if len(msgs) != 80 {
				t.Fatalf("the record holds %d messages, want 80", len(msgs))
			}
			for n := 1; n <= 40; n++ {
				if got := msgs[2*(n-1)].Content; got != fmt.Sprintf("Q%d", n) {
					t.Fatalf("message %d is %q", 2*(n-1), got)
				}
				if want := fmt.Sprintf("A%d ok.", n); n%7 != 0 && run.replies[n-1] != want {
					t.Fatalf("reply %d: %q, want %q", n, run.replies[n-1], want)
				}
			}
			if len(run.compacted) < 5 {
				t.Fatalf("%d compactions in 40 turns of a 128-token context", len(run.compacted))
			}
			for _, c := range run.compacted {
				if want := fmt.Sprintf("Summary %d.", c.To); c.Summary != want {
					t.Fatalf("compaction of messages %d–%d: summary %q, want %q", c.From, c.To, c.Summary, want)
				}
				if !c.Auto || c.Window != c.To || c.To <= c.From {
					t.Fatalf("compaction %+v", c)
				}
			}
			if s.Window() == 0 || s.cstate == nil || s.cstate.Summary == "" || len(s.cstate.Earlier) != len(run.compacted)-1 {
				t.Fatalf("window %d, context state %+v", s.Window(), s.cstate)
			}
			// The system prompt stays in the cache through compactions
			// where the chain can rewind to it (a wrapped stateful3 ring
			// cannot: it prefills again).
			sys, err := s.windowIDs(nil)
			if err != nil {
				t.Fatal(err)
			}
			sysLen := len(sys)
			if !strings.HasPrefix(fam, "stateful3") {
				for _, c := range run.compacted {
					if c.Cached < sysLen || c.ContextUsed <= c.Cached {
						t.Errorf("compaction %d–%d: the conversation takes %d tokens, %d of them cached (the system prompt's %d)", c.From, c.To, c.ContextUsed, c.Cached, sysLen)
					}
				}
				for _, n := range run.afterCompa {
					if run.reused[n-1] < sysLen {
						t.Errorf("turn %d after a compaction reused %d tokens, fewer than the system prompt's %d", n, run.reused[n-1], sysLen)
					}
				}
			}

			// Unmatched messages until the policy moves the window before
			// one (a compaction, or a drop of turns too long to summarise in
			// this small context): the weights answer, as a cold chain fed
			// the same prompt does, and a greedy regenerate repeats it token
			// for token.
			var warm []int
			compactedToo := false
			for k := 0; k < 4 && !compactedToo; k++ {
				warm = nil
				w := s.Window()
				err = s.Send(fmt.Sprintf("nothing matches message %d, which is long enough", k), func(ev Event) {
					switch e := ev.(type) {
					case *Delta:
						warm = append(warm, e.Tokens...)
					case Started:
						compactedToo = e.Window > w
					}
				})
				if err != nil {
					t.Fatalf("unmatched turn: %v", err)
				}
			}
			if !compactedToo {
				t.Fatal("four unmatched turns never moved the window")
			}
			var regen []int
			if err := s.Regenerate(func(ev Event) {
				if d, ok := ev.(*Delta); ok {
					regen = append(regen, d.Tokens...)
				}
			}); err != nil || !slices.Equal(regen, warm) {
				t.Fatalf("regenerate after a compaction: %v, %v; the reply %v", err, regen, warm)
			}
			cold, err := chain.Open(b, scriptedRuntime(t, b, script), chain.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer cold.Close()
			if want := chaintest.Greedy(t, cold, s.lastPrompt, len(warm)); !slices.Equal(warm, want) {
				t.Fatalf("after compactions: warm %v, cold %v", warm, want)
			}

			// Halfway to a checkpoint, restored into a new session (with
			// speculation on): the rest of the conversation is the same.
			if raceEnabled && fam != "v2" {
				return
			}
			half := scriptedSession(t, b, scriptedRuntime(t, b, script), set)
			var first compactRun
			runQuestions(t, half, 1, 20, &first)
			cp, err := half.Checkpoint("half", 0)
			if err != nil {
				t.Fatal(err)
			}
			again := scriptedSession(t, b, scriptedRuntime(t, b, script), specOn(b, set))
			if err := again.Restore(cp); err != nil {
				t.Fatal(err)
			}
			if again.Window() != half.Window() || again.cstate.Summary != half.cstate.Summary {
				t.Fatalf("restored window %d summary %q, want %d %q", again.Window(), again.cstate.Summary, half.Window(), half.cstate.Summary)
			}
			runQuestions(t, again, 21, 40, &first)
			if !slices.Equal(first.replies, run.replies) {
				t.Fatalf("restored run's replies differ:\n%q\n%q", first.replies, run.replies)
			}
			if len(first.compacted) != len(run.compacted) {
				t.Fatalf("restored run compacted %d times, uninterrupted %d", len(first.compacted), len(run.compacted))
			}
			for i := range first.compacted {
				if a, b := first.compacted[i], run.compacted[i]; a.Summary != b.Summary || a.From != b.From || a.To != b.To {
					t.Fatalf("compaction %d: restored %+v, uninterrupted %+v", i, a, b)
				}
			}
			if !strings.HasPrefix(SummaryMessage("x").Content, summaryLead) {
				t.Fatal("summary message")
			}
		})
	}
}
