package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// historyPanel lists the conversations the history keeps, newest first,
// with a search over their text. It takes the keys when it opens: typing
// searches, ↑/↓ select, enter resumes, ctrl+d deletes after asking.
type historyPanel struct {
	st            *Styles
	width, height int
	list          []engine.HistoryInfo
	listed        bool   // a list has arrived
	shownQuery    string // the query the list answers
	cursor        int
	offset        int
	focused       bool
	confirmDelete bool
	field         textinput.Model
}

// histAction is what the panel asks the model to do.
type histAction struct {
	op string // search, resume, delete, close, blur; "" for nothing
	id string
}

// histRows is how many conversations the panel shows at once.
const histRows = 7

func newHistoryPanel(st *Styles) historyPanel {
	f := textinput.New()
	f.Prompt = ""
	f.Placeholder = "type to search every conversation"
	f.CharLimit = 200
	return historyPanel{st: st, field: f}
}

func (h *historyPanel) SetSize(w, hgt int) {
	h.width, h.height = w, hgt
	h.field.SetWidth(max(10, w-14))
}

// Query is the search as typed.
func (h *historyPanel) Query() string { return strings.TrimSpace(h.field.Value()) }

// SetList takes a list if it answers the query typed now; one for an
// older query is dropped (the answer to the newer one is on its way).
func (h *historyPanel) SetList(ev engine.History) bool {
	if strings.TrimSpace(ev.Query) != h.Query() {
		return false
	}
	var sel string
	if it, ok := h.selected(); ok {
		sel = it.ID
	}
	h.list, h.listed, h.shownQuery = ev.List, true, ev.Query
	h.cursor = 0
	for i, it := range h.list {
		if it.ID == sel && sel != "" {
			h.cursor = i
		}
	}
	h.scroll()
	return true
}

func (h *historyPanel) selected() (engine.HistoryInfo, bool) {
	if h.cursor < 0 || h.cursor >= len(h.list) {
		return engine.HistoryInfo{}, false
	}
	return h.list[h.cursor], true
}

func (h *historyPanel) Focus() tea.Cmd {
	h.focused = true
	return h.field.Focus()
}

func (h *historyPanel) Blur() {
	h.focused, h.confirmDelete = false, false
	h.field.Blur()
}

// Update handles a key while the panel has the focus.
func (h *historyPanel) Update(msg tea.KeyPressMsg) (histAction, tea.Cmd) {
	if h.confirmDelete {
		// Only y deletes; any other key keeps it.
		h.confirmDelete = false
		if s := msg.String(); s == "y" || s == "Y" {
			if it, ok := h.selected(); ok && it.ID != "" {
				return histAction{op: "delete", id: it.ID}, nil
			}
		}
		return histAction{}, nil
	}
	switch msg.String() {
	case "up", "ctrl+p":
		h.cursor = max(0, h.cursor-1)
	case "down", "ctrl+n":
		h.cursor = min(len(h.list)-1, h.cursor+1)
	case "pgup":
		h.cursor = max(0, h.cursor-histRows)
	case "pgdown":
		h.cursor = min(len(h.list)-1, h.cursor+histRows)
	case "enter":
		if it, ok := h.selected(); ok {
			return histAction{op: "resume", id: it.ID}, nil
		}
	case "ctrl+d", "delete":
		if it, ok := h.selected(); ok && it.ID != "" {
			h.confirmDelete = true
		}
	case "esc":
		return histAction{op: "close"}, nil
	case "tab":
		return histAction{op: "blur"}, nil
	default:
		before := h.field.Value()
		var cmd tea.Cmd
		h.field, cmd = h.field.Update(msg)
		if h.field.Value() != before {
			return histAction{op: "search"}, cmd
		}
		return histAction{}, cmd
	}
	h.cursor = max(0, h.cursor)
	h.scroll()
	return histAction{}, nil
}

// Paste types into the search.
func (h *historyPanel) Paste(msg tea.PasteMsg) (histAction, tea.Cmd) {
	before := h.field.Value()
	var cmd tea.Cmd
	h.field, cmd = h.field.Update(msg)
	if h.field.Value() != before {
		return histAction{op: "search"}, cmd
	}
	return histAction{}, cmd
}

func (h *historyPanel) scroll() {
	if h.cursor < h.offset {
		h.offset = h.cursor
	}
	if h.cursor >= h.offset+histRows {
		h.offset = h.cursor - histRows + 1
	}
	h.offset = max(0, min(h.offset, len(h.list)-histRows))
}

// Height is the rows View takes.
func (h *historyPanel) Height() int {
	rows := max(1, min(len(h.list), histRows))
	return 3 + rows + 1 + h.st.PanelBorder.GetVerticalFrameSize() // title, search, header, rows, footer
}

func (h *historyPanel) View() string {
	st := h.st
	border := st.PanelBorder
	if h.focused {
		border = st.PanelFocused
	}
	inner := max(h.width-border.GetHorizontalFrameSize(), 20)
	title := st.PanelTitle.Render(fmt.Sprintf("history (%d)", len(h.list)))
	if h.shownQuery != "" {
		title = st.PanelTitle.Render(fmt.Sprintf("history · %d found", len(h.list)))
	}
	if h.focused {
		title += st.Dim.Render(" · the keys act here")
	}
	lines := []string{title, st.Label.Render("search: ") + h.field.View()}

	const fixed = 12 + 5 + 7 + 4*2 // updated, turns, tokens, gaps
	titleW := max(8, inner-fixed-2)
	hdr := "  " + padRight("conversation", titleW) + fmt.Sprintf("  %-12s  %5s  %7s", "updated", "turns", "cache")
	lines = append(lines, st.Dim.Render(xansi.Truncate(hdr, inner, "")))
	switch {
	case !h.listed:
		lines = append(lines, st.Dim.Render("loading…"))
	case len(h.list) == 0 && h.shownQuery != "":
		lines = append(lines, st.Dim.Render("no conversation holds that text"))
	case len(h.list) == 0:
		lines = append(lines, st.Dim.Render("none yet · every conversation is kept here"))
	}
	end := min(len(h.list), h.offset+histRows)
	for i := h.offset; i < end; i++ {
		it := h.list[i]
		mark := "  "
		if it.Current {
			mark = "● "
		}
		cache := "text"
		if it.KV {
			cache = commas(it.Tokens)
			if it.Current && it.Tokens == 0 {
				cache = "live"
			}
		}
		name := orDefault(it.Title, "(no message)")
		if !it.Compatible {
			name = "⚠ " + name
		}
		line := mark + padRight(xansi.Truncate(name, titleW, "…"), titleW) + fmt.Sprintf("  %-12s  %5s  %7s",
			it.Updated.Local().Format("Jan 02 15:04"), commas(it.Turns), cache)
		line = padRight(xansi.Truncate(line, inner, "…"), inner)
		switch {
		case i == h.cursor && h.focused:
			line = st.Selected.Render(line)
		case !it.Compatible:
			line = st.Incompatible.Render(line)
		}
		lines = append(lines, line)
	}
	lines = append(lines, h.footer(inner))
	return border.Width(h.width).Render(strings.Join(lines, "\n"))
}

func (h *historyPanel) footer(w int) string {
	st := h.st
	if h.confirmDelete {
		it, _ := h.selected()
		return st.ConfirmPrompt.Render(xansi.Truncate(fmt.Sprintf("Delete %q from the history? y deletes · any other key keeps it", it.Title), w, "…"))
	}
	if it, ok := h.selected(); ok && it.Snippet != "" && h.focused {
		return st.Dim.Render(xansi.Truncate(it.Snippet, w, "…"))
	}
	if !h.focused {
		return st.Dim.Render(xansi.Truncate("tab selects · /history TEXT searches", w, "…"))
	}
	return st.Dim.Render(xansi.Truncate("enter resume · ctrl+d delete · tab input · esc close", w, "…"))
}
