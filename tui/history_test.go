package tui

import (
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/engine"
)

// TestNewKeepsConversationInHistory: /new starts afresh and says the
// last conversation is in the history; ctrl+l lists it, typing searches
// every conversation's text, enter resumes the selected one and gives
// the keys back to the input.
func TestNewKeepsConversationInHistory(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	turn(t, m, f, "tell me about pears")
	typeText(m, "/new")
	m.Update(press("enter"))
	drain(m, f)
	if got := plain(m); !strings.Contains(got, "Type a message") || !strings.Contains(m.toast.last, "kept in the history") {
		t.Fatalf("after /new (toast %q):\n%s", m.toast.last, got)
	}
	turn(t, m, f, "and now apples")

	m.Update(press("ctrl+l"))
	drain(m, f)
	if m.focused() != focusHistory || lastCall(f) != "ListHistory " {
		t.Fatalf("ctrl+l: focus %v, last call %q", m.focused(), lastCall(f))
	}
	got := plain(m)
	for _, want := range []string{"history (1)", "tell me about pears", "the keys act here", "keys go to the history panel"} {
		if !strings.Contains(got, want) {
			t.Fatalf("history panel lacks %q:\n%s", want, got)
		}
	}
	typeText(m, "pear")
	if lastCall(f) != "ListHistory pear" {
		t.Fatalf("typing searched with %q", lastCall(f))
	}
	drain(m, f)
	if got := plain(m); !strings.Contains(got, "1 found") {
		t.Fatalf("search result:\n%s", got)
	}
	// A list for an older query is dropped: a newer answer is coming.
	stale := engine.History{Op: "list", Query: "pe", List: []engine.HistoryInfo{{ID: "x", Title: "stale entry"}}}
	send(m, stale)
	if strings.Contains(plain(m), "stale entry") {
		t.Fatal("a list for an older query replaced the current one")
	}
	m.Update(press("enter"))
	if !strings.HasPrefix(lastCall(f), "ResumeHistory ") {
		t.Fatalf("enter called %q", lastCall(f))
	}
	drain(m, f)
	got = plain(m)
	if m.focused() != focusInput || m.panel != panelNone || !strings.Contains(got, "tell me about pears") || strings.Contains(got, "and now apples") {
		t.Fatalf("after resuming (focus %v, panel %v):\n%s", m.focused(), m.panel, got)
	}
	// What was on screen went into the history; both are there now.
	m.Update(press("ctrl+l"))
	drain(m, f)
	if got := plain(m); !strings.Contains(got, "history (2)") || !strings.Contains(got, "and now apples") || !strings.Contains(got, "● tell me about pears") {
		t.Fatalf("history after resuming:\n%s", got)
	}
}

// TestHistoryDeleteAsks: ctrl+d asks; only y deletes; tab gives the
// keys back without closing the panel, tab again takes them.
func TestHistoryDeleteAsks(t *testing.T) {
	f := testFake(t, FakeOptions{})
	goldenHistory(f)
	m := newTestModel(t, f, 120, 40, Options{})
	typeText(m, "/history")
	m.Update(press("enter"))
	drain(m, f)
	m.Update(press("down"))
	m.Update(press("ctrl+d"))
	if got := plain(m); !strings.Contains(got, `Delete "Plan the pruning calendar" from the history?`) {
		t.Fatalf("ctrl+d did not ask:\n%s", got)
	}
	m.Update(press("n"))
	if strings.Contains(strings.Join(f.Calls(), "|"), "DeleteHistory") {
		t.Fatal("n deleted")
	}
	m.Update(press("ctrl+d"))
	m.Update(press("y"))
	if lastCall(f) != "DeleteHistory 20260313-090000-b2" {
		t.Fatalf("y called %q", lastCall(f))
	}
	drain(m, f)
	if got := plain(m); strings.Contains(got, "pruning calendar") || !strings.Contains(m.toast.last, "Deleted") {
		t.Fatalf("after delete (toast %q):\n%s", m.toast.last, got)
	}
	m.Update(press("tab"))
	if m.focused() != focusInput || m.panel != panelHistory {
		t.Fatalf("tab: focus %v panel %v", m.focused(), m.panel)
	}
	typeText(m, "d")
	if m.input.Value() != "d" {
		t.Fatal("a key typed after tab did not reach the input")
	}
	m.Update(press("ctrl+c"))
	m.Update(press("tab"))
	if m.focused() != focusHistory {
		t.Fatalf("tab did not give the keys back to the panel: %v", m.focused())
	}
	m.Update(press("esc"))
	if m.panel != panelNone || m.focused() != focusInput {
		t.Fatal("esc did not close the panel")
	}
}

// TestPaletteRunsNewCommands: the palette opens the history and the
// search and regenerates, as their keys do.
func TestPaletteRunsNewCommands(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 40, Options{})
	turn(t, m, f, "hello")
	for _, tt := range []struct {
		filter string
		check  func() bool
	}{
		{"history", func() bool { return m.focused() == focusHistory && m.panel == panelHistory }},
		{"search this", func() bool { return m.focused() == focusFind }},
		{"regenerate", func() bool { return lastCall(f) == "Regenerate" }},
	} {
		m.Update(press("ctrl+p"))
		typeText(m, tt.filter)
		m.Update(press("enter"))
		if !tt.check() {
			t.Errorf("palette %q: focus %v, panel %v, last call %q", tt.filter, m.focused(), m.panel, lastCall(f))
		}
		m.Update(press("esc"))
		drain(m, f)
	}
}

// TestHistoryRename: ctrl+r in the history panel edits the selected
// conversation's title (esc keeps it); /title names the conversation on
// screen; conversations that start alike are told apart in the list.
func TestHistoryRename(t *testing.T) {
	f := testFake(t, FakeOptions{})
	goldenHistory(f)
	same := []engine.Message{{Role: "user", Content: "Plan the pruning calendar"}, {Role: "model", Content: "Again."}}
	f.AddHistory(engine.HistoryInfo{ID: "20260314-100000-d4", Title: "Plan the pruning calendar", Updated: testTime.Add(-2 * 3600e9),
		Turns: 1, Bundle: "demo-r1-small", Compatible: true}, same)
	m := newTestModel(t, f, 120, 40, Options{})
	m.Update(press("ctrl+l"))
	drain(m, f)
	got := plain(m)
	if !strings.Contains(got, "Plan the pruning cale… (2)") || strings.Count(got, "Plan the pruning cale") != 2 {
		t.Fatalf("the two alike are not told apart:\n%s", got)
	}
	if !strings.Contains(got, "ctrl+r rename") {
		t.Fatalf("the footer does not say how to rename:\n%s", got)
	}
	// The second row: the later of the two alike (its number).
	m.Update(press("down"))
	m.Update(press("ctrl+r"))
	if got := plain(m); !strings.Contains(got, "title: Plan the pruning calendar (2)") {
		t.Fatalf("ctrl+r:\n%s", got)
	}
	m.Update(press("esc"))
	if m.hist.renaming || strings.Contains(lastCall(f), "RenameHistory") || m.focused() != focusHistory {
		t.Fatalf("esc: renaming %v, last call %q, focus %v", m.hist.renaming, lastCall(f), m.focused())
	}
	m.Update(press("ctrl+r"))
	m.Update(press("ctrl+u"))
	typeText(m, "Winter pruning")
	m.Update(press("enter"))
	if lastCall(f) != "RenameHistory 20260314-100000-d4 Winter pruning" {
		t.Fatalf("enter called %q", lastCall(f))
	}
	drain(m, f)
	got = plain(m)
	if !strings.Contains(got, "Winter pruning") || strings.Contains(got, "calendar (2)") || !strings.Contains(m.toast.last, `Renamed the conversation "Winter pruning" in the history.`) {
		t.Fatalf("after the rename (toast %q):\n%s", m.toast.last, got)
	}

	// /title names the conversation on screen, keeping it first.
	m.Update(press("esc"))
	turn(t, m, f, "what about cherries?")
	m.runCommand("/title Cherry notes")
	drain(m, f)
	if lastCall(f) != "RenameHistory  Cherry notes" {
		t.Fatalf("/title called %q", lastCall(f))
	}
	m.Update(press("ctrl+l"))
	drain(m, f)
	if got := plain(m); !strings.Contains(got, "● Cherry notes") {
		t.Fatalf("/title:\n%s", got)
	}
}
