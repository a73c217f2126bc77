package tui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// command is one slash command.
type command struct {
	name    string
	args    string // usage, e.g. "NAME"; empty for none
	optArgs bool   // the argument may be left out
	help    string
	choices func(m *Model) []string // completions for the argument
	run     func(m *Model, arg string) tea.Cmd
	alias   bool // another command's other name: left off the help screen
}

func (c command) usage() string {
	if c.args == "" {
		return "/" + c.name
	}
	return "/" + c.name + " " + c.args
}

// commandTable lists the slash commands in the order /help and the
// completion show them.
func commandTable() []command {
	names := func(m *Model) []string { return m.ckpts.Names() }
	onOff := func(*Model) []string { return []string{"on", "off"} }
	return []command{
		{name: "save", args: "NAME", help: "save a checkpoint", choices: names, run: (*Model).cmdSave},
		{name: "load", args: "NAME", help: "load a checkpoint", choices: names, run: (*Model).cmdLoad},
		{name: "checkpoints", help: "list checkpoints", run: (*Model).cmdCheckpoints},
		{name: "fork", args: "NAME", help: "fork a checkpoint", choices: names, run: (*Model).cmdFork},
		{name: "rename", args: "OLD NEW", help: "rename a checkpoint", choices: names, run: (*Model).cmdRename},
		{name: "delete", args: "NAME", help: "delete a checkpoint", choices: names, run: (*Model).cmdDelete},
		{name: "new", help: "start a new chat (/clear)", run: (*Model).cmdNew},
		{name: "clear", help: "the same as /new", run: (*Model).cmdClear, alias: true},
		{name: "history", args: "[TEXT]", optArgs: true, help: "past chats, searched", run: (*Model).cmdHistory},
		{name: "title", args: "TEXT", help: "name this chat in the history", run: (*Model).cmdTitle},
		{name: "retry", help: "regenerate the last reply", run: (*Model).cmdRetry},
		{name: "edit", args: "[TEXT]", optArgs: true, help: "edit the last message", run: (*Model).cmdEdit},
		{name: "find", args: "[TEXT]", optArgs: true, help: "search this chat", run: (*Model).cmdFind},
		{name: "image", args: "PATH", help: "attach an image", run: (*Model).cmdImage},
		{name: "audio", args: "PATH", help: "attach a clip", run: (*Model).cmdAudio},
		{name: "detach", args: "[NAME]", optArgs: true, help: "drop one attachment, or all", choices: (*Model).attachmentNames, run: (*Model).cmdDetach},
		{name: "context", help: "the window: what the model sees, the policy", run: (*Model).cmdContext},
		{name: "compact", help: "summarise the oldest turns now", run: (*Model).cmdCompact},
		{name: "pin", args: "[N]", optArgs: true, help: "pin or unpin message N (the last)", run: (*Model).cmdPin},
		{name: "elide", args: "[N [TEXT]]", optArgs: true, help: "a picture or clip seen as one line", run: (*Model).cmdElide},
		{name: "summary", args: "[edit]", optArgs: true, help: "unfold, edit or replace the summary", run: (*Model).cmdSummary},
		{name: "system", args: "[TEXT]", optArgs: true, help: "the system prompt", run: (*Model).cmdSystem},
		{name: "spec", args: "on|off|auto", help: "speculation mode", choices: func(*Model) []string { return []string{"on", "off", "auto"} }, run: (*Model).cmdSpec},
		{name: "draft", args: "N", help: "draft length (tokens)", run: (*Model).cmdDraft},
		{name: "temp", args: "T", help: "temperature, 0 greedy", run: (*Model).cmdTemp},
		{name: "topk", args: "K", help: "top-k, 0 is off", run: (*Model).cmdTopK},
		{name: "topp", args: "P", help: "top-p, 0 < P ≤ 1", run: (*Model).cmdTopP},
		{name: "seed", args: "S", help: "sampling seed", run: (*Model).cmdSeed},
		{name: "think", args: "on|off", help: "thinking mode", choices: onOff, run: (*Model).cmdThink},
		{name: "stats", help: "stats panel on/off", run: (*Model).cmdStats},
		{name: "copy", args: "[code [N]]", optArgs: true, help: "copy reply or code", choices: func(*Model) []string { return []string{"code"} }, run: (*Model).cmdCopy},
		{name: "tools", args: "[on|off X]", optArgs: true, help: "MCP tools: list, on/off", choices: (*Model).toolChoices, run: (*Model).cmdTools},
		{name: "export", args: "[FILE.md]", optArgs: true, help: "write it as markdown", run: (*Model).cmdExport},
		{name: "help", help: "keys and commands", run: (*Model).cmdHelp},
		{name: "quit", help: "save and quit", run: (*Model).cmdQuit},
	}
}

func (m *Model) findCommand(name string) (command, bool) {
	for _, c := range m.commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// parseCommand splits "/name arg…" into its name and argument.
func parseCommand(line string) (name, arg string) {
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "/"))
	name, arg, _ = strings.Cut(line, " ")
	return strings.ToLower(name), strings.TrimSpace(arg)
}

// splitArgs splits an argument into words; "double" or 'single' quotes
// keep spaces inside a word. An unclosed quote runs to the end.
func splitArgs(s string) (words []string, quoted bool) {
	var cur strings.Builder
	in, inWord := rune(0), false
	for _, r := range s {
		switch {
		case in != 0 && r == in:
			in = 0
		case in != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			in, inWord, quoted = r, true, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, quoted
}

// oneName is the argument of a command that takes one name: the whole
// argument, so names with spaces work unquoted; quotes around it go.
func oneName(arg string) string {
	if w, quoted := splitArgs(arg); quoted && len(w) == 1 {
		return w[0]
	}
	return strings.TrimSpace(arg)
}

// quoteName quotes a name with spaces for the input line.
func quoteName(name string) string {
	if strings.ContainsAny(name, " \t'\"") {
		if strings.Contains(name, `"`) {
			return "'" + name + "'"
		}
		return `"` + name + `"`
	}
	return name
}

// runCommand executes a slash command line.
func (m *Model) runCommand(line string) tea.Cmd {
	name, arg := parseCommand(line)
	c, ok := m.findCommand(name)
	if !ok {
		return m.errorToast(fmt.Sprintf("There is no command /%s; /help lists them.", name))
	}
	if c.args != "" && !c.optArgs && arg == "" {
		return m.errorToast(fmt.Sprintf("%s needs an argument: %s", "/"+c.name, c.usage()))
	}
	return c.run(m, arg)
}

// hasCheckpoint reports whether the store (as last listed) holds name.
func (m *Model) hasCheckpoint(name string) bool {
	for _, n := range m.ckpts.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// cmdSave saves the conversation; replacing a checkpoint asks first.
func (m *Model) cmdSave(arg string) tea.Cmd {
	name := oneName(arg)
	save := func(m *Model) tea.Cmd {
		m.call(engine.OpSave, func(e Engine) error { return e.SaveCheckpoint(name) })
		return m.infoToast("Saving " + strconv.Quote(name) + "…")
	}
	if m.hasCheckpoint(name) {
		return m.ask(fmt.Sprintf("A checkpoint %q exists; saving replaces it.", name), save)
	}
	return save(m)
}

func (m *Model) cmdLoad(arg string) tea.Cmd { return m.replaceConversation("load", oneName(arg)) }
func (m *Model) cmdFork(arg string) tea.Cmd { return m.replaceConversation("fork", oneName(arg)) }

// replaceConversation loads or forks a checkpoint. It replaces what is
// on screen, so an unsaved conversation is not replaced without asking;
// afterwards the keys are the input's.
func (m *Model) replaceConversation(op, name string) tea.Cmd {
	verb := map[string]string{"load": "loading", "fork": "forking"}[op]
	if m.replying() {
		return m.errorToast("A reply is streaming; esc stops it before " + verb + ".")
	}
	do := func(m *Model) tea.Cmd {
		if op == "load" {
			m.call(engine.OpLoad, func(e Engine) error { return e.LoadCheckpoint(name) })
		} else {
			m.call(engine.OpFork, func(e Engine) error { return e.ForkCheckpoint(name) })
		}
		m.setFocus(focusInput)
		return m.infoToast(strings.ToUpper(verb[:1]) + verb[1:] + " " + strconv.Quote(name) + "…")
	}
	if m.unsaved && !m.conv.Empty() {
		return m.ask(fmt.Sprintf("The conversation on screen is not saved; %s %q replaces it (/save NAME keeps it).", verb, name), do)
	}
	return do(m)
}

// cmdRename takes two names; quote a name with spaces. Unquoted, the
// longest leading words that name a checkpoint are the old name.
func (m *Model) cmdRename(arg string) tea.Cmd {
	w, quoted := splitArgs(arg)
	if len(w) > 2 && !quoted {
		for i := len(w) - 1; i >= 1; i-- {
			if old := strings.Join(w[:i], " "); m.hasCheckpoint(old) {
				w = []string{old, strings.Join(w[i:], " ")}
				break
			}
		}
	}
	if len(w) != 2 {
		return m.errorToast(`/rename needs two names: /rename OLD NEW (quote a name with spaces: /rename "my chat" notes)`)
	}
	m.call(engine.OpRename, func(e Engine) error { return e.RenameCheckpoint(w[0], w[1]) })
	return nil
}

// cmdDelete asks, then deletes. The question gives the focus back to the
// input whatever the answer.
func (m *Model) cmdDelete(arg string) tea.Cmd {
	name := oneName(arg)
	if m.ckpts.Listed() && !m.hasCheckpoint(name) {
		return m.errorToast(fmt.Sprintf("There is no checkpoint %q.", name))
	}
	return m.ask(fmt.Sprintf("Delete the checkpoint %q? This cannot be undone.", name), func(m *Model) tea.Cmd {
		m.call(engine.OpDelete, func(e Engine) error { return e.DeleteCheckpoint(name) })
		return nil
	})
}

func (m *Model) cmdCheckpoints(string) tea.Cmd {
	m.openPanel(panelCheckpoints)
	m.call(engine.OpList, func(e Engine) error { return e.ListCheckpoints() })
	return nil
}

// cmdClear empties the chat; with a history the conversation is kept
// there, as with /new.
func (m *Model) cmdClear(string) tea.Cmd {
	if m.replying() {
		return m.errorToast("A reply is streaming; esc stops it before clearing.")
	}
	m.stopEditing()
	m.call(engine.OpClear, func(e Engine) error { return e.Clear() })
	return nil
}

// changeSettings sends a modified copy of the settings in force; the
// engine answers SettingsChanged or Failed{Op: engine.OpSettings}. A setting
// the bundle cannot honour is refused here at once, by the engine's own
// rules (engine.CheckSettings), and again by the engine.
func (m *Model) changeSettings(edit func(*engine.Settings)) tea.Cmd {
	s := m.turn.settings
	edit(&s)
	if _, err := engine.CheckSettings(m.info, m.turn.settings, s); err != nil {
		return m.errorToast(failureText("settings", err))
	}
	m.call(engine.OpSettings, func(e Engine) error { return e.SetSettings(s) })
	return nil
}

// cmdSystem shows the system prompt, sets it, or with "clear" removes it.
func (m *Model) cmdSystem(text string) tea.Cmd {
	switch strings.TrimSpace(text) {
	case "":
		if m.turn.settings.System == "" {
			return m.infoToast("There is no system prompt. /system TEXT sets one.")
		}
		return m.infoToast("System prompt: " + m.turn.settings.System + " (/system clear removes it)")
	case "clear":
		if m.turn.settings.System == "" {
			return m.infoToast("There is no system prompt to clear.")
		}
		return m.changeSettings(func(s *engine.Settings) { s.System = "" })
	}
	return m.changeSettings(func(s *engine.Settings) { s.System = text })
}

func (m *Model) cmdSpec(arg string) tea.Cmd {
	mode := engine.SpecMode(strings.ToLower(arg))
	switch mode {
	case engine.SpecModeOn, engine.SpecModeOff, engine.SpecModeAuto:
	default:
		return m.errorToast("/spec takes on, off or auto.")
	}
	return m.changeSettings(func(s *engine.Settings) { s.Speculation = mode })
}

func (m *Model) cmdDraft(arg string) tea.Cmd {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 {
		return m.errorToast("/draft takes a whole number of tokens, 1 or more.")
	}
	return m.changeSettings(func(s *engine.Settings) { s.DraftLen = n })
}

func (m *Model) cmdTemp(arg string) tea.Cmd {
	t, err := strconv.ParseFloat(arg, 64)
	if err != nil || t < 0 {
		return m.errorToast("/temp takes a number of 0 or more, such as 0.7 (0 is greedy).")
	}
	return m.changeSettings(func(s *engine.Settings) { s.Sampling.Temperature = t })
}

func (m *Model) cmdTopK(arg string) tea.Cmd {
	k, err := strconv.Atoi(arg)
	if err != nil || k < 0 {
		return m.errorToast("/topk takes a whole number, 0 or more (0 turns it off).")
	}
	return m.changeSettings(func(s *engine.Settings) { s.Sampling.TopK = k })
}

func (m *Model) cmdTopP(arg string) tea.Cmd {
	p, err := strconv.ParseFloat(arg, 64)
	if err != nil || p <= 0 || p > 1 {
		return m.errorToast("/topp takes a number above 0 and at most 1, such as 0.9.")
	}
	return m.changeSettings(func(s *engine.Settings) { s.Sampling.TopP = p })
}

func (m *Model) cmdSeed(arg string) tea.Cmd {
	v, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		return m.errorToast("/seed takes a whole number, 0 or more.")
	}
	return m.changeSettings(func(s *engine.Settings) { s.Sampling.Seed = v })
}

func (m *Model) cmdThink(arg string) tea.Cmd {
	var on bool
	switch strings.ToLower(arg) {
	case "on":
		on = true
	case "off":
	default:
		return m.errorToast("/think takes on or off.")
	}
	return m.changeSettings(func(s *engine.Settings) { s.Thinking = on })
}

func (m *Model) cmdStats(string) tea.Cmd {
	if m.panel == panelStats {
		m.closePanel()
	} else {
		m.openPanel(panelStats)
	}
	return nil
}

// cmdExport writes the conversation as markdown: without a name, or with
// a relative one, into the exports folder of the data folder.
func (m *Model) cmdExport(arg string) tea.Cmd {
	msgs := m.conv.Messages()
	if len(msgs) == 0 {
		return m.errorToast("There is nothing to export yet: the conversation is empty.")
	}
	path := oneName(arg)
	if path == "" {
		path = "orchard-" + m.now().Format("20060102-150405") + ".md"
	}
	return exportTranscript(path, m.exportDir, m.info, m.turn.settings, msgs, m.now(), lookupEnv(m.env, "HOME"))
}

func (m *Model) cmdHelp(string) tea.Cmd {
	m.showHelp = true
	return nil
}

func (m *Model) cmdQuit(string) tea.Cmd { return m.quit() }

// completion is the list under a slash command being typed.
type completion struct {
	st    *Styles
	width int
	items []compItem
	sel   int
}

type compItem struct {
	insert string // the input after accepting
	label  string
	desc   string
	final  bool // accepting leaves a complete command
}

// compRows bounds the completion list height.
const compRows = 6

func (c *completion) SetSize(w, _ int) { c.width = w }

func (c *completion) Visible() bool { return len(c.items) > 0 }
func (c *completion) Hide()         { c.items = nil; c.sel = 0 }

func (c *completion) Move(d int) {
	if len(c.items) > 0 {
		c.sel = (c.sel + d + len(c.items)) % len(c.items)
	}
}

func (c *completion) Selected() (compItem, bool) {
	if c.sel < len(c.items) {
		return c.items[c.sel], true
	}
	return compItem{}, false
}

// Set shows items, keeping the selection on the item of the same label.
func (c *completion) Set(items []compItem) {
	prev := ""
	if it, ok := c.Selected(); ok {
		prev = it.label
	}
	c.items, c.sel = items, 0
	for i, it := range items {
		if it.label == prev {
			c.sel = i
		}
	}
}

// updateCompletion recomputes the list from the input.
func (m *Model) updateCompletion() {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.Contains(v, "\n") {
		m.comp.Hide()
		return
	}
	var items []compItem
	name, arg, hasSpace := strings.Cut(strings.TrimPrefix(v, "/"), " ")
	name = strings.ToLower(name)
	if !hasSpace {
		for _, c := range m.commands {
			if strings.HasPrefix(c.name, name) {
				insert := "/" + c.name
				if c.args != "" {
					insert += " "
				}
				items = append(items, compItem{insert: insert, label: c.usage(), desc: c.help, final: c.args == ""})
			}
		}
	} else if name == "image" || name == "audio" {
		for _, p := range m.paths.Choices(arg, name) {
			dir := strings.HasSuffix(p, "/")
			items = append(items, compItem{insert: "/" + name + " " + p, label: p, desc: "attach", final: !dir})
		}
	} else if c, ok := m.findCommand(name); ok && c.choices != nil {
		// The argument typed so far, quotes included, is a prefix of the
		// choice as it is inserted (quoted when it holds spaces).
		for _, ch := range c.choices(m) {
			q := quoteName(ch)
			if (strings.HasPrefix(q, arg) || strings.HasPrefix(ch, arg)) && q != arg && ch != arg {
				insert := "/" + c.name + " " + q
				if c.name == "rename" {
					insert += " "
				}
				items = append(items, compItem{insert: insert, label: ch, desc: c.help, final: c.name != "rename"})
			}
		}
	}
	m.comp.Set(items)
}

func (c *completion) Height() int { return min(len(c.items), compRows) }

func (c *completion) View() string {
	st := c.st
	start := max(0, min(c.sel-compRows+1, len(c.items)-compRows))
	end := min(len(c.items), start+compRows)
	lines := make([]string, 0, end-start)
	labelW := 0
	for _, it := range c.items[start:end] {
		labelW = max(labelW, xansi.StringWidth(it.label))
	}
	for i := start; i < end; i++ {
		it := c.items[i]
		line := " " + padRight(it.label, labelW) + "  " + st.CompletionDesc.Render(it.desc)
		line = padRight(xansi.Truncate(line, c.width, "…"), c.width)
		if i == c.sel {
			line = st.CompletionSel.Render(xansi.Strip(line))
		} else {
			line = st.CompletionItem.Render(line)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
