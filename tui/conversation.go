package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// chatMsg is one turn as shown, with its rendered lines cached.
type chatMsg struct {
	role        string // "user" or "model"
	text        string
	runs        []draftRun // model replies: which bytes came from accepted drafts
	streaming   bool
	cancelled   bool
	interrupted bool // cut short in an earlier session (a loaded conversation)
	metrics     *engine.TurnMetrics
	// version is this message's place among versions (regenerated
	// replies, edited messages); versions is 0 when it has no other.
	version, versions int

	blocks      []codeBlock // its fenced code blocks, for blocksLen bytes of text
	blocksLen   int
	body        [2]int              // the lines of lines that hold the text (search looks there)
	found       msgMatches          // its matches of the search, while its lines stay
	attachments []engine.Attachment // a user message's files (chips, thumbnails)
	card        *toolCard           // role "tool": the calls and their results (toolcard.go)

	lines  []string  // rendered, trailing separator included; nil: not rendered
	key    renderKey // what lines were rendered for
	dirty  bool      // streaming text grew since lines were made
	stream streamMarkdown
}

// draftRun covers the reply bytes up to end; draft says whether they
// came from accepted speculative drafts.
type draftRun struct {
	end   int
	draft bool
}

type renderKey struct {
	width             int
	drafts, thinking  bool
	pictures          bool // thumbnails are drawn by the terminal (kitty placeholders)
	version, versions int
	code              int // the number of its first code block
}

// conversation is the scrolling transcript. Messages are rendered
// lazily and cached per width, and the view is assembled from the
// bottom up, so a frame costs what is visible, not the whole history.
type conversation struct {
	st *Styles
	md *markdown

	width, height int
	msgs          []*chatMsg
	fromBottom    int // lines scrolled up; 0 follows the output

	showDrafts   bool
	showThinking bool
	modelLabel   string
	welcome      []string

	// kept are finished messages by role and text, so a message that
	// comes back (another version selected) keeps its figures.
	kept map[string]*chatMsg
	// find is the search in the conversation (ctrl+f); changes counts
	// changes to the transcript, so its matches are found again.
	find    finder
	changes uint64
	pics    *pictures // real thumbnails where the terminal draws them
	// window is the first message the model sees (window.go);
	// windowBefore, the one before the turn in flight moved it.
	window, windowBefore int
	// marks are the summary, pins and elisions in force (summary.go).
	marks contextMarks
}

// newConversation draws with st and md; pics (nil for none) places the
// pictures of messages.
func newConversation(st *Styles, md *markdown, pics *pictures) *conversation {
	return &conversation{st: st, md: md, pics: pics, modelLabel: "gemma", kept: map[string]*chatMsg{}}
}

// SetWelcome sets the lines shown while there is no message.
func (c *conversation) SetWelcome(lines []string) { c.welcome = lines }

// Empty reports whether no message is on screen.
func (c *conversation) Empty() bool { return len(c.msgs) == 0 }

// LastUserText is the last message the user sent, as shown.
func (c *conversation) LastUserText() string {
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].role == "user" {
			return c.msgs[i].text
		}
	}
	return ""
}

// VersionTarget is the message ← and → act on: the last one that has
// other versions (index -1 for none), the version shown (from 0) and how
// many there are.
func (c *conversation) VersionTarget() (index, version, versions int) {
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if m := c.msgs[i]; m.versions > 1 {
			return i, m.version, m.versions
		}
	}
	return -1, 0, 0
}

// StartReply begins the reply of a turn that started; versions > 1 says
// it is the last of that many versions (a regenerate or an edit).
func (c *conversation) StartReply(versions int) {
	r := c.streamingReply()
	if versions > 1 {
		r.version, r.versions = versions-1, versions
	}
}

func (c *conversation) SetSize(w, h int) {
	if w != c.width {
		c.fromBottom = 0 // line offsets mean nothing at another width
		c.changes++
	}
	c.width, c.height = max(w, 1), max(h, 1)
}

func keptKey(role, text string) string { return role + "\x00" + text }

// Replace shows another path through the conversation (a version
// selected, a turn taken back for a regenerate or an edit). Messages that
// were on screen, or on screen earlier, keep their figures.
func (c *conversation) Replace(msgs []engine.Message) {
	old := c.msgs
	for _, m := range old {
		if !m.streaming && m.metrics != nil {
			c.kept[keptKey(m.role, m.text)] = m
		}
	}
	c.msgs = make([]*chatMsg, 0, len(msgs))
	for i, em := range msgs {
		role := roleOf(em.Role)
		var m *chatMsg
		if role == "tool" {
			m = cardMessage(msgs, i)
		} else if i < len(old) && old[i].role == role && old[i].text == em.Content && !old[i].streaming {
			m = old[i]
		} else if k, ok := c.kept[keptKey(role, em.Content)]; ok {
			m = k
		} else {
			m = &chatMsg{role: role, text: em.Content, interrupted: em.Interrupted, cancelled: em.Stopped, metrics: em.Metrics,
				attachments: em.Attachments}
		}
		m.version, m.versions = em.Version, em.Versions
		c.msgs = append(c.msgs, m)
	}
	c.fromBottom = 0
	c.changes++
}

func roleOf(r string) string {
	if r == "user" || r == "tool" {
		return r
	}
	return "model"
}

// SetMessages replaces the transcript (start-up, a loaded checkpoint,
// a fork, /clear).
func (c *conversation) SetMessages(msgs []engine.Message) {
	c.msgs = c.msgs[:0]
	clear(c.kept)
	for i, m := range msgs {
		if m.Role == "tool" {
			c.msgs = append(c.msgs, cardMessage(msgs, i))
			continue
		}
		c.msgs = append(c.msgs, &chatMsg{role: roleOf(m.Role), text: m.Content, interrupted: m.Interrupted,
			cancelled: m.Stopped, metrics: m.Metrics, version: m.Version, versions: m.Versions, attachments: m.Attachments})
	}
	c.fromBottom = 0
	c.changes++
}

// AddUser appends the user's message and follows the output again:
// sending is a sign the user wants to see what comes back. Files sent with
// it show by name until the engine has encoded them (SetAttachments).
func (c *conversation) AddUser(text string, files ...engine.MediaFile) {
	msg := &chatMsg{role: "user", text: text}
	for _, f := range files {
		msg.attachments = append(msg.attachments, engine.Attachment{Kind: f.Kind, Name: filepath.Base(f.Path), Path: f.Path})
	}
	c.msgs = append(c.msgs, msg)
	c.fromBottom = 0
	c.changes++
}

// SetAttachments gives the last user message its encoded attachments.
func (c *conversation) SetAttachments(atts []engine.Attachment) {
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].role == "user" {
			c.msgs[i].attachments, c.msgs[i].lines = atts, nil
			return
		}
	}
}

// RemoveLastUser takes back an optimistic user message the engine
// refused, returning its text so it can go back into the input.
func (c *conversation) RemoveLastUser() (string, bool) {
	if n := len(c.msgs); n > 0 && c.msgs[n-1].role == "user" {
		t := c.msgs[n-1].text
		c.msgs = c.msgs[:n-1]
		c.changes++
		return t, true
	}
	return "", false
}

// streamingReply returns the reply being generated, starting one if
// needed.
func (c *conversation) streamingReply() *chatMsg {
	if n := len(c.msgs); n > 0 && c.msgs[n-1].streaming {
		return c.msgs[n-1]
	}
	m := &chatMsg{role: "model", streaming: true, dirty: true}
	c.msgs = append(c.msgs, m)
	c.changes++
	if c.fromBottom > 0 {
		c.fromBottom += len(c.render(m))
	}
	return m
}

// AppendDelta adds generated text. The render happens on the next
// frame tick (refresh), not per token.
func (c *conversation) AppendDelta(d engine.Delta) {
	m := c.streamingReply()
	start := len(m.text)
	m.text += d.Text
	m.runs = appendRuns(m.runs, start, d)
	m.dirty = true
	c.changes++
}

// appendRuns records which bytes of a delta came from drafts. Tokens
// and FromDraft are parallel but the text is not split per token, so a
// mixed delta is apportioned by characters in token order: exact when
// the engine sends one delta per run of equal FromDraft, close otherwise.
func appendRuns(runs []draftRun, start int, d engine.Delta) []draftRun {
	text := d.Text
	if text == "" {
		return runs
	}
	add := func(end int, draft bool) {
		if n := len(runs); n > 0 && runs[n-1].draft == draft {
			runs[n-1].end = end
			return
		}
		runs = append(runs, draftRun{end: end, draft: draft})
	}
	n := len(d.FromDraft)
	if n == 0 {
		add(start+len(text), false)
		return runs
	}
	chars := utf8.RuneCountInString(text)
	pos, seen := 0, 0
	for i := 0; i < n; {
		j := i
		for j < n && d.FromDraft[j] == d.FromDraft[i] {
			j++
		}
		want := chars * j / n
		if j == n {
			want = chars
		}
		for seen < want && pos < len(text) {
			_, size := utf8.DecodeRuneInString(text[pos:])
			pos += size
			seen++
		}
		add(start+pos, d.FromDraft[i])
		i = j
	}
	return runs
}

// FinishReply ends the streaming reply (Finished or Cancelled) and
// renders the whole reply once in one piece.
func (c *conversation) FinishReply(text string, metrics engine.TurnMetrics, cancelled bool) {
	m := c.streamingReply()
	if text != "" && text != m.text {
		// The engine's final text wins over the concatenated deltas.
		m.text = text
		m.runs = clipRuns(m.runs, len(text))
	}
	m.streaming = false
	m.cancelled = cancelled
	m.metrics = &metrics
	m.stream.reset()
	c.rerender(m)
	c.changes++
}

// clipRuns makes runs cover exactly n bytes.
func clipRuns(runs []draftRun, n int) []draftRun {
	for i, r := range runs {
		if r.end >= n {
			runs[i].end = n
			return runs[:i+1]
		}
	}
	return append(runs, draftRun{end: n})
}

// Refresh re-renders the streaming reply if it grew; the model calls it
// on each frame tick while a turn streams.
func (c *conversation) Refresh() {
	if n := len(c.msgs); n > 0 && c.msgs[n-1].dirty {
		c.rerender(c.msgs[n-1])
	}
}

// rerender renders m again and keeps a scrolled-up view still.
func (c *conversation) rerender(m *chatMsg) {
	before := len(m.lines)
	m.lines = nil
	after := len(c.render(m))
	if c.fromBottom > 0 && m == c.last() {
		c.fromBottom += after - before
	}
}

func (c *conversation) last() *chatMsg {
	if len(c.msgs) == 0 {
		return nil
	}
	return c.msgs[len(c.msgs)-1]
}

// LastReply returns the last model reply without thinking blocks.
func (c *conversation) LastReply() (string, bool) {
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].role == "model" && c.msgs[i].text != "" {
			// Cleaned: pasted into a shell, an escape in the reply (the end
			// of a bracketed paste, say) could run what follows it.
			return safeText(stripThinking(c.msgs[i].text)), true
		}
	}
	return "", false
}

// Messages returns the transcript as shown (for /export).
func (c *conversation) Messages() []engine.Message {
	out := make([]engine.Message, 0, len(c.msgs))
	for _, m := range c.msgs {
		em := engine.Message{Role: m.role, Content: m.text, Interrupted: m.cancelled || m.interrupted}
		if m.card != nil {
			em.Calls, em.Responses = m.card.record(true)
		}
		out = append(out, em)
	}
	return out
}

// ToggleDrafts shows or hides which tokens came from accepted drafts; it
// reports whether they are shown now.
func (c *conversation) ToggleDrafts() bool {
	c.showDrafts = !c.showDrafts
	c.Invalidate()
	return c.showDrafts
}

func (c *conversation) ToggleThinking() { c.showThinking = !c.showThinking; c.Invalidate() }

// Invalidate drops what was rendered, for other flags or another theme.
func (c *conversation) Invalidate() {
	for _, m := range c.msgs {
		m.lines = nil
	}
	clear(c.kept) // rendered for the old flags or theme
	c.fromBottom = 0
	c.changes++
}

// Scrolling. Offsets count lines from the bottom so following the
// output is simply fromBottom == 0.

func (c *conversation) AtBottom() bool { return c.fromBottom == 0 }

func (c *conversation) ScrollUp(n int) {
	want := c.fromBottom + n
	total := len(c.tail(want + c.height))
	c.fromBottom = max(0, min(want, total-c.height))
}

func (c *conversation) ScrollDown(n int) { c.fromBottom = max(0, c.fromBottom-n) }
func (c *conversation) PageUp()          { c.ScrollUp(max(1, c.height-1)) }
func (c *conversation) PageDown()        { c.ScrollDown(max(1, c.height-1)) }
func (c *conversation) Bottom()          { c.fromBottom = 0 }
func (c *conversation) Top()             { c.ScrollUp(1 << 30) }

// View renders the visible window.
func (c *conversation) View() string {
	if len(c.msgs) == 0 {
		return c.welcomeView()
	}
	if c.find.active() {
		return c.findView()
	}
	lines := c.tail(c.fromBottom + c.height)
	end := max(0, len(lines)-c.fromBottom)
	start := max(0, end-c.height)
	window := make([]string, 0, c.height)
	window = append(window, lines[start:end]...)
	for len(window) < c.height {
		window = append(window, "")
	}
	if c.fromBottom > 0 {
		hint := fmt.Sprintf(" ↓ %d more lines · ctrl+end follows ", c.fromBottom)
		window[len(window)-1] = c.st.ScrollHint.Render(xansi.Truncate(hint, c.width, "…"))
	}
	return strings.Join(window, "\n")
}

// tail returns the last n lines of the transcript (fewer if it is
// shorter), without the separator after the last message. Only the
// messages it reaches are rendered.
func (c *conversation) tail(n int) []string {
	var chunks [][]string
	got := 0
	for i := len(c.msgs) - 1; i >= 0 && got < n+1; i-- {
		ls := c.marked(i, c.render(c.msgs[i]))
		chunks = append(chunks, ls)
		got += len(ls)
		if c.ruleAbove(i) {
			rule := append(c.windowRule(), c.summaryBlock()...)
			chunks = append(chunks, rule)
			got += len(rule)
		}
	}
	out := make([]string, 0, min(got, n+1))
	for i := len(chunks) - 1; i >= 0; i-- {
		out = append(out, chunks[i]...)
	}
	if len(out) > 0 {
		out = out[:len(out)-1] // the separator after the last message
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// render returns m's lines, rendering them if the width or the display
// flags changed. A streaming reply keeps its last lines between frame
// ticks even though more text has arrived (see Refresh).
func (c *conversation) render(m *chatMsg) []string {
	return c.renderAt(m, c.codeFirst(m))
}

// renderAt is render with the number of m's first code block known.
func (c *conversation) renderAt(m *chatMsg, code int) []string {
	key := renderKey{width: c.width, drafts: c.showDrafts, thinking: c.showThinking, pictures: c.pics != nil && c.pics.kitty,
		version: m.version, versions: m.versions, code: code}
	if m.lines != nil && m.key == key {
		return m.lines
	}
	m.lines = c.renderMsg(m, code)
	m.key = key
	m.dirty = false
	return m.lines
}

const gutter = "  "

func (c *conversation) renderMsg(m *chatMsg, code int) []string {
	// Lines longer than about 100 columns are hard to read: on a wide
	// terminal the text keeps that measure.
	w := min(max(c.width-len(gutter), 10), maxTextWidth)
	if m.card != nil {
		return c.renderCard(m, w)
	}
	var label string
	var body []string
	if m.role == "user" {
		label = c.st.UserLabel.Render("you")
		body = c.userBody(m, w, code)
		body = append(body, c.chips(m.attachments, w)...)
	} else {
		label = c.st.ModelLabel.Render(c.modelLabel)
		if m.streaming {
			label += c.st.Footer.Render(" ▍")
		}
		body = c.replyBody(m, w, code)
	}
	if m.versions > 1 {
		label += c.st.Version.Render(fmt.Sprintf("  ‹ %d/%d ›", m.version+1, m.versions))
	}
	lines := make([]string, 0, len(body)+3)
	lines = append(lines, label)
	m.body = [2]int{1, 1 + len(body)}
	for _, l := range body {
		if l != "" {
			l = gutter + l
		}
		lines = append(lines, l)
	}
	if f := c.footer(m); f != "" {
		lines = append(lines, gutter+xansi.Truncate(f, w, "…"))
	}
	return append(lines, "")
}

func (c *conversation) modelBody(m *chatMsg, w, code int) []string {
	var out []string
	parts := splitThinking(m.text)
	for i, p := range parts {
		var pl []string
		switch {
		case p.thinking:
			pl = c.thinkingLines(m.text[p.start:p.end], p.open && m.streaming, w)
		case c.showDrafts:
			pl = wrapPlain(c.draftText(m, p), w)
		case m.streaming && i == len(parts)-1:
			pl = m.stream.render(c.md, safeText(m.text[p.start:p.end]), w, p.start)
		default:
			src := safeText(m.text[p.start:p.end])
			blocks := codeBlocks(src)
			if len(blocks) == 0 {
				pl = c.md.render(src, w)
				break
			}
			pl = labelCode(c.md.render(markCode(src, blocks, code), w), blocks, code, func(n int, lang string) string { return c.codeLabel(n, safeLine(lang)) })
			code += len(blocks)
		}
		out = glue(out, pl)
	}
	if len(out) == 0 && m.streaming {
		out = []string{c.st.Footer.Render("…")}
	}
	return out
}

// userBody is the user's text as typed, with a label before each code
// block.
func (c *conversation) userBody(m *chatMsg, w, code int) []string {
	text := safeText(m.text)
	blocks := codeBlocks(text)
	var out []string
	last := 0
	for i, cb := range blocks {
		if !cb.top || cb.start < last {
			continue
		}
		out = append(out, wrapPlain(c.st.UserText.Render(strings.TrimSuffix(text[last:cb.start], "\n")), w)...)
		out = append(out, c.codeLabel(code+i, safeLine(cb.lang)))
		last = cb.start
	}
	return append(out, wrapPlain(c.st.UserText.Render(text[last:]), w)...)
}

func (c *conversation) codeLabel(n int, lang string) string {
	return c.st.CodeLabel.Render(codeLabel(n, lang))
}

// blocksOf returns m's code blocks (of its text outside thinking).
func (c *conversation) blocksOf(m *chatMsg) []codeBlock {
	if m.blocksLen == len(m.text) && (m.blocks != nil || m.blocksLen > 0) {
		return m.blocks
	}
	m.blocks = m.blocks[:0]
	if m.role == "user" {
		m.blocks = codeBlocks(m.text)
	} else {
		for _, p := range splitThinking(m.text) {
			if !p.thinking {
				m.blocks = append(m.blocks, codeBlocks(m.text[p.start:p.end])...)
			}
		}
	}
	m.blocksLen = len(m.text)
	return m.blocks
}

// codeFirst is the number of m's first code block: blocks are numbered
// through the conversation from 1.
func (c *conversation) codeFirst(m *chatMsg) int {
	n := 1
	for _, o := range c.msgs {
		if o == m {
			break
		}
		n += len(c.blocksOf(o))
	}
	return n
}

// CodeBlock returns code block n (from 1) and how many there are; n 0
// means the last.
func (c *conversation) CodeBlock(n int) (codeBlock, int, int) {
	var all []codeBlock
	for _, m := range c.msgs {
		if !m.streaming {
			all = append(all, c.blocksOf(m)...)
		}
	}
	if n == 0 {
		n = len(all)
	}
	if n < 1 || n > len(all) {
		return codeBlock{}, 0, len(all)
	}
	return all[n-1], n, len(all)
}

func (c *conversation) thinkingLines(raw string, open bool, w int) []string {
	body := safeText(thinkingBody(raw))
	words := len(strings.Fields(body))
	if !c.showThinking {
		n := plural(words, "word")
		s := "▸ thinking · " + n
		if open {
			s = "▸ thinking… " + n
		}
		return []string{c.st.ThinkingFold.Render(xansi.Truncate(s+" (ctrl+r shows)", w, "…"))}
	}
	out := []string{c.st.ThinkingFold.Render("▾ thinking")}
	return append(out, wrapPlain(c.st.Thinking.Render(body), w)...)
}

// draftText styles the reply bytes that came from accepted drafts.
func (c *conversation) draftText(m *chatMsg, p part) string {
	var b strings.Builder
	pos := p.start
	for _, r := range m.runs {
		if r.end <= pos {
			continue
		}
		end := min(r.end, p.end)
		seg := safeText(m.text[pos:end])
		if r.draft {
			b.WriteString(styleLines(c.st.Draft, seg))
		} else {
			b.WriteString(seg)
		}
		pos = end
		if pos >= p.end {
			break
		}
	}
	b.WriteString(safeText(m.text[pos:p.end]))
	return strings.TrimSpace(b.String())
}

// styleLines styles each line of s on its own so a style never spans a
// newline (which would colour the gutter).
func styleLines(st lipgloss.Style, s string) string {
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		if p != "" {
			parts[i] = st.Render(p)
		}
	}
	return strings.Join(parts, "\n")
}

func (c *conversation) footer(m *chatMsg) string {
	if m.role == "model" && m.interrupted && m.metrics == nil {
		return c.st.Cancelled.Render("interrupted") + c.st.Footer.Render(" · this reply was cut short")
	}
	if m.role != "model" || m.streaming || m.metrics == nil {
		return ""
	}
	t := m.metrics
	var f []string
	f = append(f, fmt.Sprintf("%s tokens", commas(t.GeneratedTokens)))
	if t.DecodeTokPerSec > 0 {
		f = append(f, fmt.Sprintf("%.1f tok/s", t.DecodeTokPerSec))
	}
	if t.TTFTSeconds > 0 {
		f = append(f, "TTFT "+seconds(t.TTFTSeconds))
	}
	if t.Spec.Enabled && t.Spec.Drafted > 0 {
		f = append(f, fmt.Sprintf("drafts %s accepted", percent(t.Spec.AcceptanceRate)))
	}
	switch t.FinishReason {
	case "cap":
		f = append(f, "stopped at the token limit")
	case "contextFull":
		f = append(f, "context full")
	}
	if t.DroppedTurns > 0 {
		// DroppedTurns counts messages, which stay in the conversation.
		f = append(f, fmt.Sprintf("the model no longer sees %s", plural(t.DroppedTurns, "older message")))
	}
	s := c.st.Footer.Render(strings.Join(f, " · "))
	if m.cancelled {
		s = c.st.Cancelled.Render("cancelled") + c.st.Footer.Render(" · ") + s
	} else if m.interrupted {
		s = c.st.Cancelled.Render("interrupted") + c.st.Footer.Render(" · ") + s
	}
	return s
}

func (c *conversation) welcomeView() string {
	lines := make([]string, 0, c.height)
	body := c.welcome
	top := max(0, (c.height-len(body))/3)
	for range top {
		lines = append(lines, "")
	}
	for _, l := range body {
		lines = append(lines, lipgloss.PlaceHorizontal(c.width, lipgloss.Center, xansi.Truncate(l, c.width, "…")))
	}
	for len(lines) < c.height {
		lines = append(lines, "")
	}
	return strings.Join(lines[:c.height], "\n")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return commas(n) + " " + word + "s"
}
