package server

import (
	"testing"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// staleMessages is an engine whose copy of the conversation lags behind
// its events, as the real one's may for a moment after a command.
type staleMessages struct {
	Engine
	msgs []engine.Message
}

func (s staleMessages) Messages() []engine.Message { return s.msgs }

// TestClearedCarriesItsOwnConversation: every event reaches the screens
// with the conversation it implies (none after a clear), never the
// engine's copy, which may still hold the old one; and a screen that
// attaches afterwards starts from what the events said. An attached
// screen once showed the old conversation again after /clear.
func TestClearedCarriesItsOwnConversation(t *testing.T) {
	b := testbundle.Tiny(t, "r1")
	eng := engine.Start(newSession(t, b, engine.DefaultSettings(), 0), engine.ModelInfo{Name: b.Name()})
	defer eng.Close()
	old := []engine.Message{{Role: "user", Content: "before"}, {Role: "model", Content: "the clear"}}
	srv := New(Options{Engine: staleMessages{eng, old}, BundleDir: b.Dir, BundleID: b.Identity.ID, Defaults: engine.DefaultSettings()})
	sub := srv.subscribe()
	defer srv.unsubscribe(sub)
	cut := []engine.Message{old[0], {Role: "model", Content: "cut short", Interrupted: true}}
	srv.publishChat(engine.Cleared{})
	srv.publishChat(engine.Cleared{Messages: old[:1]}) // a checkpoint loaded
	srv.publishChat(engine.Cancelled{Messages: cut})
	items, _ := sub.Take()
	var got []int
	for _, w := range items {
		if w.Type == "cleared" || w.Type == "cancelled" {
			if w.Messages == nil {
				t.Fatalf("%s without messages", w.Type)
			}
			got = append(got, len(*w.Messages))
		}
	}
	if len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Errorf("messages per event (cleared, cleared, cancelled): %v, want [0 1 2]", got)
	}
	late := srv.subscribe()
	defer srv.unsubscribe(late)
	st, _ := late.Take()
	if len(st) == 0 || st[0].Type != "state" || st[0].Messages == nil || len(*st[0].Messages) != 2 || (*st[0].Messages)[1].Content != "cut short" {
		t.Fatalf("a screen attaching after the events starts from %+v, want the cancelled turn's conversation", st)
	}
}
