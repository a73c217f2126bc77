package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testbundle"
)

// savedAutosave waits for the autosave on disk to satisfy ok.
func savedAutosave(t *testing.T, ts *testServer, what string, ok func(*checkpoints.Checkpoint) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cp, err := ts.store.Load(checkpoints.Autosave, testbundle.Tiny(t, "r1").Identity)
		if err == nil && ok(cp) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no autosave with %s on disk (last: %v)", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServerAutosaves: with no chat screen attached, a finished chat
// turn is on disk at once, and a later change (a new system prompt) is
// within the autosave period.
func TestServerAutosaves(t *testing.T) {
	ts := startServer(t, serverOpts{autosave: 300 * time.Millisecond})
	if st, e := callCommand(t, ts, "PUT", "/orchard/v1/settings", `{"max_tokens": 4}`); st != 200 {
		t.Fatalf("settings: %d %+v", st, e)
	}
	if st, e := callCommand(t, ts, "POST", "/orchard/v1/session/messages", `{"text": "remember the apples"}`); st != 202 {
		t.Fatalf("send: %d %+v", st, e)
	}
	savedAutosave(t, ts, "the turn", func(cp *checkpoints.Checkpoint) bool {
		m := cp.Conversation.Messages
		return len(m) == 2 && m[0].Content == "remember the apples" && m[1].Content != ""
	})
	if st, e := callCommand(t, ts, "PUT", "/orchard/v1/settings", `{"system": "Answer in verse."}`); st != 200 {
		t.Fatalf("settings: %d %+v", st, e)
	}
	savedAutosave(t, ts, "the new system prompt", func(cp *checkpoints.Checkpoint) bool {
		return strings.Contains(string(cp.Conversation.Settings), "Answer in verse.")
	})
}

// TestAutosaveListReachesScreens: the server's autosave after a turn
// reaches an attached screen with the checkpoint list (the autosave in
// it), so its checkpoints panel stays full.
func TestAutosaveListReachesScreens(t *testing.T) {
	ts := startServer(t, serverOpts{})
	c, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SaveCheckpoint("kept")
	until(t, c, func(ev engine.Event) bool { cp, ok := ev.(engine.Checkpoints); return ok && cp.Op == "save" })
	set := engine.DefaultSettings()
	set.MaxTokens = 4
	c.SetSettings(set)
	c.Send("remember the apples")
	evs := until(t, c, func(ev engine.Event) bool { cp, ok := ev.(engine.Checkpoints); return ok && cp.Op == "autosave" })
	cp := evs[len(evs)-1].(engine.Checkpoints)
	var names []string
	for _, in := range cp.List {
		names = append(names, in.Name)
	}
	if !slices.Contains(names, checkpoints.Autosave) || !slices.Contains(names, "kept") {
		t.Fatalf("the autosave's list on the screen: %q", names)
	}
}
