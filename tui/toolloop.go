package tui

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/mcpclient"
	"github.com/orchard-llm/orchard/tools"
)

// ToolsOptions give the chat MCP tools (Options.Tools).
type ToolsOptions struct {
	// Client reaches the servers; they start when the chat opens (off
	// the screen's loop) and stop when the caller closes it.
	Client *mcpclient.Client
	// Allow names the tools that run without asking (chat.tools.allow).
	Allow []string
	// MaxCalls bounds the calls of one turn (chat.tools.max_calls).
	MaxCalls int
	// KeepAllowed writes a tool allowed "always" into the config
	// (config.AllowTool); nil keeps it for this session only.
	KeepAllowed func(name string) error
}

// toolEngine is an engine that runs the chat's tool loop (the local one;
// over a server the chat declares no tools).
type toolEngine interface {
	SetTools(engine.ChatTools) error
	ToolResults([]tools.Response) error
}

// toolLoop is the chat's side of the loop: the servers' tools, which run
// without asking, and the calls of the reply being answered.
type toolLoop struct {
	opts   ToolsOptions
	set    *mcpclient.Toolset // nil until the servers listed their tools
	always map[string]bool    // allowed by 'a' in this session
	count  int                // tools declared, and what they cost
	tokens int

	card *toolCard // the calls being answered; nil when none
	next int       // the call being decided or run

	alwaysKey, stopKey key.Binding // the question's answers besides y and n
}

type (
	// toolsetMsg: the servers listed their tools.
	toolsetMsg struct{ set *mcpclient.Toolset }
	// toolDoneMsg: a call ran.
	toolDoneMsg struct {
		card *toolCard
		i    int
		o    mcpclient.Outcome
	}
	// toolKeptMsg: a tool allowed always was written to the config.
	toolKeptMsg struct {
		name string
		err  error
	}
)

// newToolLoop is nil when the chat has no tools to offer.
func newToolLoop(opts *ToolsOptions, eng Engine) *toolLoop {
	if opts == nil || opts.Client == nil || len(opts.Client.Servers()) == 0 {
		return nil
	}
	if _, ok := eng.(toolEngine); !ok {
		return nil
	}
	l := &toolLoop{opts: *opts, always: map[string]bool{}}
	l.alwaysKey, l.stopKey = bind("a", "always", "a", "A"), bind("esc", "stop the tools", "esc")
	return l
}

// loadTools starts the servers and lists their tools, off the loop.
func (l *toolLoop) loadTools() tea.Cmd {
	c := l.opts.Client
	return func() tea.Msg { return toolsetMsg{mcpclient.LoadToolset(context.Background(), c)} }
}

// onToolMsg takes the messages of the loop's commands.
func (m *Model) onToolMsg(msg tea.Msg) tea.Cmd {
	l := m.tools
	if l == nil {
		return nil
	}
	switch msg := msg.(type) {
	case toolsetMsg:
		l.set = msg.set
		var cmds []tea.Cmd
		for name, err := range msg.set.Failed {
			cmds = append(cmds, m.errorToast(fmt.Sprintf("The MCP server %s did not start: %v", name, err)))
		}
		cmds = append(cmds, m.declareTools())
		return tea.Batch(cmds...)
	case toolDoneMsg:
		if msg.card != l.card {
			return nil // the loop was stopped meanwhile
		}
		cc := &l.card.calls[msg.i]
		cc.state, cc.output, cc.elapsed = callDone, responseText(msg.o.Response.Value), msg.o.Result.Elapsed
		cc.full = len(msg.o.Result.Full)
		if msg.o.Result.Truncated {
			cc.whole = msg.o.Result.Full
		}
		if msg.o.Err != nil || msg.o.Result.IsError {
			cc.state = callFailed
			cc.output = msg.o.Result.Text
			if msg.o.Err != nil {
				cc.output = msg.o.Err.Error()
			}
		}
		m.conv.RefreshCard(l.card)
		l.next++
		return m.nextCall()
	case toolKeptMsg:
		if msg.err != nil {
			return m.errorToast(fmt.Sprintf("%s is allowed for this session; the config could not keep it: %v", msg.name, msg.err))
		}
		return m.infoToast(fmt.Sprintf("%s runs without asking from now on (chat.tools.allow).", msg.name))
	}
	return nil
}

// declareTools tells the engine the tools that are on.
func (m *Model) declareTools() tea.Cmd {
	l := m.tools
	decls := l.set.Declarations()
	max := l.opts.MaxCalls
	m.call(engine.OpTools, func(e Engine) error {
		return e.(toolEngine).SetTools(engine.ChatTools{Decls: decls, MaxCalls: max})
	})
	return nil
}

// onToolsChanged takes the engine's word on the declarations.
func (m *Model) onToolsChanged(e engine.ToolsChanged) {
	if m.tools != nil {
		m.tools.count, m.tools.tokens = e.Count, e.Tokens
	}
}

// callsAsked starts answering the calls a reply ended with: a card shows
// them, and each runs when allowed — by the config, by 'a' earlier, or by
// the person now.
func (m *Model) callsAsked(e engine.Finished) tea.Cmd {
	l := m.tools
	if l == nil || l.set == nil {
		return m.errorToast("The model called a tool, but the chat offers none.")
	}
	text, _, _ := tools.Split(e.Reply)
	l.card, l.next = newToolCard(e.Calls), 0
	for i := range l.card.calls {
		if t, ok := l.set.Lookup(e.Calls[i]); ok {
			l.card.calls[i].tool = t.FullName()
		}
	}
	m.conv.AddCard(text, l.card)
	return m.nextCall()
}

// nextCall decides the next call, or gives the results back when all are
// answered.
func (m *Model) nextCall() tea.Cmd {
	l := m.tools
	if l.next >= len(l.card.calls) {
		_, rs := l.card.record(false)
		l.card = nil
		m.call(engine.OpToolResults, func(e Engine) error { return e.(toolEngine).ToolResults(rs) })
		return nil
	}
	cc := &l.card.calls[l.next]
	t, ok := l.set.Lookup(cc.call)
	if !ok {
		cc.state, cc.output = callFailed, fmt.Sprintf("no tool %q is offered", cc.call.Name)
		m.conv.RefreshCard(l.card)
		l.next++
		return m.nextCall()
	}
	if mcpclient.Allowed(l.opts.Allow, t) || l.always[t.FullName()] {
		return m.runCall()
	}
	cc.state = callAsking
	m.conv.RefreshCard(l.card)
	m.ask(fmt.Sprintf("Run %s %s?", safeLine(t.FullName()), safeLine(argsText(cc.call))), func(m *Model) tea.Cmd { return m.runCall() })
	m.confirm.Otherwise("y once · a always · n refuse · esc stop", (*Model).refuseCall)
	m.confirm.Also(l.alwaysKey, func(m *Model) tea.Cmd { return m.alwaysCall(t) })
	m.confirm.Also(l.stopKey, (*Model).stopCalls)
	return nil
}

// runCall runs the call decided, off the loop.
func (m *Model) runCall() tea.Cmd {
	l := m.tools
	card, i := l.card, l.next
	card.calls[i].state = callRunning
	m.conv.RefreshCard(card)
	set, client, call := l.set, l.opts.Client, card.calls[i].call
	return func() tea.Msg { return toolDoneMsg{card, i, set.Run(context.Background(), client, call)} }
}

// refuseCall is 'n': the model is told the person refused.
func (m *Model) refuseCall() tea.Cmd {
	l := m.tools
	l.card.calls[l.next].state = callRefused
	m.conv.RefreshCard(l.card)
	l.next++
	return m.nextCall()
}

// alwaysCall is 'a': the tool runs now and from now on without asking,
// kept in the config when it can be.
func (m *Model) alwaysCall(t mcpclient.Tool) tea.Cmd {
	l := m.tools
	name := t.FullName()
	l.always[name] = true
	cmds := []tea.Cmd{m.runCall()}
	if keep := l.opts.KeepAllowed; keep != nil {
		cmds = append(cmds, func() tea.Msg { return toolKeptMsg{name, keep(name)} })
	}
	return tea.Batch(cmds...)
}

// asking reports whether calls are being decided (the question on the
// bottom line is the loop's).
func (l *toolLoop) asking() bool {
	return l != nil && l.card != nil && l.next < len(l.card.calls) && l.card.calls[l.next].state == callAsking
}

// stopCalls is esc (and ctrl+c): the loop stops, nothing more runs and the reply ends
// with its calls unanswered.
func (m *Model) stopCalls() tea.Cmd {
	l := m.tools
	m.conv.DropCard(l.card)
	l.card = nil
	return m.infoToast("Stopped: the model's tool calls were not run.")
}

// cmdTools is /tools: the servers, their tools (on or off) and what the
// declarations cost; "/tools off NAME" and "/tools on NAME" switch a tool
// ("server.tool") or a server ("server" or "server.*").
func (m *Model) cmdTools(arg string) tea.Cmd {
	l := m.tools
	if l == nil {
		return m.infoToast("No MCP servers are configured: add [mcp.servers.NAME] to the config (orchard config import-mcp reads Claude Desktop's).")
	}
	if l.set == nil {
		return m.infoToast("The MCP servers are starting…")
	}
	verb, name, _ := strings.Cut(strings.TrimSpace(arg), " ")
	switch verb {
	case "":
		return m.showToolsList()
	case "on", "off":
		name = strings.TrimSpace(name)
		if name == "" {
			return m.errorToast("Name a tool (server.tool) or a server: /tools " + verb + " NAME.")
		}
		if !strings.Contains(name, ".") {
			name += ".*"
		}
		if !l.set.Known(name) {
			return m.errorToast(fmt.Sprintf("No tool or server %s: /tools lists them.", safeLine(name)))
		}
		l.set.Off[name] = verb == "off"
		m.declareTools()
		return m.infoToast(fmt.Sprintf("%s is %s.", safeLine(name), verb))
	}
	return m.errorToast("/tools, /tools on NAME or /tools off NAME.")
}

// toolChoices complete /tools's argument.
func (m *Model) toolChoices() []string {
	out := []string{"on", "off"}
	if m.tools == nil || m.tools.set == nil {
		return out
	}
	for _, t := range m.tools.set.Tools {
		out = append(out, "on "+t.FullName(), "off "+t.FullName())
	}
	return out
}

// showToolsList shows /tools's list whole, as a message (f6's view,
// which shows a message as one paragraph).
func (m *Model) showToolsList() tea.Cmd {
	l := m.tools
	var b strings.Builder
	fmt.Fprintf(&b, "MCP tools: %d declared, %s context tokens of %s.", l.count, commas(l.tokens), commas(m.info.Context))
	server := ""
	for _, t := range l.set.Tools {
		if t.Server != server {
			server = t.Server
			fmt.Fprintf(&b, " Server %s:", safeLine(server))
		}
		state := "on"
		if !l.set.On(t) {
			state = "off"
		}
		allowed := ""
		if mcpclient.Allowed(l.opts.Allow, t) || l.always[t.FullName()] {
			allowed = " (runs without asking)"
		}
		fmt.Fprintf(&b, " [%s] %s%s — %s;", state, safeLine(t.Name), allowed, safeLine(t.Description))
	}
	for name, err := range l.set.Failed {
		fmt.Fprintf(&b, " Server %s did not start: %s.", safeLine(name), safeLine(err.Error()))
	}
	b.WriteString(" /tools off NAME, /tools on NAME: a tool (server.tool) or a server.")
	cmd := m.infoToast(b.String())
	m.showMessage = true
	return cmd
}
