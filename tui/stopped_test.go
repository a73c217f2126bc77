package tui

import (
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// TestStoppedReplyKeepsItsFigures: a reply the user stopped comes back (a
// load, a resume, --continue) as it was shown when it stopped — cancelled,
// with its figures — not as "interrupted · cut short"; one the engine cut
// short by closing is interrupted, with its figures too.
func TestStoppedReplyKeepsItsFigures(t *testing.T) {
	figures := &engine.TurnMetrics{GeneratedTokens: 12, DecodeTokPerSec: 30, TTFTSeconds: 0.25, FinishReason: "cancelled"}
	for _, tc := range []struct {
		name string
		msg  engine.Message
		want string
	}{
		{"stopped", engine.Message{Role: "model", Content: "the reply was going", Interrupted: true, Stopped: true, Metrics: figures},
			"cancelled · 12 tokens · 30.0 tok/s"},
		{"engine closed", engine.Message{Role: "model", Content: "the reply was going", Interrupted: true, Metrics: figures},
			"interrupted · 12 tokens · 30.0 tok/s"},
		{"finished", engine.Message{Role: "model", Content: "the reply was going", Metrics: &engine.TurnMetrics{GeneratedTokens: 5, FinishReason: "eos"}},
			"5 tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestModel(t, testFake(t, FakeOptions{}), 100, 24, Options{})
			send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"}, tc.msg}})
			got := plain(m)
			if !strings.Contains(got, tc.want) || strings.Contains(got, "cut short") {
				t.Fatalf("want %q:\n%s", tc.want, got)
			}
		})
	}
}
