package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

func TestPicker(t *testing.T) {
	p := NewPicker([]PickerEntry{
		{Name: "broken", Family: "r1", Path: "/m/broken", Reason: "chunk_2/weights.bin is 12 bytes, want 4,096"},
		{Name: "e2b", Family: "r1", Size: "3.1 GiB", Path: "/m/e2b", Valid: true},
		{Name: "e4b", Family: "v2", Size: "5.9 GiB", Path: "/m/e4b", Valid: true},
	})
	p.SetSize(80, 24)
	view := xansi.Strip(p.View())
	for _, want := range []string{"Choose a model", "▸ e2b     r1  3.1 GiB", "chunk_2/weights.bin is 12 bytes"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	// An invalid bundle cannot be chosen.
	p.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if p.Done() {
		t.Fatal("chose an invalid bundle")
	}
	p.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	p.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if e, ok := p.Choice(); !ok || e.Path != "/m/e4b" {
		t.Fatalf("choice = %+v, %v", e, ok)
	}
	// Wide characters count two cells: the family column stays aligned.
	w := NewPicker([]PickerEntry{
		{Name: "果樹園🍎", Family: "r1", Size: "1 GiB", Path: "/m/a", Valid: true},
		{Name: "orchard", Family: "v2", Size: "2 GiB", Path: "/m/b", Valid: true},
	})
	w.SetSize(80, 24)
	col := -1
	for _, l := range strings.Split(xansi.Strip(w.View()), "\n") {
		for _, fam := range []string{" r1 ", " v2 "} {
			if i := strings.Index(l, fam); i >= 0 {
				c := xansi.StringWidth(l[:i])
				if col >= 0 && c != col {
					t.Errorf("the family column moves with wide names:\n%s", xansi.Strip(w.View()))
				}
				col = c
			}
		}
	}
	q := NewPicker(nil)
	q.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if _, ok := q.Choice(); ok || !q.Done() {
		t.Fatal("esc should leave without a choice")
	}
}
