package tui

import (
	"strings"
	"testing"
	"time"

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

// TestFakeKeepsStoppedAndFigures: the fake engine keeps what the real one
// keeps on a reply — its figures, and Stopped on one stopped with esc —
// so a test that saves and loads through it sees what a user sees.
func TestFakeKeepsStoppedAndFigures(t *testing.T) {
	f := testFake(t, FakeOptions{TokenDelay: 5 * time.Millisecond,
		Reply: func(p string, _ int, _ engine.Settings) string { return strings.Repeat(p+" ", 40) }})
	m := newTestModel(t, f, 100, 30, Options{})
	typeText(m, "short")
	m.Update(press("enter"))
	pump(t, m, f, func() bool { return !m.replying() })
	typeText(m, "stop me")
	m.Update(press("enter"))
	pump(t, m, f, func() bool { return m.turn.busy() })
	m.Update(press("esc"))
	pump(t, m, f, func() bool { return !m.replying() })

	msgs := f.Messages()
	if len(msgs) != 4 {
		t.Fatalf("messages %+v", msgs)
	}
	if r := msgs[1]; r.Stopped || r.Interrupted || r.Metrics == nil || r.Metrics.FinishReason != "eos" || r.Metrics.PerTokenMillis != nil {
		t.Errorf("the finished reply %+v, figures %+v", r, r.Metrics)
	}
	if r := msgs[3]; !r.Stopped || !r.Interrupted || r.Metrics == nil || r.Metrics.FinishReason != "cancelled" {
		t.Errorf("the stopped reply %+v, figures %+v", r, r.Metrics)
	}

	f.SaveCheckpoint("both")
	f.Clear()
	f.LoadCheckpoint("both")
	pump(t, m, f, func() bool { return len(m.conv.msgs) == 4 && strings.Contains(plain(m), "Loaded checkpoint") })
	got := plain(m)
	if strings.Contains(got, "cut short") || strings.Count(got, " tokens · ") < 2 || !strings.Contains(got, "cancelled · ") {
		t.Fatalf("after a load:\n%s", got)
	}
}
