package server

import (
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/checkpoints"
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
