package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/engine"
)

// fullHistory is a history on a full disk: every write fails with ENOSPC.
type fullHistory struct{ *checkpoints.Store }

func (fullHistory) Save(cp *checkpoints.Checkpoint) error {
	return fmt.Errorf("checkpoint %q: %w", cp.Meta.Name, &fs.PathError{Op: "write", Path: cp.Meta.Name, Err: syscall.ENOSPC})
}

// TestClearRefusedWhenNotKept: with the history's disk full, POST
// /orchard/v1/session/clear answers with the engine's sentence and clears
// nothing; an attached screen gets the same refusal as its clear's
// Failed event, and the conversation is still the server's.
func TestClearRefusedWhenNotKept(t *testing.T) {
	ts := startServer(t, serverOpts{history: true})
	hist, err := checkpoints.Open(filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	ts.eng.UseHistory(fullHistory{hist}, engine.HistoryPolicy{KeepKV: 2, KVBudget: 1 << 30})
	a, err := Connect(context.Background(), "unix:"+ts.sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Send("hello")
	until(t, a, turnEnd)
	const sentence = "the disk is full: the conversation was kept on screen; free space or /save elsewhere"

	resp, err := httpClient.Post(ts.url+"/orchard/v1/session/clear", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var body apiErrorBody
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusInsufficientStorage || !strings.Contains(body.Error.Message, sentence) {
		t.Fatalf("POST clear: HTTP %d %+v (%v)", resp.StatusCode, body.Error, err)
	}

	a.Clear()
	// The server's own autosave fails on the same full disk and says so
	// (Op "history"); the clear's answer is the Failed of "clear".
	evs := until(t, a, func(ev engine.Event) bool {
		f, failed := ev.(engine.Failed)
		_, cleared := ev.(engine.Cleared)
		return failed && f.Op == "clear" || cleared
	})
	if f, ok := evs[len(evs)-1].(engine.Failed); !ok || f.Op != "clear" || !strings.Contains(f.Err.Error(), sentence) {
		t.Fatalf("the attached screen's clear ended with %#v", evs[len(evs)-1])
	}
	if m := ts.eng.Messages(); len(m) != 2 || m[0].Content != "hello" {
		t.Fatalf("the server's conversation is %+v", m)
	}
	if m := a.Messages(); len(m) != 2 {
		t.Fatalf("the attached screen's conversation is %+v", m)
	}
	// Room again: the server keeps it when it shuts down.
	ts.eng.UseHistory(hist, engine.HistoryPolicy{KeepKV: 2, KVBudget: 1 << 30})
}
