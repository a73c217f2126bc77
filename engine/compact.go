package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/tokenizer"
)

// Compaction (chat.context_full = "compact", the default; Compact any
// time): when a turn would not fit with room for its reply, the model
// itself summarises the oldest turns it sees, with a summarisation prompt
// run on the same chain — which holds those turns already, so only the
// instruction is prefilled — and the conversation goes on from the system
// prompt, the pinned messages, the summary and the most recent turns. The
// record (msgs) keeps every turn: compaction only moves the window and
// puts a summary before it, so history, autosave, checkpoints and /export
// still hold the whole transcript, and every earlier summary stays in
// contextState.Earlier.
//
// What the model sees besides msgs[window:] is the session's contextState:
// the summary, the pinned messages (rendered verbatim before it, whatever
// the window), and the pictures and clips replaced by a line. It travels
// with the window in tailState (versions, a turn's base), checkpoints and
// kept request conversations; nil is "nothing but msgs[window:]".

// contextState is what the model sees of the conversation besides
// msgs[window:]. It is never changed in place: a change makes a new one,
// so tail states may share it.
type contextState struct {
	// Summary is the summary in force ("" none); it covers the messages
	// before Covers that are not pinned (and the earlier summary).
	Summary string `json:"summary,omitempty"`
	Covers  int    `json:"covers,omitempty"`
	// Edited: the user replaced the model's summary (SetSummary).
	Edited bool `json:"edited,omitempty"`
	// Earlier are the summaries that were in force before, oldest first:
	// each compaction is a new version of what the model sees.
	Earlier []Summary `json:"earlier,omitempty"`
	// Pinned are the indexes of messages kept verbatim through
	// compactions, ascending.
	Pinned []int `json:"pinned,omitempty"`
	// Elided are attachments the model sees as one line (ElideMedia).
	Elided []Elision `json:"elided,omitempty"`
}

// Summary is one compaction's summary: it covered the messages before
// Covers.
type Summary struct {
	Text   string `json:"text"`
	Covers int    `json:"covers"`
	Edited bool   `json:"edited,omitempty"`
}

// Elision is an attachment the model sees as a line of text instead of its
// soft tokens; the file stays in the record (the message keeps it).
type Elision struct {
	Message    int    `json:"message"`
	Attachment int    `json:"attachment"`
	Line       string `json:"line"`
}

func (c *contextState) clone() *contextState {
	if c == nil {
		return &contextState{}
	}
	n := *c
	n.Earlier, n.Pinned, n.Elided = slices.Clone(c.Earlier), slices.Clone(c.Pinned), slices.Clone(c.Elided)
	return &n
}

// empty reports whether c changes nothing of what the model sees.
func (c *contextState) empty() bool {
	return c == nil || c.Summary == "" && len(c.Pinned) == 0 && len(c.Elided) == 0 && len(c.Earlier) == 0
}

// valid drops what does not fit a conversation of n messages (a damaged
// checkpoint), so rendering never indexes past the record.
func (c *contextState) valid(n int) *contextState {
	if c == nil {
		return nil
	}
	v := c.clone()
	v.Pinned = slices.DeleteFunc(v.Pinned, func(i int) bool { return i < 0 || i >= n })
	slices.Sort(v.Pinned)
	v.Pinned = slices.Compact(v.Pinned)
	v.Elided = slices.DeleteFunc(v.Elided, func(e Elision) bool { return e.Message < 0 || e.Message >= n || e.Attachment < 0 })
	v.Covers = min(max(v.Covers, 0), n)
	if v.empty() {
		return nil
	}
	return v
}

// summaryLead introduces the summary to the model.
const summaryLead = "Summary so far:\n"

// SummaryMessage is how the model sees a summary: a system turn of its
// own after the system prompt.
func SummaryMessage(text string) Message {
	return Message{Role: "system", Content: summaryLead + text}
}

// seen is what the model sees of msgs from window on: the pinned messages
// before the window, the summary, then msgs[window:], with elided
// attachments as their line. Without a context state it is msgs[window:]
// itself.
func (s *Session) seen(msgs []Message, window int) []Message {
	c := s.cstate
	window = min(max(window, 0), len(msgs))
	if c == nil {
		return msgs[window:]
	}
	out := make([]Message, 0, len(c.Pinned)+1+len(msgs)-window)
	for _, i := range c.Pinned {
		if i < window {
			out = append(out, c.elide(msgs[i], i))
		}
	}
	if c.Summary != "" {
		out = append(out, SummaryMessage(c.Summary))
	}
	for i := window; i < len(msgs); i++ {
		out = append(out, c.elide(msgs[i], i))
	}
	return out
}

// elide is msgs[i] as the model sees it: each elided attachment taken
// out, its line put before the text.
func (c *contextState) elide(m Message, i int) Message {
	var lines []string
	var drop []int
	for _, e := range c.Elided {
		if e.Message == i && e.Attachment < len(m.Attachments) {
			lines = append(lines, e.Line)
			drop = append(drop, e.Attachment)
		}
	}
	if len(drop) == 0 {
		return m
	}
	var keep []Attachment
	for k, a := range m.Attachments {
		if !slices.Contains(drop, k) {
			keep = append(keep, a)
		}
	}
	m.Attachments = keep
	m.Content = strings.TrimSpace(strings.Join(lines, "\n") + "\n" + m.Content)
	return m
}

// replyReserve is the room a turn keeps for its reply under the compact
// policy: max_tokens, at most half the context; a quarter without a cap.
func (s *Session) replyReserve() int {
	ctx := s.caps.Context
	if s.set.MaxTokens > 0 {
		return min(s.set.MaxTokens, ctx/2)
	}
	return ctx / 4
}

// summaryCap bounds a summary's tokens: an eighth of the context, at most
// 256 (of 2,048).
func (s *Session) summaryCap() int { return max(min(s.caps.Context/8, 256), 8) }

// SummariseInstruction is the user message that asks the model for a
// summary of the conversation up to message upTo (1-based, inclusive): a
// script can match it (reference.Script).
func SummariseInstruction(upTo, words int) string {
	// Short: on a small context the instruction's tokens are the turns'.
	return fmt.Sprintf("Summarise the conversation up to message %d in at most %d words.", upTo, words)
}

// Compacted reports a compaction: the messages From..To (indexes in the
// conversation, To excluded) were summarised, and the model now sees
// the pinned messages, the summary and the conversation from Window.
type Compacted struct {
	Summary  string
	From, To int
	Window   int
	// Auto: the policy compacted before a turn that would not fit.
	Auto bool
	// SummaryTokens the model wrote; PromptTokens of the summarisation
	// prompt, of which ReusedTokens came from the cache (the turns it
	// summarised were there) and the rest was prefilled.
	SummaryTokens, PromptTokens, ReusedTokens int
	Seconds                                   float64
	// ContextUsed is what the conversation now takes of the context, and
	// Cached how much of it the cache still holds (the system prompt's
	// at least, where the chain can rewind to it): the next turn
	// prefills ContextUsed − Cached tokens and its message.
	ContextUsed, Cached int
}

// Compacting is a compaction's progress: Phase "prefill" (Done of Total
// prompt tokens) then "summary" (Done tokens written, at most Total).
type Compacting struct {
	Phase       string
	Done, Total int
}

func (Compacted) event()  {}
func (Compacting) event() {}

// ErrNothingToCompact: the model sees no turn that could be summarised.
var ErrNothingToCompact = errors.New("nothing to compact: the model sees no turn before the last one")

// Compact summarises the turns the model sees, all but the most recent
// that fit in half the room left for the conversation, and moves the
// window past them. It is what /compact runs, whatever the policy.
func (s *Session) Compact(emit func(Event)) error {
	s.cancel.Store(false)
	if len(s.msgs)-s.window < 2 {
		emit(Failed{Op: OpCompact, Err: ErrNothingToCompact})
		return ErrNothingToCompact
	}
	u := s.undoPoint()
	target := (s.caps.Context - s.replyReserve()) / 2
	cut, err := s.cutFor(s.msgs, nil, target)
	if err == nil && cut <= s.window {
		cut = s.nextTurn(s.msgs, s.window) // summarise at least the oldest turn
	}
	if err == nil {
		err = s.compactTo(cut, false, emit)
	}
	if err != nil {
		if rerr := s.rollback(u); rerr != nil {
			err = errors.Join(err, rerr)
		}
		if errors.Is(err, ErrCancelled) {
			emit(Cancelled{Metrics: TurnMetrics{FinishReason: "cancelled"}, Unstarted: true})
			return err
		}
		emit(Failed{Op: OpCompact, Err: err})
	}
	return err
}

// overflows reports whether a turn's prompt calls for the compact policy:
// it does not fit (err), or leaves less than the reply reserve, and the
// model sees turns before the new message.
func (s *Session) overflows(p prompt, err error, msgs []Message) bool {
	if len(msgs)-s.window < 2 {
		return false
	}
	if err != nil {
		var cf *ContextFullError
		return errors.As(err, &cf) && !cf.Raw
	}
	return len(p.ids)+s.replyReserve() > s.caps.Context
}

// compactBefore compacts so that msgs (the record with the turn's new
// message last) fits with room for the reply. It is the policy's part of
// a turn.
func (s *Session) compactBefore(msgs []Message, emit func(Event)) error {
	last := msgs[len(msgs)-1]
	cut, err := s.cutFor(msgs[:len(msgs)-1], &last, s.caps.Context-s.replyReserve())
	if err != nil {
		return err
	}
	if cut <= s.window {
		return nil
	}
	return s.compactTo(cut, true, emit)
}

// nextTurn is the first turn start after i (a user message), len(msgs)
// when there is none.
func (s *Session) nextTurn(msgs []Message, i int) int {
	for k := i + 1; k < len(msgs); k++ {
		if msgs[k].Role == "user" {
			return k
		}
	}
	return len(msgs)
}

// cutFor is the first message to keep verbatim: the earliest turn start
// from which the conversation (msgs, then last when given), with a summary
// of at most summaryCap tokens before it, takes at most target tokens.
func (s *Session) cutFor(msgs []Message, last *Message, target int) (int, error) {
	withSummary := func(window int) (int, error) {
		keep := s.cstate
		st := keep.clone()
		st.Summary = "…"
		s.cstate = st
		seen := slices.Clone(s.seen(msgs, window))
		s.cstate = keep
		if last == nil {
			ids, err := s.windowIDs(seen)
			return len(ids) + s.summaryCap(), err
		}
		ids, err := s.tmpl.Encode(s.conversation(append(seen, *last)))
		return len(ids) + s.summaryCap(), err
	}
	for c := s.window; c < len(msgs); c = s.nextTurn(msgs, c) {
		if c > s.window && msgs[c].Role != "user" {
			continue
		}
		n, err := withSummary(c)
		if err != nil {
			return 0, err
		}
		if n <= target {
			return c, nil
		}
	}
	if last != nil {
		// With every turn summarised, does the message fit at all? If
		// not, nothing is compacted for it.
		n, err := withSummary(len(msgs))
		if err != nil {
			return 0, err
		}
		if n > s.caps.Context {
			return 0, &ContextFullError{Tokens: n - s.summaryCap(), Context: s.caps.Context, Alone: true, Policy: s.set.ContextPolicy}
		}
	}
	return len(msgs), nil
}

// compactTo summarises msgs[window:cut] — in steps when the turns do not
// fit one summarisation prompt — and moves the window to cut.
func (s *Session) compactTo(cut int, auto bool, emit func(Event)) error {
	for s.window < cut {
		from := s.window
		// The longest run of turns whose summarisation prompt fits.
		to := s.nextTurn(s.msgs, from)
		for next := to; next <= cut; next = s.nextTurn(s.msgs, next) {
			n, err := s.summaryPromptLen(next)
			if err != nil {
				return err
			}
			if n+s.summaryCap() > s.caps.Context {
				break
			}
			to = next
			if next == len(s.msgs) {
				break
			}
		}
		to = min(to, cut)
		if n, err := s.summaryPromptLen(to); err != nil {
			return err
		} else if n+s.summaryCap() > s.caps.Context {
			// One turn too long to summarise: the model stops seeing it.
			s.cstate = s.cstate.clone()
			s.window = to
			emit(Notice{Text: fmt.Sprintf("messages %d–%d are too long to summarise in the %s-token context: the model no longer sees them (they stay in the conversation)", from+1, to, thousands(s.caps.Context))})
			continue
		}
		if err := s.summarise(from, to, auto, emit); err != nil {
			return err
		}
	}
	return nil
}

// summaryMessages is the summarisation prompt's conversation for the
// messages the model sees up to upTo.
func (s *Session) summaryMessages(upTo int) []Message {
	seen := slices.Clone(s.seen(s.msgs[:upTo], s.window))
	words := max(s.summaryCap()*3/4, 8)
	return append(seen, Message{Role: "user", Content: SummariseInstruction(upTo, words)})
}

func (s *Session) summaryPromptLen(upTo int) (int, error) {
	ids, err := s.tmpl.Encode(s.conversation(s.summaryMessages(upTo)))
	return len(ids), err
}

// summarise has the model summarise what it sees up to message to, then
// makes that summary the one in force with the window at to.
func (s *Session) summarise(from, to int, auto bool, emit func(Event)) error {
	msgs := s.summaryMessages(to)
	ids, refs, err := s.encode(msgs, noTail, false)
	if err != nil {
		return err
	}
	t := &turn{start: s.now(), stream: tokenizer.NewStream(s.tok, false), op: OpCompact}
	t.emit = func(ev Event) {
		switch e := ev.(type) {
		case PrefillProgress:
			emit(Compacting{Phase: "prefill", Done: e.Done, Total: e.Total})
		case *Delta:
			emit(Compacting{Phase: "summary", Done: e.Live.Generated, Total: s.summaryCap()})
		}
	}
	lcp, err := s.reuseFor(ids, refs, s.msgs, emit)
	if err != nil {
		return err
	}
	t.prompt, t.reused = ids, lcp
	emit(Compacting{Phase: "prefill", Done: 0, Total: len(ids) - lcp})
	next, err := s.prefill(t, ids[lcp:])
	if err != nil {
		return err
	}
	keep := s.set
	s.set.MaxTokens = s.summaryCap()
	t.decodeStart = s.now()
	err = s.decode(t, next)
	s.set = keep
	if err != nil {
		return err
	}
	t.reply = append(t.reply, t.stream.Flush()...)
	summary := strings.TrimSpace(tokenizer.StripThoughts(string(t.reply)))
	// The cache holds the summarisation turn; the next prompt is encoded
	// afresh and keeps what it shares with it (the system prompt).
	s.pending, s.unfed, s.contOK, s.streamPending = -1, nil, false, nil
	c := s.cstate.clone()
	if c.Summary != "" {
		c.Earlier = append(c.Earlier, Summary{Text: c.Summary, Covers: c.Covers, Edited: c.Edited})
	}
	c.Summary, c.Covers, c.Edited = summary, to, false
	if summary == "" {
		c.Summary = "(the model wrote no summary)"
	}
	s.cstate, s.window = c, to
	s.gen++
	used, cached := s.nextCached()
	emit(Compacted{Summary: c.Summary, From: from, To: to, Window: to, Auto: auto, SummaryTokens: len(t.gen),
		PromptTokens: len(ids), ReusedTokens: lcp, Seconds: s.now().Sub(t.start).Seconds(), ContextUsed: used, Cached: cached})
	return nil
}

// nextCached is what the conversation the model sees now takes of the
// context (without a new message), and how much of it the cache holds.
func (s *Session) nextCached() (used, cached int) {
	ids, err := s.nextPromptIDs()
	if err != nil {
		return 0, 0
	}
	return len(ids), commonPrefix(ids, s.committed)
}

// reuseFor makes the cache hold the longest prefix of ids it can keep
// (the same tokens and media rows; at least one token is always fed) and
// the rows of the spans still to feed ready, as a turn does before its
// prefill. It returns how many of ids the cache holds.
func (s *Session) reuseFor(ids []int, refs []spanRef, msgs []Message, emit func(Event)) (int, error) {
	lcp := commonPrefix(ids, s.committed)
	lcp = mediaPrefix(min(lcp, len(ids)-1), s.spans, refs)
	rewind, reset := lcp < s.chain.Position(), false
	if rewind && lcp < s.chain.Capabilities().MinRewind {
		rewind, reset = false, true
	}
	keep := lcp
	if reset {
		keep = 0
	}
	soft, err := s.softSpans(msgs, refs, keep)
	if err != nil {
		return 0, err
	}
	switch {
	case rewind:
		if err := s.chain.Rewind(lcp); err != nil {
			return 0, err
		}
	case reset:
		if err := s.chain.Reset(); err != nil {
			return 0, err
		}
		emit(Notice{Text: fmt.Sprintf("the cache cannot go back to position %s (its sliding window has moved on): the conversation is prefilled again", thousands(lcp))})
		lcp = 0
	}
	s.committed, s.pending, s.contOK, s.unfed = ids[:lcp:lcp], -1, false, nil
	s.chain.SetSoft(soft)
	s.spans = refs
	return lcp, nil
}

// Pin keeps the message at index verbatim through compactions (pinned
// false: no longer).
func (s *Session) Pin(index int, pinned bool) error {
	if index < 0 || index >= len(s.msgs) {
		return fmt.Errorf("pin: there is no message %d (the conversation has %d)", index+1, len(s.msgs))
	}
	c := s.cstate.clone()
	c.Pinned = slices.DeleteFunc(c.Pinned, func(i int) bool { return i == index })
	if pinned {
		c.Pinned = append(c.Pinned, index)
		slices.Sort(c.Pinned)
	}
	s.setContext(c)
	return nil
}

// SetSummary replaces the summary in force with the user's text (the
// model's stays among the earlier ones).
func (s *Session) SetSummary(text string) error {
	text = strings.TrimSpace(text)
	if s.cstate == nil || s.cstate.Summary == "" {
		return errors.New("summary: the conversation has no summary yet (/compact makes one)")
	}
	if text == "" {
		return errors.New("summary: the new text is empty")
	}
	c := s.cstate.clone()
	c.Earlier = append(c.Earlier, Summary{Text: c.Summary, Covers: c.Covers, Edited: c.Edited})
	c.Summary, c.Edited = text, true
	s.setContext(c)
	return nil
}

// ElideMedia has the model see attachment att of message index as one
// line — caption, else its file name — instead of its soft tokens; the
// file stays in the conversation. The next turn prefills from there.
func (s *Session) ElideMedia(index, att int, caption string) error {
	if index < 0 || index >= len(s.msgs) || att < 0 || att >= len(s.msgs[index].Attachments) {
		return fmt.Errorf("elide: message %d has no attachment %d", index+1, att+1)
	}
	a := s.msgs[index].Attachments[att]
	what := "picture"
	if a.Kind == MediaAudio {
		what = "clip"
	}
	line := fmt.Sprintf("[%s %s]", what, a.Name)
	if caption = strings.TrimSpace(caption); caption != "" {
		line = fmt.Sprintf("[%s %s: %s]", what, a.Name, oneLine(caption, 200))
	}
	c := s.cstate.clone()
	c.Elided = slices.DeleteFunc(c.Elided, func(e Elision) bool { return e.Message == index && e.Attachment == att })
	c.Elided = append(c.Elided, Elision{Message: index, Attachment: att, Line: line})
	s.setContext(c)
	return nil
}

// setContext makes c what the model sees from the next turn on: that turn
// encodes its prompt afresh and reuses what the cache shares with it.
func (s *Session) setContext(c *contextState) {
	if c.empty() {
		c = nil
	}
	s.cstate = c
	s.contOK = false
	s.gen++
}

// ContextReport answers ContextView and reports every change to what the
// model sees without a turn (Op OpContext, OpPin, OpSummary, OpElide,
// OpCompact): the window's breakdown after it.
type ContextReport struct {
	Op   Op
	View ContextView
}

func (ContextReport) event() {}

// Compact summarises the oldest turns the model sees now (Session.Compact):
// Compacting events, then Compacted and a ContextReport; Cancel stops it
// (Cancelled{Unstarted}), leaving the conversation as it was. It returns
// ErrClosed when the engine no longer takes commands.
func (e *Engine) Compact() error {
	return e.startTurn(OpCompact, func(emit func(Event)) {
		if e.sess.Compact(emit) == nil {
			e.refresh()
			e.report(OpCompact, emit)
		}
	})
}

// Pin keeps the message at index verbatim through compactions (pinned
// false: no longer); a ContextReport follows.
func (e *Engine) Pin(index int, pinned bool) error {
	return e.contextCmd(OpPin, func() error { return e.sess.Pin(index, pinned) })
}

// SetSummary replaces the summary in force with text (the front end's
// edit of the folded block); a ContextReport follows.
func (e *Engine) SetSummary(text string) error {
	return e.contextCmd(OpSummary, func() error { return e.sess.SetSummary(text) })
}

// ElideMedia has the model see attachment att of message index as one
// line (caption, else the file name), freeing its soft tokens; the file
// stays in the conversation. A ContextReport follows.
func (e *Engine) ElideMedia(index, att int, caption string) error {
	return e.contextCmd(OpElide, func() error { return e.sess.ElideMedia(index, att, caption) })
}

// ContextView reports the window's breakdown (ContextReport{Op: OpContext}).
func (e *Engine) ContextView() error {
	return e.contextCmd(OpContext, func() error { return nil })
}

// Estimator prices messages before they are sent, from any goroutine;
// its figures follow the chat's conversation.
func (e *Engine) Estimator() (*Estimator, error) {
	f := &e.figures
	f.once.Do(func() { f.est, f.err = e.sess.newEstimator(&f.used, &f.reserve) })
	return f.est, f.err
}

func (e *Engine) contextCmd(op Op, run func() error) error {
	return e.do(op, func() {
		if err := run(); err != nil {
			e.emit(Failed{Op: op, Err: err})
			return
		}
		e.refresh()
		e.report(op, e.emit)
	})
}

func (e *Engine) report(op Op, emit func(Event)) {
	v, err := e.sess.ContextView()
	if err != nil {
		emit(Failed{Op: op, Err: err})
		return
	}
	emit(ContextReport{Op: op, View: v})
}
