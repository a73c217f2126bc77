package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// /context: the window as the model sees it, drawn as a bar (system
// prompt, pinned messages, the summary, each turn and its pictures and
// clips, the reply reserve, what is free) with the cache's share and,
// where the bundle has sliding layers, what they still see; c, d and s
// switch the context policy for this session, k compacts now. /compact,
// /pin, /elide and /summary change what the model sees; the engine
// answers each with a ContextReport, which redraws this and the
// conversation's marks (summary.go).

// ctxState is the window as the last ContextReport gave it.
type ctxState struct {
	view engine.ContextView
	have bool
}

// Actions of the context panel.
type (
	setPolicyAction struct{ policy engine.ContextPolicy }
	compactAction   struct{}
)

// contextPanel is the /context overlay. It draws what the Model hands
// it (Show) and asks for actions with its keys.
type contextPanel struct {
	st            *Styles
	width, height int
	view          engine.ContextView
	have          bool
	policy        engine.ContextPolicy // in force (the settings)
	keys          contextKeys
}

type contextKeys struct {
	Compact, Drop, Stop, Now, Close key.Binding
}

func newContextPanel(st *Styles) contextPanel {
	return contextPanel{st: st, keys: contextKeys{
		Compact: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "policy compact")),
		Drop:    key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "policy drop-oldest")),
		Stop:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "policy stop")),
		Now:     key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "compact now")),
		Close:   key.NewBinding(key.WithKeys("esc", "q", "enter"), key.WithHelp("esc", "close")),
	}}
}

func (p *contextPanel) SetSize(w, h int)    { p.width, p.height = w, h }
func (p *contextPanel) Focus() tea.Cmd      { return nil }
func (p *contextPanel) Blur()               {}
func (p *contextPanel) Placeholder() string { return "the context view has the keys: esc closes it" }
func (p *contextPanel) Show(s ctxState, policy engine.ContextPolicy) {
	p.view, p.have, p.policy = s.view, s.have, policy
}

func (p *contextPanel) Update(msg tea.Msg) (action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	switch {
	case key.Matches(k, p.keys.Compact):
		return setPolicyAction{engine.ContextCompact}, nil
	case key.Matches(k, p.keys.Drop):
		return setPolicyAction{engine.ContextDropOldest}, nil
	case key.Matches(k, p.keys.Stop):
		return setPolicyAction{engine.ContextStop}, nil
	case key.Matches(k, p.keys.Now):
		return compactAction{}, nil
	case key.Matches(k, p.keys.Close):
		return answerAction{func(*Model) tea.Cmd { return nil }}, nil
	}
	return nil, nil
}

// segment glyphs: the bar reads without colour too.
const (
	glyphSystem  = "■"
	glyphPinned  = "▪"
	glyphSummary = "≡"
	glyphUser    = "█"
	glyphModel   = "▓"
	glyphMedia   = "◆"
	glyphReserve = "░"
	glyphFree    = "·"
)

// barCell is one stretch of the bar.
type barCell struct {
	glyph  string
	tokens int
}

// Bar draws the window in w cells: each part in proportion to its
// tokens (at least one cell when it has any).
func (p *contextPanel) Bar(w int) string {
	v := p.view
	if v.Context <= 0 || w <= 0 {
		return ""
	}
	cells := []barCell{{glyphSystem, v.System}}
	for _, part := range v.Parts {
		g := glyphModel
		switch {
		case part.Kind == "summary":
			g = glyphSummary
		case part.Kind == "pinned":
			g = glyphPinned
		case part.Role == "user":
			g = glyphUser
		}
		media := 0
		for _, m := range part.Media {
			media += m.Tokens
		}
		cells = append(cells, barCell{g, part.Tokens - media}, barCell{glyphMedia, media})
	}
	reserve := min(v.Reserve, max(v.Free, 0))
	cells = append(cells, barCell{glyphReserve, reserve}, barCell{glyphFree, max(v.Free-reserve, 0)})
	var b strings.Builder
	drawn, acc := 0, 0
	for _, c := range cells {
		if c.tokens <= 0 {
			continue
		}
		acc += c.tokens
		n := max(acc*w/v.Context-drawn, 1)
		n = min(n, w-drawn)
		b.WriteString(strings.Repeat(c.glyph, n))
		drawn += n
	}
	return b.String()
}

func (p *contextPanel) View() string {
	st := p.st
	v := p.view
	w := max(p.width-4, 20)
	lines := []string{st.PanelTitle.Render("Context") + st.Dim.Render("  · what the model sees · esc closes")}
	if !p.have {
		return strings.Join(append(lines, "", st.Dim.Render("  measuring…")), "\n")
	}
	lines = append(lines, "",
		fmt.Sprintf("  %s of %s tokens · %s free · cached %s (%s)", commas(v.Used), commas(v.Context), commas(max(v.Free, 0)),
			commas(v.Cached), percent(float64(v.Cached)/float64(max(v.Used, 1)))),
		"  "+p.Bar(w),
		st.Dim.Render(fmt.Sprintf("  %s system  %s you  %s model  %s pinned  %s summary  %s pictures, clips  %s reply reserve  %s free",
			glyphSystem, glyphUser, glyphModel, glyphPinned, glyphSummary, glyphMedia, glyphReserve, glyphFree)), "")
	row := func(name string, tokens int, extra string) {
		lines = append(lines, "  "+padRight(xansi.Truncate(name, 34, "…"), 35)+padRight(commas(tokens), 7)+st.Dim.Render(extra))
	}
	row("system prompt", v.System, "")
	for _, part := range v.Parts {
		var name string
		switch part.Kind {
		case "summary":
			name = "summary"
			if v.Edited {
				name += " (yours)"
			}
		case "pinned":
			name = fmt.Sprintf("📌 message %d (%s)", part.Index+1, roleName(part.Role))
		default:
			name = fmt.Sprintf("message %d (%s)", part.Index+1, roleName(part.Role))
		}
		var extra []string
		for _, m := range part.Media {
			if m.Elided {
				extra = append(extra, m.Name+" as a line")
			} else {
				extra = append(extra, fmt.Sprintf("%s %s", m.Name, commas(m.Tokens)))
			}
		}
		row(name, part.Tokens, strings.Join(extra, " · "))
	}
	row("reply reserve", v.Reserve, "")
	if v.Window > 0 {
		lines = append(lines, st.Dim.Render(fmt.Sprintf("  messages 1–%d are out of the window (kept in the conversation)", v.Window)))
	}
	if s := v.Sliding; s.Window > 0 {
		where := "the system prompt"
		if s.Part >= 0 && s.Part < len(v.Parts) {
			if i := v.Parts[s.Part].Index; i >= 0 {
				where = fmt.Sprintf("message %d", i+1)
			} else {
				where = "the summary"
			}
		}
		kind := "attend to"
		if s.Ring {
			kind = "still hold (a ring of " + strconv.Itoa(s.Window) + ")"
		}
		lines = append(lines, st.Dim.Render(fmt.Sprintf("  sliding layers %s the last %s positions: from %s, in %s", kind, commas(s.Window), commas(s.From), where)))
	}
	lines = append(lines, "", "  policy: "+p.policyLine())
	lines = append(lines, st.Dim.Render("  c compact · d drop-oldest · s stop (this session) · k compact now · esc close"))
	return strings.Join(fitLines(strings.Join(lines, "\n"), max(p.height, 1), p.width), "\n")
}

func (p *contextPanel) policyLine() string {
	var out []string
	for _, c := range []engine.ContextPolicy{engine.ContextCompact, engine.ContextDropOldest, engine.ContextStop} {
		if c == p.policy {
			out = append(out, p.st.Value.Render("["+string(c)+"]"))
		} else {
			out = append(out, p.st.Dim.Render(" "+string(c)+" "))
		}
	}
	return strings.Join(out, " ")
}

func roleName(r string) string {
	if r == "user" {
		return "you"
	}
	if r == "system" {
		return "system"
	}
	return "model"
}

// cmdContext opens the context view and asks the engine for the window.
func (m *Model) cmdContext(string) tea.Cmd {
	m.ctxView.Show(m.ctx, m.turn.settings.ContextPolicy)
	if m.focused() != focusContext {
		m.open(focusContext)
	}
	m.call(engine.OpContext, func(e Engine) error { return e.ContextView() })
	return nil
}

// askContext asks for the window's breakdown when a conversation shown
// anew (at start, loaded, resumed, over a server again) may have a
// summary, pins or files seen as a line: its window has moved on. A
// conversation whose window is 0 has none of them unless this screen
// made them, and then it has the reports already.
func (m *Model) askContext(window int) {
	if window > 0 {
		m.call(engine.OpContext, func(e Engine) error { return e.ContextView() })
	}
}

// setPolicy switches the context policy for this session.
func (m *Model) setPolicy(p engine.ContextPolicy) tea.Cmd {
	if m.turn.settings.ContextPolicy == p {
		return nil
	}
	return m.changeSettings(func(s *engine.Settings) { s.ContextPolicy = p })
}

// cmdCompact has the model summarise the oldest turns it sees now.
func (m *Model) cmdCompact(string) tea.Cmd {
	if m.replying() {
		return m.errorToast("A reply is streaming; compact once it ends.")
	}
	m.turn.compacting = "compacting…"
	m.call(engine.OpCompact, func(e Engine) error { return e.Compact() })
	return nil
}

// messageArg is a command's 1-based message number, or the last message
// when arg is empty; ok false when it names none.
func (m *Model) messageArg(arg string) (int, bool) {
	n := m.conv.Len()
	if arg == "" {
		return n - 1, n > 0
	}
	i, err := strconv.Atoi(arg)
	return i - 1, err == nil && i >= 1 && i <= n
}

// cmdPin pins or unpins message N (the last without one): the model
// keeps seeing it verbatim through compactions.
func (m *Model) cmdPin(arg string) tea.Cmd {
	i, ok := m.messageArg(arg)
	if !ok {
		return m.errorToast(fmt.Sprintf("/pin takes a message number, 1–%d.", m.conv.Len()))
	}
	on := !m.conv.Pinned(i)
	m.call(engine.OpPin, func(e Engine) error { return e.Pin(i, on) })
	return nil
}

// cmdElide has the model see a picture or clip as one line: the first
// not yet elided of message N, or of the oldest message that has one.
// Words after N are the line's caption.
func (m *Model) cmdElide(arg string) tea.Cmd {
	num, caption, _ := strings.Cut(arg, " ")
	from, to := 0, m.conv.Len()
	if num != "" {
		i, ok := m.messageArg(num)
		if !ok {
			return m.errorToast(fmt.Sprintf("/elide takes a message number, 1–%d.", to))
		}
		from, to = i, i+1
	}
	for i := from; i < to; i++ {
		done := m.conv.Elided(i)
		if done < len(m.conv.Attachments(i)) {
			att := m.nextElidable(i)
			m.call(engine.OpElide, func(e Engine) error { return e.ElideMedia(i, att, strings.TrimSpace(caption)) })
			return nil
		}
	}
	return m.infoToast("No picture or clip left for the model to see as a line.")
}

// nextElidable is the first attachment of message i the model still sees
// as soft tokens.
func (m *Model) nextElidable(i int) int {
	if !m.ctx.have {
		return m.conv.Elided(i)
	}
	for _, p := range m.ctx.view.Parts {
		if p.Index == i {
			for a, mc := range p.Media {
				if !mc.Elided {
					return a
				}
			}
		}
	}
	return m.conv.Elided(i)
}

// cmdSummary folds or unfolds the summary; "edit" puts it in the input
// to change; any other text replaces it.
func (m *Model) cmdSummary(arg string) tea.Cmd {
	switch {
	case arg == "":
		if !m.conv.ToggleSummary() {
			return m.infoToast("There is no summary yet: /compact makes one.")
		}
	case arg == "edit":
		s := m.conv.Summary()
		if s == "" {
			return m.infoToast("There is no summary yet: /compact makes one.")
		}
		m.input.SetValue("/summary " + strings.Join(strings.Fields(s), " "))
	default:
		m.call(engine.OpSummary, func(e Engine) error { return e.SetSummary(arg) })
	}
	return nil
}

// onContextEvent applies the events of what the model sees.
func (m *Model) onContextEvent(ev engine.Event) tea.Cmd {
	switch e := ev.(type) {
	case engine.Compacting:
		switch {
		case e.Phase == "prefill" && e.Total > 0:
			m.turn.compacting = fmt.Sprintf("compacting… reading %d%%", 100*e.Done/e.Total)
		case e.Phase == "summary":
			m.turn.compacting = fmt.Sprintf("compacting… summary %d tokens", e.Done)
		default:
			m.turn.compacting = "compacting…"
		}
	case engine.Compacted:
		m.turn.compacting = ""
		m.conv.SetWindow(e.Window)
		m.conv.SetSummary(e.Summary)
		m.stats.SetContext(e.ContextUsed)
		m.changed = true
		return m.infoToast(fmt.Sprintf("Compacted messages %d–%d into a summary of %d tokens: the conversation now takes %s tokens (%s cached). /summary shows it.",
			e.From+1, e.To, e.SummaryTokens, commas(e.ContextUsed), commas(e.Cached)))
	case engine.ContextReport:
		m.ctx = ctxState{view: e.View, have: true}
		m.conv.SetContextMarks(e.View)
		m.conv.SetWindow(e.View.Window)
		// The status bar's ctx stays the positions the cache fills; the
		// view's Used is the next prompt's length, the /context figure.
		m.ctxView.Show(m.ctx, m.turn.settings.ContextPolicy)
		if e.Op != engine.OpContext && e.Op != engine.OpCompact {
			m.changed = true
			return m.infoToast(reportText(e))
		}
	}
	return nil
}

func reportText(e engine.ContextReport) string {
	v := e.View
	switch e.Op {
	case engine.OpPin:
		return fmt.Sprintf("Pinned: %d message(s) the model keeps verbatim. The conversation takes %s tokens.", len(v.Pinned), commas(v.Used))
	case engine.OpSummary:
		return "The model now sees your summary."
	case engine.OpElide:
		return fmt.Sprintf("The model now sees that file as a line: the conversation takes %s tokens.", commas(v.Used))
	}
	return ""
}
