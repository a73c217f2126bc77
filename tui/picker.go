package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	xansi "github.com/charmbracelet/x/ansi"
)

// PickerEntry is one bundle a Picker offers.
type PickerEntry struct {
	Name   string
	Family string
	Size   string // as shown, e.g. "3.1 GiB"
	Path   string
	Valid  bool
	Reason string // why the bundle cannot be opened, when !Valid
}

// ErrNoChoice is returned by Pick when the user leaves without choosing.
var ErrNoChoice = errors.New("no model chosen")

// Picker lists bundles and lets the user choose a valid one. It is a
// component (Update, View, SetSize) for a larger screen, and Pick runs
// it on its own.
type Picker struct {
	st            *Styles
	entries       []PickerEntry
	cursor        int
	offset        int
	width, height int
	chosen        *PickerEntry
	done          bool
}

// NewPicker makes a picker over entries with the default dark styles.
func NewPicker(entries []PickerEntry) *Picker {
	p := &Picker{st: newStyles(true, false), entries: entries, width: 80, height: 24}
	for i, e := range entries {
		if e.Valid {
			p.cursor = i
			break
		}
	}
	return p
}

func (p *Picker) SetSize(w, h int) { p.width, p.height = w, h }

// Choice returns the chosen entry once the user pressed enter on one.
func (p *Picker) Choice() (PickerEntry, bool) {
	if p.chosen == nil {
		return PickerEntry{}, false
	}
	return *p.chosen, true
}

// Done reports whether the user chose or left.
func (p *Picker) Done() bool { return p.done }

// Update handles a key; invalid bundles cannot be chosen.
func (p *Picker) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	switch k.String() {
	case "up", "k":
		p.cursor = max(0, p.cursor-1)
	case "down", "j":
		p.cursor = min(len(p.entries)-1, p.cursor+1)
	case "enter":
		if p.cursor < len(p.entries) && p.entries[p.cursor].Valid {
			e := p.entries[p.cursor]
			p.chosen = &e
			p.done = true
		}
	case "esc", "q", "ctrl+c":
		p.done = true
	}
	rows := p.rows()
	if p.cursor < p.offset {
		p.offset = p.cursor
	}
	if p.cursor >= p.offset+rows {
		p.offset = p.cursor - rows + 1
	}
	return nil
}

func (p *Picker) rows() int { return max(1, (p.height-4)/2) }

func (p *Picker) View() string {
	st := p.st
	lines := []string{st.PanelTitle.Render("Choose a model"), ""}
	if len(p.entries) == 0 {
		lines = append(lines, st.Dim.Render("No bundles found. Pass --model DIR, or try --demo."))
	}
	// Columns by display width, so names with wide characters (CJK,
	// emoji) keep the family and size columns aligned.
	nameW, famW := 0, 0
	for _, e := range p.entries {
		nameW = max(nameW, xansi.StringWidth(safeLine(e.Name)))
		famW = max(famW, xansi.StringWidth(safeLine(e.Family)))
	}
	nameW = min(nameW, max(p.width/2, 10))
	end := min(len(p.entries), p.offset+p.rows())
	for i := p.offset; i < end; i++ {
		e := p.entries[i]
		mark := "  "
		if i == p.cursor {
			mark = "▸ "
		}
		title := fmt.Sprintf("%s%s  %s  %s", mark, padRight(xansi.Truncate(safeLine(e.Name), nameW, "…"), nameW), padRight(safeLine(e.Family), famW), e.Size)
		detail := "    " + safeLine(e.Path)
		switch {
		case !e.Valid:
			title = st.Dim.Render(title)
			detail = st.Incompatible.Render("    " + safeLine(orDefault(e.Reason, "cannot be opened")))
		case i == p.cursor:
			title = st.Selected.Render(title)
			detail = st.Dim.Render(detail)
		default:
			detail = st.Dim.Render(detail)
		}
		lines = append(lines, xansi.Truncate(title, p.width, "…"), xansi.Truncate(detail, p.width, "…"))
	}
	lines = append(lines, "", st.Dim.Render("↑/↓ move · enter open · esc leave"))
	return strings.Join(lines, "\n")
}

// pickerModel runs a Picker as a program.
type pickerModel struct{ p *Picker }

func (m pickerModel) Init() tea.Cmd { return nil }

func (m pickerModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		m.p.SetSize(ws.Width, ws.Height)
	}
	m.p.Update(msg)
	if m.p.Done() {
		return m, tea.Quit
	}
	return m, nil
}

func (m pickerModel) View() tea.View {
	v := tea.NewView(m.p.View())
	v.AltScreen = true
	return v
}

// Pick shows entries and returns the bundle the user opens, or
// ErrNoChoice. Input, Output, Env, NoColor and Theme of opts apply.
func Pick(ctx context.Context, entries []PickerEntry, opts Options) (PickerEntry, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	p := NewPicker(entries)
	noColor := opts.NoColor || lookupEnv(opts.Env, "NO_COLOR") != ""
	p.st = newStyles(!strings.EqualFold(opts.Theme, "light"), noColor)
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithEnvironment(opts.Env)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	if noColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.ASCII))
	}
	if opts.Width > 0 && opts.Height > 0 {
		popts = append(popts, tea.WithWindowSize(opts.Width, opts.Height))
	}
	if _, err := tea.NewProgram(pickerModel{p}, popts...).Run(); err != nil {
		if ctx.Err() != nil {
			return PickerEntry{}, ctx.Err()
		}
		return PickerEntry{}, fmt.Errorf("tui: %w", err)
	}
	if e, ok := p.Choice(); ok {
		return e, nil
	}
	return PickerEntry{}, ErrNoChoice
}
