package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/mcpclient"
)

// toolsPanel is /tools: the MCP servers and their tools, each switched on
// or off with space, and what the declarations cost in context tokens. It
// shows the loop's state; a switch is an action the Model carries out
// (the toolset changes and the tools are declared again).
type toolsPanel struct {
	st            *Styles
	width, height int
	focused       bool
	head          string    // the cost line
	rows          []toolRow // servers, each followed by its tools
	failed        []string  // servers that did not start
	cur           int
	keys          toolsPanelKeys
}

// toolRow is a server (tool "") or one of its tools.
type toolRow struct {
	server, tool, desc string
	on, allowed        bool
}

// name is what the toolset switches: "server.*" or "server.tool".
func (r toolRow) name() string {
	if r.tool == "" {
		return r.server + ".*"
	}
	return r.server + "." + r.tool
}

type toolsPanelKeys struct{ Up, Down, Toggle, Close key.Binding }

func newToolsPanel(st *Styles) toolsPanel {
	return toolsPanel{st: st, keys: toolsPanelKeys{
		Up:     bind("up", "previous", "up", "k"),
		Down:   bind("down", "next", "down", "j"),
		Toggle: bind("space", "on/off", "space", "enter"),
		Close:  bind("esc", "close", "esc", "q"),
	}}
}

// toggleTool: a tool ("server.tool") or a server ("server.*") is to be
// switched on or off.
type toggleTool struct {
	name string
	off  bool
}

// closeToolsAction: the tools panel closes.
type closeToolsAction struct{}

// set shows the loop's tools; the cursor stays on the row it was on.
func (p *toolsPanel) set(l *toolLoop, context int) {
	p.head = fmt.Sprintf("%d declared · %s context tokens of %s", l.count, commas(l.tokens), commas(context))
	p.rows, p.failed = p.rows[:0], p.failed[:0]
	server := ""
	for _, t := range l.set.Tools {
		if t.Server != server {
			server = t.Server
			p.rows = append(p.rows, toolRow{server: server, on: !l.set.Off[server+".*"]})
		}
		p.rows = append(p.rows, toolRow{server: t.Server, tool: t.Name, desc: t.Description, on: l.set.On(t),
			allowed: mcpclient.Allowed(l.opts.Allow, t) || l.always[t.FullName()]})
	}
	for name, err := range l.set.Failed {
		p.failed = append(p.failed, fmt.Sprintf("%s did not start: %v", name, err))
	}
	p.cur = min(p.cur, max(len(p.rows)-1, 0))
}

func (p *toolsPanel) SetSize(w, h int) { p.width, p.height = w, h }
func (p *toolsPanel) Focus() tea.Cmd   { p.focused = true; return nil }
func (p *toolsPanel) Blur()            { p.focused = false }
func (p *toolsPanel) Placeholder() string {
	return "space switches a tool on or off · esc closes /tools"
}

func (p *toolsPanel) Update(msg tea.Msg) (action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, nil
	}
	switch {
	case key.Matches(k, p.keys.Up):
		p.cur = max(p.cur-1, 0)
	case key.Matches(k, p.keys.Down):
		p.cur = min(p.cur+1, max(len(p.rows)-1, 0))
	case key.Matches(k, p.keys.Toggle):
		if p.cur < len(p.rows) {
			r := p.rows[p.cur]
			return toggleTool{name: r.name(), off: r.on}, nil
		}
	case key.Matches(k, p.keys.Close):
		return closeToolsAction{}, nil
	}
	return nil, nil
}

// lines are the panel's rows inside its border.
func (p *toolsPanel) lines(inner int) []string {
	out := []string{p.st.Dim.Render(xansi.Truncate(p.head, inner, "…"))}
	for i, r := range p.rows {
		box := "[x]"
		if !r.on {
			box = "[ ]"
		}
		var l string
		if r.tool == "" {
			l = box + " " + safeLine(r.server)
		} else {
			l = "  " + box + " " + safeLine(r.tool)
			if r.allowed {
				l += " (runs without asking)"
			}
			if r.desc != "" {
				l += " — " + safeLine(r.desc)
			}
		}
		l = xansi.Truncate(l, inner, "…")
		if i == p.cur && p.focused {
			l = p.st.Selected.Render(padRight(l, inner))
		}
		out = append(out, l)
	}
	for _, f := range p.failed {
		out = append(out, p.st.Dim.Render(xansi.Truncate(safeLine(f), inner, "…")))
	}
	return append(out, p.st.Dim.Render(xansi.Truncate("↑↓ move · space on/off · esc close", inner, "…")))
}

// Height is the rows View draws.
func (p *toolsPanel) Height() int {
	return len(p.lines(max(p.width-p.st.PanelBorder.GetHorizontalFrameSize(), 10))) + 1 + p.st.PanelBorder.GetVerticalFrameSize()
}

func (p *toolsPanel) View() string {
	border := p.st.PanelBorder
	if p.focused {
		border = p.st.PanelFocused
	}
	inner := max(p.width-border.GetHorizontalFrameSize(), 10)
	body := p.lines(inner)
	if room := p.height - 1 - border.GetVerticalFrameSize(); room > 0 && len(body) > room {
		start := min(max(p.cur+1-room/2, 0), len(body)-room) // the cursor's row (1 below the head) stays in sight
		body = body[start : start+room]
	}
	return border.Width(p.width).Render(p.st.PanelTitle.Render("tools") + "\n" + strings.Join(body, "\n"))
}
