package tui

import (
	"bytes"
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/orchard-llm/orchard/engine"
)

// fixedNow is the clock of every test model.
var testTime = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func testFake(t testing.TB, o FakeOptions) *FakeEngine {
	t.Helper()
	if o.Now == nil {
		o.Now = func() time.Time { return testTime }
	}
	f := NewFakeEngine(o)
	t.Cleanup(func() { f.Close() })
	return f
}

// newTestModel builds the chat screen on eng at w×h, calling the engine
// inline (no queue goroutine) so tests are deterministic.
func newTestModel(t testing.TB, eng Engine, w, h int, opts Options) *Model {
	t.Helper()
	if opts.Env == nil {
		opts.Env = []string{"HOME=" + t.TempDir()}
	}
	opts.NoNativeClipboard = true
	if opts.AutosaveEvery == 0 {
		opts.AutosaveEvery = -1
	}
	if opts.Theme == "" {
		opts.Theme = "dark"
	}
	m, err := newModel(eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.now = func() time.Time { return testTime }
	m.Init()
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// send delivers events as one engine batch, then a frame tick.
func send(m *Model, evs ...engine.Event) {
	m.Update(engineMsg{events: evs})
	m.Update(frameMsg{})
}

// pump feeds the fake's events to m until cond holds.
func pump(t testing.TB, m *Model, f Engine, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case ev, ok := <-f.Events():
			if !ok {
				t.Fatal("engine closed")
			}
			m.Update(engineMsg{events: []engine.Event{ev}})
		case <-deadline:
			t.Fatalf("condition not met; screen:\n%s", plain(m))
		}
	}
	m.Update(frameMsg{})
}

// drain feeds whatever events are waiting.
func drain(m *Model, f *FakeEngine) {
	for {
		select {
		case ev := <-f.Events():
			m.Update(engineMsg{events: []engine.Event{ev}})
		case <-time.After(50 * time.Millisecond):
			m.Update(frameMsg{})
			return
		}
	}
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+end":
		return tea.KeyPressMsg{Code: tea.KeyEnd, Mod: tea.ModCtrl}
	case "shift+enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModShift}
	}
	if len(s) > 5 && s[:5] == "ctrl+" {
		return tea.KeyPressMsg{Code: rune(s[5]), Mod: tea.ModCtrl}
	}
	r := []rune(s)
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// render returns the view converted to a colour profile.
func render(m *Model, p colorprofile.Profile) string {
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	w.WriteString(m.View().Content)
	return b.String()
}

// plain is the screen as text.
func plain(m *Model) string { return render(m, colorprofile.NoTTY) }

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}
