package server

import (
	"context"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// fillQuestions fill the tiny preset's 128-token context in a few turns.
var fillQuestions = []string{
	"Tell me about pears, plums and apples in the orchard.",
	"And the apples, the pears and the plums in the autumn?",
	"Which of the plums, pears and apples keep the longest?",
	"How are the pears and the plums and the apples picked?",
	"What do the plums, the apples and the pears taste of?",
}

// TestWindowReachesScreens: under drop-oldest the screens are told where
// the model's view starts — with each turn, in the state a screen
// attaching later reads, and with a loaded conversation — as the engine
// has it.
func TestWindowReachesScreens(t *testing.T) {
	ts := startServer(t, serverOpts{})
	a, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	set := engine.DefaultSettings()
	set.MaxTokens, set.ContextPolicy, set.Speculation = 10, engine.ContextDropOldest, engine.SpecModeOff
	a.SetSettings(set)
	until(t, a, func(ev engine.Event) bool { _, ok := ev.(engine.SettingsChanged); return ok })
	var started engine.Started
	for _, q := range fillQuestions {
		a.Send(q)
		for _, ev := range until(t, a, turnEnd) {
			if s, ok := ev.(engine.Started); ok {
				started = s
			}
		}
	}
	w := ts.eng.Window()
	if w == 0 || started.Window != w || a.Window() != w {
		t.Fatalf("the engine's window %d, the last started event's %d, the screen's %d", w, started.Window, a.Window())
	}
	b, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Window() != w {
		t.Fatalf("a screen attaching later: window %d, want %d", b.Window(), w)
	}
	a.SaveCheckpoint("full")
	until(t, a, func(ev engine.Event) bool { c, ok := ev.(engine.Checkpoints); return ok && c.Op == "save" })
	a.Clear()
	if cl := until(t, a, isCleared)[0]; a.Window() != 0 {
		t.Fatalf("after a clear: %#v, window %d", cl, a.Window())
	}
	a.LoadCheckpoint("full")
	evs := until(t, a, isCleared)
	if cl := evs[len(evs)-1].(engine.Cleared); cl.Window != w {
		t.Fatalf("the loaded conversation's window %d, want %d", cl.Window, w)
	}
}

func isCleared(ev engine.Event) bool { _, ok := ev.(engine.Cleared); return ok }
