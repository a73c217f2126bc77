package tui

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// slowReader hands out its bytes a few at a time, as a person types.
type slowReader struct{ chunks []string }

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		time.Sleep(50 * time.Millisecond)
		return 0, io.EOF
	}
	time.Sleep(30 * time.Millisecond)
	n := copy(p, r.chunks[0])
	r.chunks = r.chunks[1:]
	return n, nil
}

// TestUnsentMessageSurvivesQuit: text typed but not sent is kept when the
// interface closes (here: quit from the palette, which leaves the input
// alone; ctrl+c would clear it) and is back in the input next time.
func TestUnsentMessageSurvivesQuit(t *testing.T) {
	draft := filepath.Join(t.TempDir(), "draft")
	eng := NewFakeEngine(FakeOptions{})
	opts := Options{Output: io.Discard, Width: 80, Height: 24, DraftFile: draft, NoNativeClipboard: true, AutosaveEvery: -1,
		Input: &slowReader{chunks: []string{"half a ", "thought", "\x10", "quit", "\r"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a bound on a hang, not a time budget
	defer cancel()
	if err := Run(ctx, eng, opts); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(draft)
	if err != nil || string(got) != "half a thought" {
		t.Fatalf("draft %q, %v", got, err)
	}
	// The next run starts with it in the input: enter sends it, and the
	// emptied input at quit removes the stale draft.
	// Quit from the palette: ctrl+c would first stop the reply if it is
	// still streaming (as on a busy machine), and never quit.
	opts.Input = &slowReader{chunks: []string{"\r", "\x10", "quit", "\r"}}
	if err := Run(ctx, eng, opts); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(eng.Calls(), func(c string) bool { return strings.Contains(c, "half a thought") }) {
		t.Fatalf("the restored draft was not sent: calls %q", eng.Calls())
	}
	if _, err := os.Stat(draft); err == nil {
		t.Fatal("the sent draft is still kept")
	}
}
