package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	xansi "github.com/charmbracelet/x/ansi"
)

// paletteItem is one entry of the command palette.
type paletteItem struct {
	title string
	desc  string
	// Exactly one of these is set: a slash command (its argument, if
	// any, is typed in the input) or a direct action.
	command string
	action  func(m *Model) tea.Cmd
}

// palette is the ctrl+p overlay: every command and view toggle,
// filtered as the user types.
type palette struct {
	st            *Styles
	width, height int
	filter        textinput.Model
	keys          paletteKeys
	items         []paletteItem
	shown         []int
	sel           int
}

func newPalette(st *Styles, cmds []command) palette {
	f := textinput.New()
	f.Prompt = "› "
	f.Placeholder = "type to filter"
	p := palette{st: st, filter: f, keys: newPaletteKeys()}
	for _, c := range cmds {
		p.items = append(p.items, paletteItem{title: c.usage(), desc: c.help, command: c.name})
	}
	p.items = append(p.items,
		paletteItem{title: "Toggle draft highlighting", desc: "mark tokens that came from accepted drafts", action: func(m *Model) tea.Cmd { m.conv.ToggleDrafts(); return nil }},
		paletteItem{title: "Toggle thinking", desc: "unfold or fold thinking blocks", action: func(m *Model) tea.Cmd { m.conv.ToggleThinking(); return nil }},
		paletteItem{title: "Open $EDITOR", desc: "write the message in your editor", action: func(m *Model) tea.Cmd { return prepareEditor(m.input.Text()) }},
		paletteItem{title: "Follow the output", desc: "scroll to the bottom", action: func(m *Model) tea.Cmd { m.conv.Bottom(); return nil }},
	)
	return p
}

func (p *palette) SetSize(w, h int) {
	p.width, p.height = w, h
	p.filter.SetWidth(max(10, p.boxWidth()-8))
}

func (p *palette) boxWidth() int { return min(p.width, 72) }

func (p *palette) Open() tea.Cmd {
	p.filter.SetValue("")
	p.refilter()
	return p.filter.Focus()
}

func (p *palette) refilter() {
	q := strings.ToLower(strings.TrimSpace(p.filter.Value()))
	p.shown = p.shown[:0]
	for i, it := range p.items {
		if q == "" || strings.Contains(strings.ToLower(it.title+" "+it.desc), q) {
			p.shown = append(p.shown, i)
		}
	}
	p.sel = max(0, min(p.sel, len(p.shown)-1))
}

func (p *palette) Focus() tea.Cmd      { return p.filter.Focus() }
func (p *palette) Blur()               { p.filter.Blur() }
func (p *palette) Placeholder() string { return "" }

// Update filters as the user types; enter closes the palette with the
// item chosen, esc without.
func (p *palette) Update(msg tea.Msg) (action, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, p.keys.Close):
			return closePaletteAction{}, nil
		case key.Matches(k, p.keys.Choose):
			if p.sel < len(p.shown) {
				it := p.items[p.shown[p.sel]]
				return closePaletteAction{&it}, nil
			}
			return closePaletteAction{}, nil
		case key.Matches(k, p.keys.Up):
			if len(p.shown) > 0 {
				p.sel = (p.sel - 1 + len(p.shown)) % len(p.shown)
			}
			return nil, nil
		case key.Matches(k, p.keys.Down):
			if len(p.shown) > 0 {
				p.sel = (p.sel + 1) % len(p.shown)
			}
			return nil, nil
		}
	}
	var cmd tea.Cmd
	p.filter, cmd = p.filter.Update(msg)
	p.refilter()
	return nil, cmd
}

// View draws the palette box centred in w×h.
func (p *palette) View() string {
	st := p.st
	bw := p.boxWidth()
	inner := max(bw-st.PaletteBox.GetHorizontalFrameSize(), 10)
	rows := max(1, min(len(p.shown), p.height-6))
	start := max(0, min(p.sel-rows+1, len(p.shown)-rows))
	lines := []string{st.PaletteTitle.Render("Commands"), p.filter.View(), ""}
	if len(p.shown) == 0 {
		lines = append(lines, st.Dim.Render("nothing matches"))
	}
	tw := 0
	for _, i := range p.shown {
		tw = max(tw, min(xansi.StringWidth(p.items[i].title), inner/2))
	}
	for i := start; i < min(len(p.shown), start+rows); i++ {
		it := p.items[p.shown[i]]
		line := padRight(it.title, tw) + "  " + st.CompletionDesc.Render(it.desc)
		line = padRight(xansi.Truncate(line, inner, "…"), inner)
		if i == p.sel {
			line = st.CompletionSel.Render(xansi.Strip(line))
		}
		lines = append(lines, line)
	}
	box := st.PaletteBox.Width(bw).Render(strings.Join(lines, "\n"))
	return lipgloss.Place(p.width, p.height, lipgloss.Center, lipgloss.Center, box)
}
