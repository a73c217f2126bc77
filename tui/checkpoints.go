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

type ckptMode int

const (
	ckptBrowse ckptMode = iota
	ckptConfirmDelete
	ckptRename
	ckptSaveAs
)

// checkpoints is the panel of saved conversations.
type checkpoints struct {
	st            *Styles
	width, height int
	list          []engine.CheckpointInfo
	listed        bool // a list has arrived from the engine
	cursor        int
	offset        int
	focused       bool
	mode          ckptMode
	field         textinput.Model
	keys          checkpointKeys
	thumb         *thumbCache // the selected checkpoint's picture, drawn
}

// ckptRows is how many checkpoints the panel shows at once.
const ckptRows = 6

func newCheckpoints(st *Styles) checkpoints {
	f := textinput.New()
	f.Prompt = ""
	f.CharLimit = 120
	return checkpoints{st: st, field: f, keys: newCheckpointKeys(), thumb: &thumbCache{}}
}

func (c *checkpoints) SetSize(w, h int) {
	c.width, c.height = w, h
	c.field.SetWidth(max(10, w-30))
}

// SetList replaces the list, putting the cursor on focus if given, else
// keeping it on the checkpoint it was on.
func (c *checkpoints) SetList(l []engine.CheckpointInfo, focus string) {
	if focus == "" {
		if cp, ok := c.selected(); ok {
			focus = cp.Name
		}
	}
	c.list = l
	c.listed = true
	if focus != "" {
		for i, cp := range l {
			if cp.Name == focus {
				c.cursor = i
			}
		}
	}
	c.cursor = max(0, min(c.cursor, len(l)-1))
	c.scroll()
}

func (c *checkpoints) Names() []string {
	names := make([]string, len(c.list))
	for i, cp := range c.list {
		names[i] = cp.Name
	}
	return names
}

func (c *checkpoints) selected() (engine.CheckpointInfo, bool) {
	if c.cursor < 0 || c.cursor >= len(c.list) {
		return engine.CheckpointInfo{}, false
	}
	return c.list[c.cursor], true
}

// Listed reports whether a list has arrived from the engine.
func (c *checkpoints) Listed() bool { return c.listed }

func (c *checkpoints) Focus() tea.Cmd { c.focused = true; return nil }
func (c *checkpoints) Blur()          { c.focused = false; c.mode = ckptBrowse; c.field.Blur() }

func (c *checkpoints) Placeholder() string {
	return "keys go to the checkpoints panel · esc returns here"
}

// Update handles a key or a paste while the panel has the focus; a paste
// types into a name being given, and is dropped otherwise.
func (c *checkpoints) Update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return c.key(msg)
	case tea.PasteMsg:
		if c.mode == ckptRename || c.mode == ckptSaveAs {
			var cmd tea.Cmd
			c.field, cmd = c.field.Update(msg)
			return nil, cmd
		}
	}
	return nil, nil
}

func (c *checkpoints) key(msg tea.KeyPressMsg) (action, tea.Cmd) {
	switch c.mode {
	case ckptConfirmDelete:
		// Only y deletes; any other key keeps the checkpoint, so text
		// typed on without looking cannot confirm.
		c.mode = ckptBrowse
		if key.Matches(msg, c.keys.Yes) {
			if cp, ok := c.selected(); ok {
				return deleteCheckpoint{cp.Name}, nil
			}
		}
		return nil, nil
	case ckptRename, ckptSaveAs:
		switch {
		case key.Matches(msg, c.keys.Accept):
			name := strings.TrimSpace(c.field.Value())
			mode := c.mode
			c.mode = ckptBrowse
			c.field.Blur()
			if name == "" {
				return nil, nil
			}
			if mode == ckptSaveAs {
				return saveCheckpoint{name}, nil
			}
			if cp, ok := c.selected(); ok && name != cp.Name {
				return renameCheckpoint{cp.Name, name}, nil
			}
			return nil, nil
		case key.Matches(msg, c.keys.Cancel):
			c.mode = ckptBrowse
			c.field.Blur()
			return nil, nil
		}
		var cmd tea.Cmd
		c.field, cmd = c.field.Update(msg)
		return nil, cmd
	}

	switch {
	case key.Matches(msg, c.keys.Up):
		c.cursor = max(0, c.cursor-1)
	case key.Matches(msg, c.keys.Down):
		c.cursor = min(len(c.list)-1, c.cursor+1)
	case key.Matches(msg, c.keys.First):
		c.cursor = 0
	case key.Matches(msg, c.keys.Last):
		c.cursor = len(c.list) - 1
	case key.Matches(msg, c.keys.Load):
		if cp, ok := c.selected(); ok {
			return loadCheckpoint{cp.Name}, nil
		}
	case key.Matches(msg, c.keys.Fork):
		if cp, ok := c.selected(); ok {
			return forkCheckpoint{cp.Name}, nil
		}
	case key.Matches(msg, c.keys.Delete):
		if _, ok := c.selected(); ok {
			c.mode = ckptConfirmDelete
		}
	case key.Matches(msg, c.keys.Rename):
		if cp, ok := c.selected(); ok {
			c.mode = ckptRename
			c.field.SetValue(cp.Name)
			c.field.CursorEnd()
			return nil, c.field.Focus()
		}
	case key.Matches(msg, c.keys.Save):
		c.mode = ckptSaveAs
		c.field.SetValue("")
		return nil, c.field.Focus()
	case key.Matches(msg, c.keys.Leave):
		return leaveAction{}, nil
	}
	c.cursor = max(0, c.cursor)
	c.scroll()
	return nil, nil
}

func (c *checkpoints) scroll() {
	if c.cursor < c.offset {
		c.offset = c.cursor
	}
	if c.cursor >= c.offset+ckptRows {
		c.offset = c.cursor - ckptRows + 1
	}
	c.offset = max(0, min(c.offset, len(c.list)-ckptRows))
}

// Height is the rows View takes.
func (c *checkpoints) Height() int {
	rows := max(1, min(len(c.list), ckptRows))
	return 2 + rows + c.thumbRows() + 1 + c.st.PanelBorder.GetVerticalFrameSize() // title, header, rows, thumbnail, footer
}

// thumbRows is the room the selected checkpoint's picture takes.
func (c *checkpoints) thumbRows() int {
	if cp, ok := c.selected(); ok && c.focused && len(cp.Thumbnail) > 0 && !c.st.NoColor {
		return thumbRows
	}
	return 0
}

func (c *checkpoints) View() string {
	st := c.st
	border := st.PanelBorder
	if c.focused {
		border = st.PanelFocused
	}
	inner := max(c.width-border.GetHorizontalFrameSize(), 20)
	title := st.PanelTitle.Render(fmt.Sprintf("checkpoints (%d)", len(c.list)))
	if c.focused {
		title += st.Dim.Render(" · the keys act here")
	}
	lines := []string{title}

	nameW, bundleW := c.columns(inner)
	hdr := padRight("name", nameW) + fmt.Sprintf("  %-12s  %5s  %7s  %8s  %s", "saved", "turns", "tokens", "size", "bundle")
	lines = append(lines, st.Dim.Render(xansi.Truncate(hdr, inner, "")))

	switch {
	case !c.listed:
		lines = append(lines, st.Dim.Render("loading…"))
	case len(c.list) == 0:
		lines = append(lines, st.Dim.Render("none yet · /save NAME or s saves this conversation"))
	}
	end := min(len(c.list), c.offset+ckptRows)
	for i := c.offset; i < end; i++ {
		cp := c.list[i]
		bundle := safeLine(cp.Bundle)
		if !cp.Compatible {
			bundle = "⚠ " + bundle
		}
		// Columns by display width: a name with wide characters (CJK,
		// emoji) takes two cells per character.
		name := safeLine(cp.Name)
		if cp.Media > 0 {
			name = fmt.Sprintf("▣%d %s", cp.Media, name) // it holds images or clips
		}
		line := padRight(xansi.Truncate(name, nameW, "…"), nameW) + fmt.Sprintf("  %-12s  %5s  %7s  %8s  %s",
			cp.Created.Local().Format("Jan 02 15:04"),
			commas(cp.Turns), commas(cp.Tokens), humanBytes(uint64(max(cp.Bytes, 0))),
			xansi.Truncate(bundle, bundleW, "…"))
		line = padRight(xansi.Truncate(line, inner, "…"), inner)
		switch {
		case i == c.cursor && c.focused:
			line = st.Selected.Render(line)
		case !cp.Compatible:
			line = st.Incompatible.Render(line)
		}
		lines = append(lines, line)
	}
	if c.thumbRows() > 0 {
		cp, _ := c.selected()
		thumb := c.thumb.get(cp.Thumbnail, min(thumbCols, inner))
		thumb = thumb[:min(len(thumb), thumbRows)]
		lines = append(lines, thumb...)
		for range thumbRows - len(thumb) {
			lines = append(lines, "")
		}
	}
	lines = append(lines, c.footer(inner))
	return border.Width(c.width).Render(strings.Join(lines, "\n"))
}

func (c *checkpoints) columns(inner int) (name, bundle int) {
	const fixed = 12 + 5 + 7 + 8 + 5*2
	rest := max(inner-fixed, 12)
	name = max(8, min(28, rest/2))
	return name, max(4, rest-name)
}

func (c *checkpoints) footer(w int) string {
	st := c.st
	switch c.mode {
	case ckptConfirmDelete:
		cp, _ := c.selected()
		return st.ConfirmPrompt.Render(xansi.Truncate(fmt.Sprintf("Delete %q? y deletes · any other key keeps it", cp.Name), w, "…"))
	case ckptRename:
		return st.Label.Render("rename to: ") + c.field.View()
	case ckptSaveAs:
		return st.Label.Render("save as: ") + c.field.View()
	}
	if !c.focused {
		return st.Dim.Render(xansi.Truncate("tab selects · /save NAME · /load NAME · /fork NAME", w, "…"))
	}
	return st.Dim.Render(xansi.Truncate("enter load · f fork · r rename · d delete · s save · esc back", w, "…"))
}
