package tui

import (
	"reflect"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// TestEveryBindingIsRouted holds the routing table to the key map: a
// binding added to keyMap without a row in keyRoutes would do nothing.
// Newline is the textarea's own (the input's key map).
func TestEveryBindingIsRouted(t *testing.T) {
	k := defaultKeyMap()
	routes := keyRoutes(&k)
	routed := map[*key.Binding]bool{}
	for _, r := range routes {
		routed[r.key] = true
	}
	v := reflect.ValueOf(&k).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "Newline" {
			continue
		}
		if b := v.Field(i).Addr().Interface().(*key.Binding); !routed[b] {
			t.Errorf("the binding %s has no route", name)
		}
	}
	if last := routes[len(routes)-1]; last.key != nil || last.when != nil {
		t.Error("the last route must take every key (the input's)")
	}
}

// TestFocusStack: a question opened over a focused panel takes the keys
// and the input's placeholder says so; answering gives them back to the
// panel, not to the input; setFocus leaves one component alone.
func TestFocusStack(t *testing.T) {
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 100, 30, Options{})
	m.cmdCheckpoints("")
	m.setFocus(focusPanel)
	if m.focused() != focusPanel || !m.ckpts.focused || m.input.ta.Focused() {
		t.Fatalf("panel focus: focused %v, panel %v, input %v", m.focused(), m.ckpts.focused, m.input.ta.Focused())
	}
	m.ask("Sure?", nil)
	if m.focused() != focusConfirm || len(m.layers) != 2 || m.ckpts.focused || m.input.ta.Placeholder != m.confirm.Placeholder() {
		t.Fatalf("question: layers %v, panel focused %v, placeholder %q", m.layers, m.ckpts.focused, m.input.ta.Placeholder)
	}
	m.Update(tea.KeyPressMsg{Code: 'n', Text: "n"})
	if m.focused() != focusPanel || len(m.layers) != 1 || !m.ckpts.focused || m.input.ta.Placeholder != m.ckpts.Placeholder() {
		t.Fatalf("answered: layers %v, panel focused %v, placeholder %q", m.layers, m.ckpts.focused, m.input.ta.Placeholder)
	}
	m.setFocus(focusInput)
	if len(m.layers) != 1 || m.ckpts.focused || !m.input.ta.Focused() || m.input.ta.Placeholder != inputPlaceholder {
		t.Fatalf("back to the input: layers %v, panel %v, placeholder %q", m.layers, m.ckpts.focused, m.input.ta.Placeholder)
	}
}

// TestInputUpAndDown: the input says what ↑ and ↓ mean, from its own
// state alone.
func TestInputUpAndDown(t *testing.T) {
	up, down := tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyDown}
	in := newInput(newStyles(true, false), defaultKeyMap())
	in.SetSize(40, 6)
	if a, _ := in.Update(up); a != (editLastAction{}) {
		t.Fatalf("↑ on an empty input: %#v, want editLastAction", a)
	}
	in.Remember("first")
	in.StartEditing("second")
	if a, _ := in.Update(up); a != (browsedAction{}) || in.Editing() || in.Value() != "first" {
		t.Fatalf("↑ on the message being edited: %#v, editing %v, value %q", a, in.Editing(), in.Value())
	}
	if a, _ := in.Update(down); a != (browsedAction{}) || in.Value() != "" {
		t.Fatalf("↓ back past the history: %#v, value %q", a, in.Value())
	}
	in.SetValue("two\nlines")
	if a, _ := in.Update(up); a != nil {
		t.Fatalf("↑ in a text: %#v, want the cursor to move", a)
	}
	if in.EditLast("") || in.Value() != "first" {
		t.Fatalf("EditLast with no message sent should walk the history: %q", in.Value())
	}
}
