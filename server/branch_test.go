package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// TestAttachedVersionsAndHistory: an attached screen regenerates, edits
// and switches versions, and keeps, finds, resumes, renames and deletes
// conversations of the history, through the server; another screen sees
// the same conversation, each message once; the replies are the engine's.
func TestAttachedVersionsAndHistory(t *testing.T) {
	ts := startServer(t, serverOpts{history: true})
	set := engine.DefaultSettings()
	set.MaxTokens = 8
	ctx := context.Background()
	a, err := Connect(ctx, "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.SetSettings(set)
	until(t, a, func(ev engine.Event) bool { _, ok := ev.(engine.SettingsChanged); return ok })
	a.Send("hello")
	first := until(t, a, turnEnd)

	a.Regenerate()
	// The server's autosave of the first turn lists the history meanwhile.
	evs := slices.DeleteFunc(until(t, a, turnEnd), func(ev engine.Event) bool { _, ok := ev.(engine.History); return ok })
	br, ok := evs[0].(engine.Branched)
	if !ok || br.Op != "regenerate" || len(br.Messages) != 1 {
		t.Fatalf("regenerate began with %#v", evs[0])
	}
	if textOf(evs) != textOf(first) {
		t.Fatalf("a greedy regenerate gave %q, first %q", textOf(evs), textOf(first))
	}
	if m := a.Messages(); len(m) != 2 || m[1].Versions != 2 || m[1].Version != 1 {
		t.Fatalf("messages after regenerate %+v", m)
	}
	b, err := Connect(ctx, "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if m := b.Messages(); len(m) != 2 || m[1].Versions != 2 {
		t.Fatalf("another screen sees %+v", m)
	}

	a.Edit("goodbye")
	evs = until(t, a, turnEnd)
	if want := engineReply(t, set, "goodbye")[0]; textOf(evs) != want {
		t.Fatalf("edited reply %q, fresh %q", textOf(evs), want)
	}
	until(t, b, func(ev engine.Event) bool { _, ok := ev.(engine.Finished); return ok })
	if m := b.Messages(); len(m) != 2 || m[0].Content != "goodbye" || m[0].Versions != 2 {
		t.Fatalf("the other screen after the edit %+v", m)
	}
	a.SelectVersion(0, 0)
	until(t, a, func(ev engine.Event) bool { x, ok := ev.(engine.Branched); return ok && x.Op == "version" })
	if m := a.Messages(); m[0].Content != "hello" || m[1].Versions != 2 {
		t.Fatalf("version 1 of the message %+v", m)
	}

	a.Clear()
	kept := until(t, a, func(ev engine.Event) bool { x, ok := ev.(engine.History); return ok && x.Op == "kept" })
	id := kept[len(kept)-1].(engine.History).ID
	a.ListHistory("HELLO")
	list := until(t, a, func(ev engine.Event) bool {
		x, ok := ev.(engine.History)
		return ok && x.Op == "list" && x.Query == "HELLO"
	})
	if l := list[len(list)-1].(engine.History).List; len(l) != 1 || l[0].ID != id || !l[0].KV {
		t.Fatalf("history search %+v", l)
	}
	// An HTTP client reads the same search in the GET's answer.
	resp, err := http.Get(ts.url + "/orchard/v1/history?q=HELLO")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Query   string        `json:"query"`
		History []wireHistory `json:"history"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || got.Query != "HELLO" || len(got.History) != 1 || got.History[0].ID != id {
		t.Fatalf("GET history: %d %+v %v", resp.StatusCode, got, err)
	}
	a.ResumeHistory(id)
	until(t, a, func(ev engine.Event) bool { x, ok := ev.(engine.History); return ok && x.Op == "resume" })
	if m := a.Messages(); len(m) != 2 || m[0].Content != "hello" || m[1].Versions != 2 {
		t.Fatalf("resumed %+v", m)
	}
	a.RenameHistory(id, "Greetings")
	until(t, a, func(ev engine.Event) bool {
		x, ok := ev.(engine.History)
		return ok && x.Op == "rename" && x.ID == id && x.Title == "Greetings"
	})
	a.DeleteHistory(id)
	until(t, a, func(ev engine.Event) bool { x, ok := ev.(engine.History); return ok && x.Op == "delete" && x.ID == id })
}
