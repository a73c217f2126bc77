package tui

import (
	"fmt"
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// TestFindJumpsBetweenMatches: ctrl+f opens the search on the bottom
// line; typing finds every match in the text as shown (ignoring case),
// shows the newest and scrolls to it; enter goes to older ones, ↓ to
// newer ones, round the ends; esc closes it and the keys are the
// input's.
func TestFindJumpsBetweenMatches(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	var msgs []engine.Message
	for i := range 12 {
		msgs = append(msgs, engine.Message{Role: "user", Content: fmt.Sprintf("question %d", i)},
			engine.Message{Role: "model", Content: fmt.Sprintf("Answer %d about the Orchard.", i)})
	}
	send(m, engine.Cleared{Messages: msgs})
	m.Update(press("ctrl+f"))
	if m.focused() != focusFind || !strings.Contains(plain(m), "find:") {
		t.Fatalf("ctrl+f: focus %v\n%s", m.focused(), plain(m))
	}
	typeText(m, "orchard")
	if got := plain(m); !strings.Contains(got, "12/12") {
		t.Fatalf("after typing:\n%s", got)
	}
	m.Update(press("enter"))
	m.Update(press("enter"))
	got := plain(m)
	if !strings.Contains(got, "10/12") || !strings.Contains(got, "Answer 9 about") {
		t.Fatalf("two matches up:\n%s", got)
	}
	if m.conv.AtBottom() {
		t.Fatal("the view did not scroll to an older match")
	}
	m.Update(press("down"))
	if !strings.Contains(plain(m), "11/12") {
		t.Fatalf("↓:\n%s", plain(m))
	}
	m.Update(press("down"))
	m.Update(press("down"))
	if !strings.Contains(plain(m), "1/12") {
		t.Fatalf("↓ past the newest does not go round:\n%s", plain(m))
	}
	typeText(m, "zzz")
	if !strings.Contains(plain(m), "no match") {
		t.Fatalf("no match not said:\n%s", plain(m))
	}
	m.Update(press("esc"))
	if m.focused() != focusInput || strings.Contains(plain(m), "find:") {
		t.Fatal("esc did not close the search")
	}
	typeText(m, "x")
	if m.input.Value() != "x" {
		t.Fatal("keys after the search did not reach the input")
	}
}

// TestFindHighlightsMatches: the matches on screen carry the match
// style, the current one its own.
func TestFindHighlightsMatches(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 80, 24, Options{})
	send(m, engine.Cleared{Messages: []engine.Message{{Role: "user", Content: "pear and PEAR and pear"}}})
	m.Update(press("ctrl+f"))
	typeText(m, "pear")
	lines := strings.Split(m.conv.View(), "\n")
	var line string
	for _, l := range lines {
		if strings.Contains(xansi.Strip(l), "pear and PEAR") {
			line = l
		}
	}
	cur := m.st.FindCurrent.Render("pear")
	other := m.st.FindMatch.Render("PEAR")
	if !strings.Contains(line, cur) || !strings.Contains(line, other) {
		t.Fatalf("line %q lacks %q (current) or %q (other)", line, cur, other)
	}
}
