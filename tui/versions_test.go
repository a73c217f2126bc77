package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// turn sends text through the input and pumps the fake until the reply
// is over.
func turn(t *testing.T, m *Model, f *FakeEngine, text string) {
	t.Helper()
	typeText(m, text)
	m.Update(press("enter"))
	pumpIdle(t, m, f)
}

func pumpIdle(t *testing.T, m *Model, f *FakeEngine) {
	t.Helper()
	pump(t, m, f, func() bool { return m.turn.pending == turnNone && !m.turn.busy() && m.turn.phase != phaseIdle })
}

func lastCall(f *FakeEngine) string {
	c := f.Calls()
	if len(c) == 0 {
		return ""
	}
	return c[len(c)-1]
}

// TestRegenerateKeepsVersions: ctrl+g regenerates the last reply, which
// then shows "2/2"; ← and → on an empty input switch versions, and say
// so at the ends; /retry does the same as the key.
func TestRegenerateKeepsVersions(t *testing.T) {
	n := 0
	f := testFake(t, FakeOptions{Reply: func(p string, _ int, _ engine.Settings) string {
		n++
		return "reply number " + strings.Repeat("I", n)
	}})
	m := newTestModel(t, f, 80, 24, Options{})
	turn(t, m, f, "hello")
	m.Update(press("ctrl+g"))
	if lastCall(f) != "Regenerate" {
		t.Fatalf("ctrl+g called %q", lastCall(f))
	}
	pumpIdle(t, m, f)
	got := plain(m)
	for _, want := range []string{"reply number II", "gemma  ‹ 2/2 ›"} {
		if !strings.Contains(got, want) {
			t.Fatalf("after a regenerate the screen lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "reply number I\n") || strings.Count(got, "hello") != 1 {
		t.Fatalf("the old reply or the message is shown twice:\n%s", got)
	}
	m.Update(press("left"))
	if lastCall(f) != "SelectVersion 1 0" {
		t.Fatalf("← called %q", lastCall(f))
	}
	drain(m, f)
	if got := plain(m); !strings.Contains(got, "reply number I") || !strings.Contains(got, "‹ 1/2 ›") {
		t.Fatalf("version 1 not shown:\n%s", got)
	}
	m.Update(press("left"))
	if !strings.Contains(m.toast.last, "version 1 of 2") || lastCall(f) != "SelectVersion 1 0" {
		t.Fatalf("← on the first version: toast %q, call %q", m.toast.last, lastCall(f))
	}
	m.Update(press("right"))
	drain(m, f)
	if got := plain(m); !strings.Contains(got, "reply number II") || !strings.Contains(got, "‹ 2/2 ›") {
		t.Fatalf("→ did not come back to version 2:\n%s", got)
	}
	// With text typed, ← and → move the cursor.
	selects := strings.Count(strings.Join(f.Calls(), "|"), "SelectVersion")
	typeText(m, "ab")
	m.Update(press("left"))
	if strings.Count(strings.Join(f.Calls(), "|"), "SelectVersion") != selects {
		t.Fatal("← with text typed switched versions")
	}
	m.Update(press("ctrl+c"))
	typeText(m, "/retry")
	m.Update(press("enter"))
	pumpIdle(t, m, f)
	if got := plain(m); !strings.Contains(got, "‹ 3/3 ›") {
		t.Fatalf("/retry did not add a version:\n%s", got)
	}
}

// TestRegenerateRefusals: nothing to regenerate, and a reply streaming.
func TestRegenerateRefusals(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	m.Update(press("ctrl+g"))
	if !strings.Contains(m.toast.last, "no reply to regenerate") || strings.Contains(strings.Join(f.Calls(), "|"), "Regenerate") {
		t.Fatalf("toast %q, calls %v", m.toast.last, f.Calls())
	}
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "q"}, {Role: "model", Content: "a"}}})
	send(m, engine.Started{Turn: 2})
	m.Update(press("ctrl+g"))
	if !strings.Contains(m.toast.last, "esc stops it") {
		t.Fatalf("regenerate while streaming: %q", m.toast.last)
	}
}

// TestEditLastMessage: ↑ on an empty input puts the last message there
// to edit, and says so on the rule; enter sends it in its place (Edit);
// the old message stays as version 1/2. The same text again is a
// regenerate; esc leaves the message as it was; ↑ again recalls older
// messages.
func TestEditLastMessage(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	turn(t, m, f, "first question")
	turn(t, m, f, "second question")

	m.Update(press("up"))
	if m.input.Value() != "second question" || !m.input.editing || !strings.Contains(plain(m), "editing your last message") {
		t.Fatalf("↑ did not edit the last message: %q, editing %v\n%s", m.input.Value(), m.input.editing, plain(m))
	}
	for range len("question") {
		m.Update(press("backspace"))
	}
	typeText(m, "try")
	m.Update(press("enter"))
	if lastCall(f) != "Edit second try" {
		t.Fatalf("enter while editing called %q", lastCall(f))
	}
	pumpIdle(t, m, f)
	got := plain(m)
	if !strings.Contains(got, "you  ‹ 2/2 ›") || !strings.Contains(got, "second try") || strings.Contains(got, "editing your") {
		t.Fatalf("after the edit:\n%s", got)
	}
	if n := len(m.conv.msgs); n != 4 {
		t.Fatalf("%d messages after the edit, want 4", n)
	}
	m.Update(press("left"))
	if lastCall(f) != "SelectVersion 2 0" {
		t.Fatalf("← after an edit called %q (the message has the versions)", lastCall(f))
	}
	drain(m, f)
	if got := plain(m); !strings.Contains(got, "second question") || strings.Contains(got, "second try") {
		t.Fatalf("version 1 of the message:\n%s", got)
	}

	// The same text again: a regenerate of its reply.
	m.Update(press("up"))
	m.Update(press("enter"))
	if lastCall(f) != "Regenerate" {
		t.Fatalf("resending the same text called %q", lastCall(f))
	}
	pumpIdle(t, m, f)

	// esc leaves it; ↑ ↑ recalls the message before.
	m.Update(press("up"))
	m.Update(press("esc"))
	if m.input.editing || m.input.Value() != "" || !strings.Contains(m.toast.last, "left as it was") {
		t.Fatalf("esc while editing: editing %v, input %q, toast %q", m.input.editing, m.input.Value(), m.toast.last)
	}
	m.Update(press("up"))
	m.Update(press("up"))
	if m.input.editing || m.input.Value() != "second try" && m.input.Value() != "first question" {
		t.Fatalf("↑ ↑: editing %v, input %q", m.input.editing, m.input.Value())
	}
	m.Update(press("ctrl+c"))

	// /edit TEXT sends at once.
	typeText(m, "/edit second, third version")
	m.Update(press("enter"))
	if lastCall(f) != "Edit second, third version" {
		t.Fatalf("/edit TEXT called %q", lastCall(f))
	}
}

// TestRefusedEditComesBack: an edit the engine refuses goes back into
// the input, still an edit, and the conversation is the engine's.
func TestRefusedEditComesBack(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "short"}, {Role: "model", Content: "ok"}}})
	m.Update(press("up"))
	m.input.SetValue("a very long message")
	m.Update(press("enter"))
	orig := []engine.Message{{Role: "user", Content: "short"}, {Role: "model", Content: "ok"}}
	send(m, engine.Branched{Op: "edit", Messages: []engine.Message{{Role: "user", Content: "a very long message", Version: 1, Versions: 2}}},
		engine.Failed{Op: "edit", Err: errors.New("the conversation is too long for the context")},
		engine.Branched{Op: "edit", Messages: orig})
	if m.input.Value() != "a very long message" || !m.input.editing {
		t.Fatalf("refused edit: input %q, editing %v", m.input.Value(), m.input.editing)
	}
	got := plain(m)
	if !strings.Contains(got, "short") || strings.Contains(got, "‹") {
		t.Fatalf("conversation after a refused edit:\n%s", got)
	}
	m.Update(press("esc"))
	if m.input.Value() != "" || m.input.editing {
		t.Fatal("esc did not clear the refused edit")
	}
}
