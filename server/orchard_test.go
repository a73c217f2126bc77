package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/engine"
)

// callCommand sends a request to the test server and returns the status and the
// error object of the answer, if it is one.
func callCommand(t *testing.T, ts *testServer, method, path, body string) (int, apiErrorDetail) {
	t.Helper()
	status, raw := ollamaCall(t, ts, method, path, body)
	var e apiErrorBody
	json.Unmarshal(raw, &e)
	return status, e.Error
}

// failingStore is a checkpoint store whose writes fail with err.
type failingStore struct {
	*checkpoints.Store
	err error
}

func (f failingStore) Save(*checkpoints.Checkpoint) error { return f.err }

func (f failingStore) SaveAutosave(*checkpoints.Checkpoint) error { return f.err }

// TestCommandStatus: a chat command's failure is 4xx when the request is
// at fault (a refused, missing or taken name) and 5xx when the server is
// (a full disk, a failing store), as the README says.
func TestCommandStatus(t *testing.T) {
	ts := startServer(t, serverOpts{})
	send := func(method, path, body string) (int, apiErrorDetail) { return callCommand(t, ts, method, path, body) }
	if st, e := send("POST", "/orchard/v1/session/messages", `{"text": "hello"}`); st != 202 {
		t.Fatalf("send: %d %+v", st, e)
	}
	waitIdle(t, ts)
	if st, e := send("POST", "/orchard/v1/checkpoints", `{"name": "a"}`); st != 200 {
		t.Fatalf("save: %d %+v", st, e)
	}
	if st, e := send("POST", "/orchard/v1/checkpoints", `{"name": "b"}`); st != 200 {
		t.Fatalf("save: %d %+v", st, e)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		typ                string
	}{
		{"POST", "/orchard/v1/checkpoints", `{"name": ""}`, 400, "invalid_request_error"},
		{"POST", "/orchard/v1/checkpoints", `{"name": "_autosave"}`, 400, "invalid_request_error"},
		{"POST", "/orchard/v1/checkpoints/nothing/load", "", 404, "invalid_request_error"},
		{"POST", "/orchard/v1/checkpoints/a/rename", `{"name": "b"}`, 409, "invalid_request_error"},
		{"POST", "/orchard/v1/session/version", `{"index": 0, "version": 3}`, 400, "invalid_request_error"},
		{"PUT", "/orchard/v1/settings", `{"draft_length": -4}`, 400, "invalid_request_error"},
	} {
		if st, e := send(tc.method, tc.path, tc.body); st != tc.status || e.Type != tc.typ || e.Message == "" {
			t.Errorf("%s %s %s: %d %+v, want %d %s", tc.method, tc.path, tc.body, st, e, tc.status, tc.typ)
		}
	}
	for _, tc := range []struct {
		err    error
		status int
	}{
		{fmt.Errorf("write x: %w", syscall.ENOSPC), 507},
		{fmt.Errorf("write x: %w", syscall.EIO), 500},
	} {
		ts.eng.UseStore(failingStore{Store: ts.store, err: tc.err}, 0)
		for _, path := range []string{"/orchard/v1/checkpoints", "/orchard/v1/session/autosave"} {
			if st, e := send("POST", path, `{"name": "c"}`); st != tc.status || e.Type != "server_error" || !strings.Contains(e.Message, tc.err.Error()) {
				t.Errorf("%s failing with %v: %d %+v, want %d server_error", path, tc.err, st, e, tc.status)
			}
		}
	}
	ts.eng.UseStore(ts.store, 0)
}

// waitIdle waits for the chat's turn to end.
func waitIdle(t *testing.T, ts *testServer) {
	t.Helper()
	for range 3000 {
		ts.turnMu.Lock()
		busy := ts.chatTurn != nil
		ts.turnMu.Unlock()
		if !busy {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the chat's turn did not end")
}

var _ engine.CheckpointStore = failingStore{}
