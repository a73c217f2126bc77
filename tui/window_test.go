package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// TestModelWindowRule: the rule "the model no longer sees above this
// line" stands above the first message the model sees — as a loaded
// conversation says, as a turn moves it, back where it was when the turn
// fails — and the reply that moved it says so truly: the messages stay.
func TestModelWindowRule(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 100, 60, Options{})
	var msgs []engine.Message
	for _, q := range []string{"first apples", "second pears", "third plums"} {
		msgs = append(msgs, engine.Message{Role: "user", Content: q}, engine.Message{Role: "model", Content: "about " + q})
	}
	// ruleBefore says which message the rule stands right above ("" none).
	ruleBefore := func() string {
		t.Helper()
		lines := strings.Split(plain(m), "\n")
		n := 0
		at := ""
		for i, l := range lines {
			if strings.Contains(l, windowRuleText) {
				n++
				for _, next := range lines[i+1:] {
					if s := strings.TrimSpace(next); s != "" && s != "you" && s != "gemma" {
						at = s
						break
					}
				}
			}
		}
		if n > 1 {
			t.Fatalf("%d rules:\n%s", n, plain(m))
		}
		return at
	}

	send(m, engine.Cleared{Messages: msgs})
	if at := ruleBefore(); at != "" {
		t.Fatalf("a rule above %q when the model sees everything", at)
	}
	send(m, engine.Cleared{Messages: msgs, Window: 2})
	if at := ruleBefore(); at != "second pears" {
		t.Fatalf("the rule stands above %q, want the third message:\n%s", at, plain(m))
	}

	// A turn moves it; the reply says so.
	typeText(m, "fourth quinces")
	m.Update(press("enter"))
	send(m, engine.Started{Turn: 6, PromptTokens: 40, Window: 4}, &engine.Delta{Text: "about quinces"})
	if at := ruleBefore(); at != "third plums" {
		t.Fatalf("while the turn streams the rule stands above %q", at)
	}
	send(m, engine.Finished{Reply: "about quinces", Metrics: engine.TurnMetrics{GeneratedTokens: 2, FinishReason: "eos", DroppedTurns: 2}})
	got := plain(m)
	if !strings.Contains(got, "the model no longer sees 2 older messages") || strings.Contains(got, "dropped") {
		t.Fatalf("the reply's footer:\n%s", got)
	}

	// A turn that fails puts it back.
	typeText(m, "fifth figs")
	m.Update(press("enter"))
	send(m, engine.Started{Turn: 8, PromptTokens: 40, Window: 6})
	if at := ruleBefore(); at != "fourth quinces" {
		t.Fatalf("the failing turn's rule stands above %q", at)
	}
	send(m, engine.Failed{Op: "send", Err: errors.New("the chain failed")})
	if at := ruleBefore(); at != "third plums" || m.input.Value() != "fifth figs" {
		t.Fatalf("after the failed turn the rule stands above %q (input %q)", at, m.input.Value())
	}

	// Another version, a clear.
	send(m, engine.Branched{Op: "version", Messages: msgs[:4], Window: 2})
	if at := ruleBefore(); at != "second pears" {
		t.Fatalf("after a version switch the rule stands above %q", at)
	}
	send(m, engine.Cleared{})
	if m.conv.window != 0 {
		t.Fatalf("window %d after a clear", m.conv.window)
	}
}

// TestWindowRuleFindsAround: the search's view shows the rule too, and
// finds text below it on its line.
func TestWindowRuleFindsAround(t *testing.T) {
	m := newTestModel(t, testFake(t, FakeOptions{}), 100, 40, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "old one"}, {Role: "model", Content: "old reply"},
		{Role: "user", Content: "needle here"}, {Role: "model", Content: "new reply"}}, Window: 2})
	m.conv.SetFind("needle")
	if len(m.conv.find.matches) != 1 {
		t.Fatalf("matches %+v", m.conv.find.matches)
	}
	if l := m.conv.find.lines[m.conv.find.matches[0].line]; !strings.Contains(l, "needle") {
		t.Fatalf("the match's line is %q", l)
	}
	if v := plain(m); !strings.Contains(v, windowRuleText) {
		t.Fatalf("no rule while searching:\n%s", v)
	}
}
