package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
)

// refusingEngine refuses every message, as an engine over a server does
// while the server is away.
type refusingEngine struct {
	*FakeEngine
	err error
}

func (r refusingEngine) Send(string, ...engine.MediaFile) error { return r.err }

// TestCallQueueDeliversRefusal: a command the engine refuses comes back
// to the program as a message, off the Update path.
func TestCallQueueDeliversRefusal(t *testing.T) {
	eng := refusingEngine{testFake(t, FakeOptions{}), errors.New("not connected")}
	got := make(chan tea.Msg, 4)
	q := newCallQueue(eng, func(m tea.Msg) { got <- m })
	q.push(engine.OpSave, func(e Engine) error { return e.SaveCheckpoint("kept") })
	q.push(engine.OpSend, func(e Engine) error { return e.Send("hello") })
	q.close()
	select {
	case m := <-got:
		if r, ok := m.(refusedMsg); !ok || r.op != engine.OpSend || r.err != eng.err {
			t.Fatalf("delivered %#v, want the send's refusal", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no refusal delivered")
	}
	if len(got) != 0 {
		t.Fatalf("an accepted command was delivered too: %#v", <-got)
	}
}

// TestRefusedSendComesBack: a message the engine refuses goes back into
// the input with the reason shown, as after a failed turn.
func TestRefusedSendComesBack(t *testing.T) {
	eng := refusingEngine{testFake(t, FakeOptions{}), errors.New("the server is not connected")}
	m := newTestModel(t, eng, 80, 24, Options{})
	typeText(m, "hello there")
	m.Update(press("enter"))
	if got := m.input.Value(); got != "hello there" {
		t.Errorf("input after a refused send: %q", got)
	}
	if m.toast.kind != toastError || !strings.Contains(m.toast.text, "The message was not sent: the server is not connected") {
		t.Errorf("toast %q", m.toast.text)
	}
	if len(m.conv.msgs) != 0 {
		t.Errorf("the conversation holds the refused message: %d messages", len(m.conv.msgs))
	}
}
