package tui

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	uv "github.com/charmbracelet/ultraviolet"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

type panelKind int

const (
	panelNone panelKind = iota
	panelStats
	panelCheckpoints
	panelHistory
	panelTools // /tools (toolspanel.go)
)

// Layout constants.
const (
	wideLayout    = 110 // from this width panels sit beside the conversation
	sidePanelW    = 46
	ckptSidePanel = 64
	minConvRows   = 4
	frameInterval = time.Second / 30 // streaming tail re-render rate
	quitWindow    = 2 * time.Second  // second ctrl+c must come within this
	maxTextWidth  = 100              // replies wrap here on wide terminals, for reading
	minWidth      = 40               // below this size the screen asks for a larger terminal
	minHeight     = 10
)

// Messages of the model's own commands.
type (
	engineMsg struct {
		events []engine.Event
		closed bool
	}
	frameMsg    struct{}
	autosaveMsg struct{}
)

// Model is the chat screen: the one Bubble Tea model. It routes input
// to its components, which are plain structs, and turns engine events
// into their state. It never blocks on the engine: calls go through an
// ordered queue and events arrive as messages.
type Model struct {
	eng    Engine
	events <-chan engine.Event
	calls  *callQueue      // nil: call the engine inline (tests)
	done   <-chan struct{} // closed when Run ends; stops the event pump

	env             []string
	nativeClipboard bool
	run             commandRunner // runs tmux for /copy
	now             func() time.Time
	autosaveEvery   time.Duration
	theme           string
	noColor         bool
	noMouse         bool
	log             *slog.Logger
	exportDir       string

	keys     keyMap
	routes   []keyRoute // what each key does where (routes.go)
	st       *Styles
	md       *markdown
	commands []command

	width, height int
	info          engine.ModelInfo
	turn          turnState   // the chat's turn and the settings in force (turn.go)
	remote        remoteState // over a server: its line and the connection (remote.go)
	ctx           ctxState    // the window as the engine last reported it (contextview.go)
	cost          costState   // the price of the message being written (cost.go)

	header  header
	conv    *conversation
	input   input
	stats   stats
	status  statusBar
	ckpts   checkpoints
	toast   toast
	comp    completion
	palette palette
	confirm confirm
	hist    historyPanel
	toolsP  toolsPanel
	findBar findBar
	ctxView contextPanel
	help    help.Model

	panes          [numFocus]focusable // the components that take the keys, by focusKind
	layers         []focusKind         // the focus stack (focus.go): the last has the keys
	panel          panelKind
	showHelp       bool
	showMessage    bool // the last notice or error, whole (f6)
	convH, convW   int
	panelH, panelW int
	quitArmedAt    time.Time
	frameScheduled bool
	changed        bool               // the conversation changed since the last autosave
	unsaved        bool               // the conversation changed since it was last saved or loaded by name
	attached       []engine.MediaFile // files queued for the next message (/image, /audio)
	checking       []engine.MediaFile // files being checked before they join attached
	pics           *pictures          // which picture protocol the terminal speaks
	paths          pathCompletion     // directory listings for completing their paths
	refused        string             // a message the engine refused, put back in the input
	helpOffset     int                // lines the help screen is scrolled
	tools          *toolLoop          // the MCP tools' loop (toolloop.go); nil without tools
	quitting       bool
	engineStopped  bool

	// The help bar and header change only with the width or the theme;
	// drawing them costs more than the conversation, so they are kept.
	helpBar, headerLine string
	cachedW             int
}

// newModel builds the chat screen for eng. It reads the engine's
// static state once; everything later comes as events.
func newModel(eng Engine, opts Options) (*Model, error) {
	keys := defaultKeyMap()
	if err := keys.override(opts.Keys); err != nil {
		return nil, err
	}
	theme := strings.ToLower(opts.Theme)
	switch theme {
	case "":
		theme = "auto"
	case "auto", "dark", "light":
	default:
		return nil, fmt.Errorf("unknown theme %q (want auto, dark or light)", opts.Theme)
	}
	env := opts.Env
	noColor := opts.NoColor || lookupEnv(env, "NO_COLOR") != ""
	dark := theme != "light"
	st := newStyles(dark, noColor)
	md := newMarkdown(dark, noColor)

	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &Model{
		eng:             eng,
		log:             logger,
		exportDir:       opts.ExportDir,
		events:          eng.Events(),
		env:             env,
		nativeClipboard: !opts.NoNativeClipboard,
		run:             runProgram,
		now:             time.Now,
		autosaveEvery:   opts.AutosaveEvery,
		theme:           theme,
		noColor:         noColor,
		noMouse:         opts.NoMouse,
		keys:            keys,
		st:              st,
		md:              md,
		commands:        commandTable(),
		info:            safeInfo(eng.Info()),
	}
	m.turn.settings = eng.Settings()
	m.tools = newToolLoop(opts.Tools, eng)
	if m.autosaveEvery == 0 {
		m.autosaveEvery = 2 * time.Minute
	}
	m.header = header{st: st, info: m.info, home: lookupEnv(env, "HOME")}
	m.pics = newPictures(env, false)
	m.conv = newConversation(st, md, m.pics)
	m.conv.SetMessages(eng.Messages())
	m.conv.SetWindow(eng.Window())
	m.input = newInput(st, keys)
	m.stats = stats{st: st, info: m.info, turn: &m.turn}
	m.status = statusBar{st: st}
	m.ckpts = newCheckpoints(st)
	m.toast = toast{st: st, more: keys.Message.Help().Key + " shows all"}
	m.comp = completion{st: st}
	m.palette = newPalette(st, m.commands)
	m.confirm = confirm{st: st, keys: newYesNoKeys()}
	m.hist = newHistoryPanel(st)
	m.toolsP = newToolsPanel(st)
	m.findBar = newFindBar(st)
	m.ctxView = newContextPanel(st)
	m.cost.src = costerOf(eng)
	m.cost.remote = m.info.Server != ""
	m.panes = [numFocus]focusable{
		focusInput:   &m.input,
		focusPanel:   &m.ckpts,
		focusPalette: &m.palette,
		focusConfirm: &m.confirm,
		focusHistory: &m.hist,
		focusFind:    &m.findBar,
		focusTools:   &m.toolsP,
		focusContext: &m.ctxView,
	}
	m.layers = []focusKind{focusInput}
	m.routes = keyRoutes(&m.keys)
	m.help = help.New()
	m.help.Styles = st.Help
	m.setWelcome()
	return m, nil
}

func (m *Model) setWelcome() {
	st := m.st
	i := m.info
	line2 := strings.Join(m.header.Facts(), " · ")
	welcome := []string{
		st.WelcomeKey.Render("orchard"),
		"",
		st.Value.Render(orDefault(i.Name, "no model")),
		st.Welcome.Render(line2),
		"",
		st.Welcome.Render("Type a message and press ") + st.WelcomeKey.Render("enter") + st.Welcome.Render("."),
		st.WelcomeKey.Render("/") + st.Welcome.Render(" commands · ") + st.WelcomeKey.Render("ctrl+p") + st.Welcome.Render(" palette · ") +
			st.WelcomeKey.Render("?") + st.Welcome.Render(" help · ") + st.WelcomeKey.Render("ctrl+c ctrl+c") + st.Welcome.Render(" quit"),
	}
	for _, n := range i.Notes {
		welcome = append(welcome, st.Welcome.Render(n))
	}
	m.conv.SetWelcome(welcome)
}

// call runs an engine command off the Update path, in order; a refusal
// comes back as a refusedMsg.
func (m *Model) call(op engine.Op, f func(Engine) error) {
	if m.calls == nil {
		// Tests without a queue: inline, the refusal taken at once.
		if err := f(m.eng); err != nil {
			m.onRefused(refusedMsg{op: op, err: err})
		}
		return
	}
	m.calls.push(op, f)
}

func (m *Model) Init() tea.Cmd {
	m.call(engine.OpList, func(e Engine) error { return e.ListCheckpoints() })
	m.askContext(m.eng.Window())
	cmds := []tea.Cmd{m.waitEvents(), m.autosaveTick()}
	if m.theme == "auto" && !m.noColor {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	cmds = append(cmds, m.pics.Query())
	if m.tools != nil {
		cmds = append(cmds, m.tools.loadTools())
	}
	return tea.Batch(cmds...)
}

// waitEvents receives the next engine events. Deltas waiting behind the
// first event are taken in the same message, so a fast engine costs
// one Update per batch, not one per token.
func (m *Model) waitEvents() tea.Cmd {
	ch, done := m.events, m.done
	return func() tea.Msg {
		var ev engine.Event
		var ok bool
		select {
		case ev, ok = <-ch:
		case <-done:
			return nil
		}
		if !ok {
			return engineMsg{closed: true}
		}
		evs := []engine.Event{ev}
		for len(evs) < 512 {
			select {
			case ev, ok := <-ch:
				if !ok {
					return engineMsg{events: evs, closed: true}
				}
				evs = append(evs, ev)
			default:
				return engineMsg{events: evs}
			}
		}
		return engineMsg{events: evs}
	}
}

func (m *Model) autosaveTick() tea.Cmd {
	if m.autosaveEvery < 0 {
		return nil
	}
	return tea.Tick(m.autosaveEvery, func(time.Time) tea.Msg { return autosaveMsg{} })
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resize()
	case tea.BackgroundColorMsg:
		if m.theme == "auto" {
			m.setTheme(msg.IsDark())
		}
	case engineMsg:
		cmd = m.handleEvents(msg.events)
		if msg.closed {
			m.engineStopped = true
			m.quitting = true
			return m, tea.Quit
		}
		cmd = tea.Batch(cmd, m.waitEvents())
	case refusedMsg:
		cmd = m.onRefused(msg)
	case toolsetMsg, toolDoneMsg, toolKeptMsg:
		cmd = m.onToolMsg(msg)
	case frameMsg:
		m.frameScheduled = false
		m.conv.Refresh()
	case toastExpireMsg:
		m.toast.Expire(msg.id)
	case autosaveMsg:
		if m.changed && !m.turn.busy() {
			m.changed = false
			m.call(engine.OpAutosave, func(e Engine) error { return e.Autosave() })
		}
		cmd = m.autosaveTick()
	case editorReadyMsg:
		if msg.err != nil {
			cmd = m.errorToast("The editor could not start: " + msg.err.Error())
		} else {
			cmd = runEditor(m.env, msg.path)
		}
	case editorDoneMsg:
		if msg.err != nil {
			cmd = m.errorToast("The editor failed: " + msg.err.Error())
		} else {
			m.input.SetValue(msg.text)
			m.updateCompletion()
		}
	case exportedMsg:
		if msg.err != nil {
			cmd = m.errorToast("The conversation was not exported: " + msg.err.Error())
		} else {
			cmd = m.infoToast("Exported the conversation to " + msg.path + ".")
		}
	case copiedMsg:
		if text, ok := msg.text(); ok {
			cmd = m.infoToast(text)
		} else {
			cmd = m.errorToast(text)
		}
	case tea.PasteMsg:
		cmd = m.routeText(msg)
	case dirListedMsg:
		m.paths.Listed(msg)
		m.updateCompletion()
	case attachCheckedMsg:
		cmd = m.attachChecked(msg)
	case costTickMsg:
		if msg.seq == m.cost.seq {
			cmd = m.costCmd()
		}
	case costMsg:
		m.onCost(msg)
	case uv.KittyGraphicsEvent, tea.TerminalVersionMsg, uv.PrimaryDeviceAttributesEvent:
		if m.pics.Feed(msg) {
			cmd = m.conv.SendPictures()
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.conv.ScrollUp(3)
		case tea.MouseWheelDown:
			m.conv.ScrollDown(3)
		}
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	default:
		if m.focused() == focusInput {
			_, cmd = m.input.Update(msg)
		}
	}
	m.layout()
	if fetch := m.paths.Fetch(); fetch != nil {
		cmd = tea.Batch(cmd, fetch)
	}
	if price := m.priceCmd(); price != nil {
		cmd = tea.Batch(cmd, price)
	}
	return m, cmd
}

// routeText sends pasted text where the focus is.
func (m *Model) routeText(msg tea.PasteMsg) tea.Cmd {
	if f := m.focused(); f != focusInput {
		act, cmd := m.panes[f].Update(msg)
		return tea.Batch(cmd, m.act(act))
	}
	if m.input.Value() == "" {
		if cmd, asked := m.offerPastedPath(msg.Content); asked {
			return cmd
		}
	}
	cmd := m.input.Paste(msg)
	m.updateCompletion()
	return cmd
}

// scrollHelp scrolls the help screen when it is taller than the
// terminal; any other key closes it.
func (m *Model) scrollHelp(msg tea.KeyPressMsg) bool {
	switch msg.String() {
	case "down", "j", "pgdown", "space":
		m.helpOffset++
		if msg.String() == "pgdown" || msg.String() == "space" {
			m.helpOffset += max(1, m.mainHeight()-2)
		}
	case "up", "k", "pgup":
		m.helpOffset--
		if msg.String() == "pgup" {
			m.helpOffset -= max(1, m.mainHeight()-2)
		}
	default:
		return false
	}
	m.helpOffset = max(0, m.helpOffset)
	return true
}

// submit handles enter: a slash command, or a message to send.
func (m *Model) submit() tea.Cmd {
	v := strings.TrimSpace(m.input.Value())
	if v == "" && len(m.attached)+len(m.checking) == 0 {
		return nil
	}
	if strings.HasPrefix(v, "/") && !strings.Contains(v, "\n") {
		name, _ := parseCommand(v)
		if _, exact := m.findCommand(name); !exact && m.comp.Visible() {
			if !m.acceptCompletion() {
				return nil
			}
			v = strings.TrimSpace(m.input.Value())
		}
		m.input.Remember(v)
		m.input.Reset()
		m.comp.Hide()
		return m.runCommand(v)
	}
	if m.replying() {
		return m.errorToast("A reply is still streaming; esc stops it.")
	}
	if cmd := m.toolsWaiting(); cmd != nil {
		return cmd
	}
	if m.input.Editing() {
		return m.sendEdit(strings.TrimSpace(m.input.Text()), m.input.EditOrig())
	}
	if len(m.checking) > 0 {
		return m.infoToast(filepath.Base(m.checking[0].Path) + " is still being checked; press enter again in a moment.")
	}
	if cmd, ok := m.checkFits(); !ok {
		return cmd
	}
	text := strings.TrimSpace(m.input.Text()) // a folded paste goes whole
	m.input.Remember(v)
	m.input.Reset()
	m.comp.Hide()
	files := m.attached
	m.attached = nil
	m.turn.send(files, v)
	m.conv.AddUser(text, files...)
	m.refused = ""
	m.changed, m.unsaved = true, true
	m.call(engine.OpSend, func(e Engine) error { return e.Send(text, files...) })
	return nil
}

// acceptCompletion puts the selected completion in the input. It
// reports whether the result is a complete command to run now.
func (m *Model) acceptCompletion() bool {
	it, ok := m.comp.Selected()
	if !ok {
		return false
	}
	m.input.SetValue(it.insert)
	m.updateCompletion()
	if it.final {
		m.comp.Hide()
	}
	return it.final
}

func (m *Model) runPaletteItem(it paletteItem) tea.Cmd {
	if it.action != nil {
		return it.action(m)
	}
	c, ok := m.findCommand(it.command)
	if !ok {
		return nil
	}
	if c.args != "" && !c.optArgs {
		m.input.SetValue("/" + c.name + " ")
		m.updateCompletion()
		return nil
	}
	return c.run(m, "") // an optional argument: the command alone (/history, /find, /edit, …)
}

// replying reports whether a reply is on its way: streaming, or sent
// and not started yet.
func (m *Model) replying() bool { return m.turn.replying() }

// interrupt is ctrl+c, as in shells and chat programs: it closes the
// palette or a question, stops a reply, clears the input; on an empty
// input it arms quitting, and a second press within quitWindow quits.
func (m *Model) interrupt() tea.Cmd {
	switch m.focused() {
	case focusPalette:
		m.closePalette()
		return nil
	case focusConfirm:
		m.closeTop()
		if m.tools.asking() {
			return m.stopCalls() // a tool call's question: ctrl+c stops the loop, as esc does
		}
		return m.infoToast("Nothing was changed.")
	case focusFind:
		m.closeFind()
		return nil
	}
	switch {
	case m.replying():
		m.quitArmedAt = time.Time{}
		m.call(engine.OpCancel, func(e Engine) error { return e.Cancel() })
		return nil
	case m.tools.waiting():
		m.quitArmedAt = time.Time{}
		return m.stopCalls()
	case m.focused() == focusInput && m.input.Value() != "":
		m.quitArmedAt = time.Time{}
		m.input.Reset()
		m.comp.Hide()
		m.refused = ""
		m.stopEditing()
		return nil
	}
	if m.focused() != focusInput {
		m.setFocus(focusInput)
	}
	if !m.quitArmedAt.IsZero() && m.now().Sub(m.quitArmedAt) <= quitWindow {
		return m.quit()
	}
	m.quitArmedAt = m.now()
	return m.infoToast("Press " + m.keys.Quit.Keys()[0] + " again to quit (the conversation is saved).")
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

func (m *Model) infoToast(text string) tea.Cmd  { return m.showToast(toastInfo, text) }
func (m *Model) errorToast(text string) tea.Cmd { return m.showToast(toastError, text) }

func (m *Model) showToast(kind toastKind, text string) tea.Cmd {
	if kind == toastError {
		m.log.Error(tidyMessage(text)) // the log keeps every error whole
	}
	id, d := m.toast.Show(kind, text)
	return tea.Tick(d, func(time.Time) tea.Msg { return toastExpireMsg{id: id} })
}

// setTheme switches light/dark in place; components share the styles.
func (m *Model) setTheme(dark bool) {
	if m.st.Dark == dark {
		return
	}
	*m.st = *newStyles(dark, m.noColor)
	*m.md = *newMarkdown(dark, m.noColor)
	m.input.SetStyles(m.st)
	m.help.Styles = m.st.Help
	m.conv.Invalidate()
	m.setWelcome()
	m.headerLine = ""
}

// resize sets every component's size after a window change.
func (m *Model) resize() {
	w := m.width
	m.header.SetSize(w, 1)
	m.status.SetSize(w, 1)
	m.toast.SetSize(w, m.height)
	m.confirm.SetSize(w, 1)
	m.findBar.SetSize(w, 1)
	m.comp.SetSize(w, compRows)
	m.input.SetSize(w, max(1, m.height/4))
	m.layout()
}

// layout splits the rows between the conversation, the panel and the
// fixed lines. The input grows as the user types, so this runs after
// every update; it only does arithmetic and cheap SetSize calls.
func (m *Model) layout() {
	if m.width == 0 || m.height == 0 {
		return
	}
	w := m.width
	bottom := m.input.Height() + 1 + m.bottomLines()
	mainH := max(1, m.height-1-bottom)
	m.convW, m.convH = w, mainH
	m.panelW, m.panelH = 0, 0
	if m.panel != panelNone {
		if w >= wideLayout {
			m.panelW = sidePanelW
			if m.panel == panelCheckpoints || m.panel == panelHistory || m.panel == panelTools {
				m.panelW = ckptSidePanel
			}
			m.panelH = mainH
			m.convW = w - m.panelW - 1 // a column of air before the panel
		} else {
			m.panelW = w
			m.setPanelSize(w, mainH)
			want := m.stats.Height()
			switch m.panel {
			case panelCheckpoints:
				want = m.ckpts.Height()
			case panelHistory:
				want = m.hist.Height()
			case panelTools:
				want = m.toolsP.Height()
			}
			m.panelH = max(0, min(want, mainH-minConvRows))
			m.convH = mainH - m.panelH
		}
		m.setPanelSize(m.panelW, m.panelH)
	}
	m.conv.SetSize(m.convW, m.convH)
	m.palette.SetSize(w, mainH)
	m.ctxView.SetSize(w, mainH)
}

func (m *Model) setPanelSize(w, h int) {
	m.stats.SetSize(w, h)
	m.ckpts.SetSize(w, h)
	m.hist.SetSize(w, h)
	m.toolsP.SetSize(w, h)
}

// bottomLines is the rows of the last line: a question, a toast or the
// help bar.
func (m *Model) bottomLines() int {
	switch {
	case m.asking():
		return m.confirm.Lines()
	case m.focused() == focusFind:
		return 1
	case m.showMessage:
		return 1 // the message itself is on screen
	}
	return max(1, m.toast.Lines())
}

// mainHeight is the rows between the header and the input.
func (m *Model) mainHeight() int { return m.height - 1 - m.input.Height() - 1 - m.bottomLines() }

// tooSmall reports whether the terminal cannot hold the layout.
func (m *Model) tooSmall() bool { return m.width < minWidth || m.height < minHeight }

// View draws the screen.
func (m *Model) View() tea.View {
	var v tea.View
	v.AltScreen = true
	if !m.noMouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "orchard · " + orDefault(m.info.Name, "chat")
	if m.width == 0 || m.height == 0 || m.quitting {
		return v
	}
	if m.tooSmall() {
		v.SetContent(m.tooSmallView())
		return v
	}
	mainH := m.mainHeight()
	var main string
	switch {
	case m.showHelp:
		main = m.scrolledHelp(mainH)
	case m.showMessage:
		main = m.messageView()
	case m.focused() == focusPalette:
		main = m.palette.View()
	case m.focused() == focusContext:
		main = m.ctxView.View()
	default:
		main = m.mainView()
	}
	lines := fitLines(main, mainH, m.width)
	if m.comp.Visible() && !m.showHelp && m.focused() == focusInput {
		comp := strings.Split(m.comp.View(), "\n")
		if len(comp) <= len(lines) {
			copy(lines[len(lines)-len(comp):], comp)
		}
	} else if a := m.attachedView(); a != "" && len(lines) > 0 && !m.showHelp {
		lines[len(lines)-1] = a
	}

	if m.cachedW != m.width || m.headerLine == "" {
		m.cachedW = m.width
		m.headerLine = m.header.View()
		m.helpBar = m.shortHelp()
	}
	var b strings.Builder
	b.WriteString(m.headerLine)
	b.WriteByte('\n')
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteByte('\n')
	inputTop := 1 + mainH
	b.WriteString(m.input.View())
	b.WriteByte('\n')
	b.WriteString(m.status.View(&m.turn, &m.stats, &m.remote))
	b.WriteByte('\n')
	switch {
	case m.asking():
		b.WriteString(m.confirm.View())
	case m.focused() == focusFind:
		b.WriteString(m.findBar.View())
	case m.toast.Visible() && !m.showMessage:
		b.WriteString(m.toast.View())
	default:
		b.WriteString(m.helpBar)
	}
	v.SetContent(b.String())
	if m.focused() == focusInput && !m.showHelp && !m.showMessage {
		if c := m.input.Cursor(); c != nil {
			c.Y += inputTop
			v.Cursor = c
		}
	}
	return v
}

// tooSmallView asks for a larger terminal instead of drawing a broken
// layout.
func (m *Model) tooSmallView() string {
	text := fmt.Sprintf("The terminal is %d×%d; orchard needs at least %d×%d. Make the window larger.", m.width, m.height, minWidth, minHeight)
	ls := wrapPlain(text, m.width)
	top := max(0, (m.height-len(ls))/2)
	out := make([]string, 0, m.height)
	for range top {
		out = append(out, "")
	}
	for _, l := range ls {
		out = append(out, m.st.Dim.Render(lipgloss.PlaceHorizontal(m.width, lipgloss.Center, l)))
	}
	return strings.Join(fitLines(strings.Join(out, "\n"), m.height, m.width), "\n")
}

// shortHelp is the help bar: the most useful bindings that fit the width
// whole (none cut in the middle), in their usual order.
func (m *Model) shortHelp() string {
	k := m.keys
	shown := []key.Binding{k.Send, k.Newline, k.Cancel, k.Palette, k.Stats, k.Checkpoints, k.Help, k.Quit}
	priority := []int{0, 3, 6, 7, 2, 1, 4, 5} // indexes into shown, most useful first
	hm := m.help
	hm.SetWidth(0)
	var bar string
	for n := 1; n <= len(priority); n++ {
		keep := slices.Clone(priority[:n])
		slices.Sort(keep)
		var bs []key.Binding
		for _, i := range keep {
			bs = append(bs, shown[i])
		}
		v := hm.ShortHelpView(bs)
		if n > 1 && xansi.StringWidth(v) > m.width {
			break
		}
		bar = v
	}
	return xansi.Truncate(bar, m.width, "")
}

// messageView shows the last notice or error whole (f6): a toast wraps a
// long message to a few lines, this shows all of it.
func (m *Model) messageView() string {
	st := m.st
	title := "Last notice"
	if m.toast.LastKind() == toastError {
		title = "Last error"
	}
	lines := []string{st.PanelTitle.Render(title) + st.Dim.Render("  · any key closes"), ""}
	lines = append(lines, wrapPlain(m.toast.Last(), max(m.width-2, 10))...)
	return strings.Join(lines, "\n")
}

// mainView is the conversation with the panel beside or below it.
func (m *Model) mainView() string {
	conv := m.conv.View()
	if m.panel == panelNone || m.panelH == 0 {
		return conv
	}
	var panel string
	switch m.panel {
	case panelStats:
		panel = m.stats.View()
	case panelHistory:
		panel = m.hist.View()
	case panelTools:
		panel = m.toolsP.View()
	default:
		panel = m.ckpts.View()
	}
	if m.panelW < m.width {
		left := fitLines(conv, m.convH, m.convW)
		for i, l := range left {
			left[i] = padRight(l, m.convW+1)
		}
		return lipgloss.JoinHorizontal(lipgloss.Top, strings.Join(left, "\n"), panel)
	}
	return strings.Join(fitLines(conv, m.convH, m.width), "\n") + "\n" + panel
}

// scrolledHelp is the help screen from helpOffset, with a note when
// more of it is below or above.
func (m *Model) scrolledHelp(h int) string {
	lines := strings.Split(m.helpView(), "\n")
	if len(lines) <= h {
		m.helpOffset = 0
		return strings.Join(lines, "\n")
	}
	m.helpOffset = min(m.helpOffset, len(lines)-h+1)
	lines = lines[m.helpOffset:]
	if len(lines) > h {
		lines = append(lines[:h-1], m.st.ScrollHint.Render(fmt.Sprintf(" ↓ %d more lines · ↓/pgdn scroll · any other key closes ", len(lines)-h+1)))
	}
	return strings.Join(lines, "\n")
}

func (m *Model) helpView() string {
	st := m.st
	hm := m.help
	hm.ShowAll = true
	lines := []string{st.PanelTitle.Render("Keys") + st.Dim.Render("  · any key closes")}
	lines = append(lines, strings.Split(hm.View(m.keys), "\n")...)
	lines = append(lines, "", st.PanelTitle.Render("Commands"))
	// Commands in as many columns as the width allows, so the whole
	// screen fits in 80×24.
	cmds := slices.DeleteFunc(slices.Clone(m.commands), func(c command) bool { return c.alias })
	uw := 0
	for _, c := range cmds {
		uw = max(uw, len(c.usage()))
	}
	cols := max(1, min(3, m.width/40))
	rows := (len(cmds) + cols - 1) / cols
	// When the commands with their descriptions do not fit the screen left,
	// list the commands alone, in as many columns as fit: every one shows.
	compact := len(lines)+rows > m.height-4
	if compact {
		cols = max(1, m.width/(uw+2))
		rows = (len(cmds) + cols - 1) / cols
	}
	colW := m.width / cols
	for r := range rows {
		var line string
		for c := range cols {
			i := c*rows + r
			if i >= len(cmds) {
				break
			}
			cmd := cmds[i]
			cell := st.Value.Render(padRight(cmd.usage(), uw)) + " " + st.Dim.Render(cmd.help)
			if compact {
				cell = st.Value.Render(cmd.usage())
			}
			line += padRight(xansi.Truncate(cell, colW-1, "…"), colW)
		}
		lines = append(lines, line)
	}
	if compact {
		lines = append(lines, st.Dim.Render("ctrl+p lists them with what each does"))
	}
	return strings.Join(lines, "\n")
}

// fitLines returns exactly h lines of s, each cut to w cells.
func fitLines(s string, h, w int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if xansi.StringWidth(l) > w {
			lines[i] = xansi.Truncate(l, w, "")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return lines
}
