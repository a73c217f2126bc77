package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/orchard-llm/orchard/engine"
)

// TestFlow runs the real program loop (teatest) against the fake
// engine: type, send, stream, cancel, save, clear, load, copy, quit.
func TestFlow(t *testing.T) {
	long := strings.Repeat("orchard rows of trees ", 200)
	f := testFake(t, FakeOptions{TokenDelay: 5 * time.Millisecond,
		Reply: func(string, int, engine.Settings) string { return long }})
	m, err := newModel(f, Options{Env: []string{"HOME=" + t.TempDir()}, NoNativeClipboard: true, AutosaveEvery: -1, Theme: "dark"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	m.done = done
	m.calls = newCallQueue(f, nil)
	defer func() { close(done); m.calls.close() }()

	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30))
	waitFor := func(what ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			for _, w := range what {
				if !bytes.Contains(b, []byte(w)) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	// The renderer writes only the cells that change, so text on screen
	// is checked where it is new; engine calls are checked on the fake.
	waitCall := func(call string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(strings.Join(f.Calls(), "|"), call) {
			if time.Now().After(deadline) {
				t.Fatalf("the engine never got %q: %v", call, f.Calls())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	enter := func(s string) {
		tm.Type(s)
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	}

	waitFor("Type a message")
	enter("hello orchard")
	waitFor("tok/s", "rows of trees")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	waitFor("cancelled")

	enter("/save a")
	waitCall("SaveCheckpoint a")
	waitFor(`checkpoint "a"`)
	enter("/clear")
	waitCall("Clear")
	waitFor("Type a message")
	enter("/load a")
	waitCall("load a")
	waitFor("hello orchard")

	enter("/copy")
	waitFor("\x1b]52;c;", "Copied")

	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if !final.quitting {
		t.Fatal("ctrl+c twice did not quit")
	}
	msgs := final.conv.Messages()
	if len(msgs) != 2 || msgs[0].Content != "hello orchard" || !strings.HasPrefix(long, msgs[1].Content) {
		t.Fatalf("restored conversation = %+v", msgs)
	}
	want := []string{"Send hello orchard", "Cancel", "SaveCheckpoint a", "Clear", "load a"}
	calls := strings.Join(f.Calls(), "|")
	for _, w := range want {
		if !strings.Contains(calls, w) {
			t.Errorf("engine calls %q lack %q", calls, w)
		}
	}
}

// TestCallQueueKeepsOrder checks that engine calls made from Update
// reach the engine in order even though Update never waits for them.
func TestCallQueueKeepsOrder(t *testing.T) {
	f := testFake(t, FakeOptions{})
	q := newCallQueue(f, nil)
	for _, n := range []string{"a", "b", "c", "d"} {
		q.push(engine.OpSave, func(e Engine) error { return e.SaveCheckpoint(n) })
	}
	q.close()
	if got := strings.Join(f.Calls(), ","); got != "SaveCheckpoint a,SaveCheckpoint b,SaveCheckpoint c,SaveCheckpoint d" {
		t.Fatalf("calls = %s", got)
	}
}

// TestRunAutosavesOnQuit runs Run itself with a cancelled context and
// checks the conversation is saved on the way out.
func TestRunAutosavesOnQuit(t *testing.T) {
	f := testFake(t, FakeOptions{})
	ctx, cancel := contextWithCancel()
	var out bytes.Buffer
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, f, Options{Input: strings.NewReader(""), Output: &out, Env: []string{"TERM=dumb"}, Width: 80, Height: 24, AutosaveEvery: -1})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if !strings.Contains(strings.Join(f.Calls(), ","), "Autosave") {
		t.Fatalf("no autosave on the way out: %v", f.Calls())
	}
}
