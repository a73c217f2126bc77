package server

import (
	"context"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

const contextScript = `{"replies":[{"match":"^Summarise the conversation","reply":"Summary of the apples."},{"match":"^Q","reply":"A ok."}]}`

// TestAttachedContext: an attached screen (server.Client) does all of
// what the model sees: the price of a message, the window's breakdown,
// /compact with its progress and the scripted summary, a pin, its own
// summary, and a refused elision — each as events on its stream, as the
// chat screen in-process gets them.
func TestAttachedContext(t *testing.T) {
	ts := startServer(t, serverOpts{preset: "tiny-long", script: contextScript})
	c, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	set := c.Settings()
	set.MaxTokens = 16
	c.SetSettings(set)
	until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.SettingsChanged); return ok })

	empty, err := c.Cost("Q1 apples")
	if err != nil || empty.Text == 0 || empty.Total <= empty.Text || !empty.Fits {
		t.Fatalf("cost %+v, %v", empty, err)
	}
	for _, q := range []string{"Q1 apples", "Q2 pears"} {
		if err := c.Send(q); err != nil {
			t.Fatal(err)
		}
		until(t, c, turnEnd)
	}
	after, err := c.Cost("Q1 apples", engine.MediaCost{Name: "a.png", Kind: engine.MediaImage, Tokens: 16})
	if err != nil || after.Used <= empty.Used || after.Text != empty.Text || len(after.Media) != 1 || after.Total < empty.Total+16 {
		t.Fatalf("cost after two turns %+v (before %+v), %v", after, empty, err)
	}

	if err := c.ContextView(); err != nil {
		t.Fatal(err)
	}
	evs := until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.ContextReport); return ok })
	v := evs[len(evs)-1].(engine.ContextReport).View
	if len(v.Parts) != 4 || v.Used != after.Used || v.Context != 1024 {
		t.Fatalf("context view %+v (cost said used %d)", v, after.Used)
	}

	if err := c.Pin(0, true); err != nil {
		t.Fatal(err)
	}
	evs = until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.ContextReport); return ok })
	if r := evs[len(evs)-1].(engine.ContextReport); r.Op != engine.OpPin || len(r.View.Pinned) != 1 {
		t.Fatalf("pin report %+v", r)
	}

	if err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	evs = until(t, c, func(ev engine.Event) bool { r, ok := ev.(engine.ContextReport); return ok && r.Op == engine.OpCompact })
	var progress int
	var done *engine.Compacted
	for _, ev := range evs {
		switch e := ev.(type) {
		case engine.Compacting:
			progress++
		case engine.Compacted:
			done = &e
		}
	}
	if progress == 0 || done == nil || done.Summary != "Summary of the apples." || done.Window == 0 || c.Window() != done.Window {
		t.Fatalf("compaction: %d progress events, %+v, the client's window %d", progress, done, c.Window())
	}

	if err := c.SetSummary("Apples, briefly."); err != nil {
		t.Fatal(err)
	}
	evs = until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.ContextReport); return ok })
	if r := evs[len(evs)-1].(engine.ContextReport); !r.View.Edited || r.View.Summary != "Apples, briefly." {
		t.Fatalf("summary report %+v", r.View)
	}

	if err := c.ElideMedia(0, 0, ""); err != nil {
		t.Fatal(err)
	}
	evs = until(t, c, func(ev engine.Event) bool { _, ok := ev.(engine.Failed); return ok })
	if f := evs[len(evs)-1].(engine.Failed); f.Op != engine.OpElide || !strings.Contains(f.Err.Error(), "no attachment") {
		t.Fatalf("elide of a message without files: %+v", f)
	}
}
