package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/engine"
)

// TestPanelsShowLocalTime: stores keep times in UTC; the checkpoints and
// history panels show them in the user's zone, as `ckpt ls` does.
func TestPanelsShowLocalTime(t *testing.T) {
	saved := time.Local
	time.Local = time.FixedZone("UTC+5", 5*3600)
	defer func() { time.Local = saved }()
	at := time.Date(2026, 3, 4, 10, 30, 0, 0, time.UTC)
	want := "Mar 04 15:30"

	st := newStyles(true, true)
	h := newHistoryPanel(st)
	h.SetSize(100, 20)
	h.SetList(engine.History{Op: "list", List: []engine.HistoryInfo{{ID: "a", Title: "hello", Updated: at, Compatible: true}}})
	if v := h.View(); !strings.Contains(v, want) {
		t.Errorf("history panel shows no %q:\n%s", want, v)
	}
	c := newCheckpoints(st)
	c.SetSize(100, 20)
	c.SetList([]engine.CheckpointInfo{{Name: "alpha", Created: at}}, "")
	if v := c.View(); !strings.Contains(v, want) {
		t.Errorf("checkpoints panel shows no %q:\n%s", want, v)
	}
}
