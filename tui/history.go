package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// historyPanel lists the conversations the history keeps, newest first,
// with a search over their text. It takes the keys when it opens: typing
// searches, ↑/↓ select, enter resumes, ctrl+r renames, ctrl+d deletes
// after asking.
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
	renaming      bool // the footer is the selected conversation's new title
	field         textinput.Model
	title         textinput.Model // the new title while renaming
	keys          historyKeys
}

// histRows is how many conversations the panel shows at once.
const histRows = 7

func newHistoryPanel(st *Styles) historyPanel {
	f := textinput.New()
	f.Prompt = ""
	f.Placeholder = "type to search every conversation"
	f.CharLimit = 200
	title := textinput.New()
	title.Prompt = ""
	title.Placeholder = "empty: its first message"
	title.CharLimit = 80
	return historyPanel{st: st, field: f, title: title, keys: newHistoryKeys()}
}

func (h *historyPanel) SetSize(w, hgt int) {
	h.width, h.height = w, hgt
	h.field.SetWidth(max(10, w-14))
	h.title.SetWidth(max(10, w-h.st.PanelBorder.GetHorizontalFrameSize()-len("title: ")-1))
}

// Query is the search as typed.
func (h *historyPanel) Query() string { return strings.TrimSpace(h.field.Value()) }

// SetQuery puts a search in the field, as if typed.
func (h *historyPanel) SetQuery(q string) {
	h.field.SetValue(q)
	h.field.CursorEnd()
}

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
	h.stopRenaming()
	h.field.Blur()
}

func (h *historyPanel) Placeholder() string {
	return "keys go to the history panel · esc closes it, tab returns here"
}

func (h *historyPanel) stopRenaming() {
	h.renaming = false
	h.title.Blur()
}

// Update handles a key or a paste while the panel has the focus.
func (h *historyPanel) Update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return h.key(msg)
	case tea.PasteMsg:
		return h.paste(msg)
	}
	return nil, nil
}

func (h *historyPanel) key(msg tea.KeyPressMsg) (action, tea.Cmd) {
	if h.renaming {
		switch {
		case key.Matches(msg, h.keys.Accept):
			h.stopRenaming()
			if it, ok := h.selected(); ok {
				return renameHistory{it.ID, strings.TrimSpace(h.title.Value())}, nil
			}
			return nil, nil
		case key.Matches(msg, h.keys.Cancel):
			h.stopRenaming()
			return nil, nil
		}
		var cmd tea.Cmd
		h.title, cmd = h.title.Update(msg)
		return nil, cmd
	}
	if key.Matches(msg, h.keys.Rename) {
		it, ok := h.selected()
		if !ok {
			return nil, nil
		}
		h.renaming = true
		h.title.SetValue(it.Title)
		h.title.CursorEnd()
		return nil, h.title.Focus()
	}
	if h.confirmDelete {
		// Only y deletes; any other key keeps it.
		h.confirmDelete = false
		if key.Matches(msg, h.keys.Yes) {
			if it, ok := h.selected(); ok && it.ID != "" {
				return deleteHistory{it.ID}, nil
			}
		}
		return nil, nil
	}
	switch {
	case key.Matches(msg, h.keys.Up):
		h.cursor = max(0, h.cursor-1)
	case key.Matches(msg, h.keys.Down):
		h.cursor = min(len(h.list)-1, h.cursor+1)
	case key.Matches(msg, h.keys.PageUp):
		h.cursor = max(0, h.cursor-histRows)
	case key.Matches(msg, h.keys.PageDown):
		h.cursor = min(len(h.list)-1, h.cursor+histRows)
	case key.Matches(msg, h.keys.Resume):
		if it, ok := h.selected(); ok {
			return resumeHistory{it.ID}, nil
		}
	case key.Matches(msg, h.keys.Delete):
		if it, ok := h.selected(); ok && it.ID != "" {
			h.confirmDelete = true
		}
	case key.Matches(msg, h.keys.Close):
		return closePanelAction{}, nil
	case key.Matches(msg, h.keys.Leave):
		return leaveAction{}, nil
	default:
		before := h.field.Value()
		var cmd tea.Cmd
		h.field, cmd = h.field.Update(msg)
		if h.field.Value() != before {
			return searchHistory{h.Query()}, cmd
		}
		return nil, cmd
	}
	h.cursor = max(0, h.cursor)
	h.scroll()
	return nil, nil
}

// paste types into the search, or the new title.
func (h *historyPanel) paste(msg tea.PasteMsg) (action, tea.Cmd) {
	if h.renaming {
		var cmd tea.Cmd
		h.title, cmd = h.title.Update(tea.PasteMsg{Content: strings.Join(strings.Fields(msg.Content), " ")})
		return nil, cmd
	}
	before := h.field.Value()
	var cmd tea.Cmd
	h.field, cmd = h.field.Update(msg)
	if h.field.Value() != before {
		return searchHistory{h.Query()}, cmd
	}
	return nil, cmd
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
	switch {
	case h.renaming:
		title += st.Dim.Render(" · enter renames · esc keeps the title")
	case h.focused:
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
		line := mark + padRight(fitTitle(name, titleW), titleW) + fmt.Sprintf("  %-12s  %5s  %7s",
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
	if h.renaming {
		return xansi.Truncate(st.Label.Render("title: ")+h.title.View(), w, "…")
	}
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
	return st.Dim.Render(xansi.Truncate("enter resume · "+h.keys.Rename.Help().Key+" rename · ctrl+d delete · tab input · esc close", w, "…"))
}

// fitTitle cuts a title to w cells keeping the number that tells it from
// others alike ("Plan the pruning… (2)").
func fitTitle(title string, w int) string {
	if xansi.StringWidth(title) <= w {
		return title
	}
	if i := strings.LastIndex(title, " ("); i > 0 && strings.HasSuffix(title, ")") && isDigits(title[i+2:len(title)-1]) {
		if n := title[i:]; w > len(n)+4 {
			return xansi.Truncate(title[:i], w-len(n), "…") + n
		}
	}
	return xansi.Truncate(title, w, "…")
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
