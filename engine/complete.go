package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/tools"
)

// Request is one completion over a whole conversation, as API clients
// send it: every request carries the full history, and the engine reuses
// whatever cache it holds for it (the session's own conversation, or one
// kept from an earlier request).
type Request struct {
	// Messages is the conversation; the last one is the user's, or the
	// model's reply begun, which the reply continues (a prefill). Roles
	// are "user", "model" and "system" (a system turn after the first,
	// where it stands; the system prompt is Settings.System).
	Messages []Message
	// Settings apply to this request only (System and Thinking included);
	// the chat's own settings are untouched.
	Settings Settings
	// Stop ends the reply before the first occurrence of any of these
	// strings; the reply then finishes with reason "stop".
	Stop []string
	// Media are the files attached to user messages, by index in
	// Messages, usually as bytes (MediaFile.Data, named for messages by
	// where they came from). Bytes encoded before are not encoded again.
	Media map[int][]MediaFile
	// Raw feeds the one user message's text as the whole prompt, without
	// the chat template or a system prompt (OpenAI's /v1/completions,
	// ollama's raw generate): control-token spellings in it are those
	// tokens, and a BOS leads unless the text begins with one.
	Raw bool
	// Tools are the functions the model may call, declared in the system
	// turn; messages carry calls and "tool" results (toolcalls.go).
	Tools []tools.Declaration
}

// RequestError is a request refused as given — settings the bundle cannot
// honour, a conversation that cannot be rendered or does not fit the
// context. Nothing changed; the caller should fix the request.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// Job is a queued or running Complete.
type Job struct{ cancelled atomic.Bool }

// Cancel stops the job: before it starts it never runs (the sink gets
// Cancelled); while it runs it stops after the chain call in flight.
func (j *Job) Cancel() { j.cancelled.Store(true) }

// Marker is emitted on Events by Mark: every event of the commands queued
// before it has been delivered before it.
type Marker struct{ ID uint64 }

func (Marker) event() {}

// Mark queues a Marker; a consumer that issues a command and then a Mark
// knows which events the command produced.
func (e *Engine) Mark(id uint64) error {
	return e.do(OpMark, func() { e.emit(Marker{ID: id}) })
}

// Complete runs req on the engine goroutine after the commands queued
// before it. The sink receives the request's events in order, on the
// engine goroutine (it must not block), ending with exactly one Finished,
// Cancelled or Failed; they do not appear on Events, which stays the
// chat's. A Failed carrying a *RequestError means the request was refused
// as given.
func (e *Engine) Complete(req Request, sink func(Event)) *Job {
	job := &Job{}
	e.cmdMu.Lock()
	defer e.cmdMu.Unlock()
	if e.closed {
		sink(Failed{Op: OpComplete, Err: ErrClosed})
		return job
	}
	e.cmds <- func() {
		if job.cancelled.Load() {
			sink(Cancelled{Metrics: TurnMetrics{FinishReason: "cancelled"}, Unstarted: true})
			return
		}
		req, err := e.sess.toolRequest(req)
		if err != nil {
			sink(Failed{Op: OpComplete, Err: err})
			return
		}
		req, rows, err := e.sess.requestMedia(req, job.cancelled.Load, sink)
		if errors.Is(err, ErrCancelled) {
			sink(Cancelled{Metrics: TurnMetrics{FinishReason: "cancelled"}, Unstarted: true})
			return
		}
		var ids []int
		var refs []spanRef
		if err == nil {
			ids, refs, err = e.sess.requestIDs(req)
		}
		if err == nil {
			err = e.convs.switchTo(e.sess, req, ids, refs)
		}
		if err != nil {
			sink(Failed{Op: OpComplete, Err: err})
			return
		}
		e.sess.encoded = rows
		e.sess.complete(req, ids, job.cancelled.Load, sink)
	}
	return job
}

// KeepConversations sets how many conversations besides the one in the
// session are kept for later requests, and the cache bytes they may hold
// together; the least recently used go first.
func (e *Engine) KeepConversations(n int, bytes int64) error {
	return e.do(OpKeep, func() { e.convs.setBudget(n, bytes) })
}

// SpillConversations keeps conversations pushed out of memory in dir, up
// to bytes; coming back to one reads its cache from disk instead of a
// prefill. The engine removes only the files it wrote there (SpillFiles)
// when they are dropped and at Close; give each engine a folder of its
// own (orchard serve: a scratch.Folder).
func (e *Engine) SpillConversations(dir string, bytes int64) error {
	return e.do(OpKeep, func() {
		if err := e.convs.setSpill(dir, bytes); err != nil {
			e.emit(Failed{Op: OpKeep, Err: err})
		}
	})
}

// MediaStats reports the encoders' figures: files encoded, files served
// from the rows kept by sha256 (zero without encoders).
func (e *Engine) MediaStats() MediaStats { return e.sess.Media.Stats() }

// ConversationStats reports the conversation cache's figures.
func (e *Engine) ConversationStats() ConversationStats {
	return e.convs.statsCopy()
}

// requestMedia encodes a request's files, or takes their rows kept from
// an earlier request, and returns the request with each message's
// attachments (a clip without words gets the transcription instruction,
// as a chat message does) and the conversation's rows by sha256. A file
// refused for what it holds, or a kind the bundle has no encoder for, is
// a *RequestError that wraps the *FileError or ErrNoEncoder.
func (s *Session) requestMedia(req Request, cancelled func() bool, sink func(Event)) (Request, map[string][][]uint16, error) {
	rows := map[string][][]uint16{}
	if req.Raw && len(req.Media) > 0 {
		return req, nil, &RequestError{errors.New("a raw prompt takes no pictures or clips")}
	}
	if len(req.Media) == 0 {
		return req, rows, nil
	}
	msgs := slices.Clone(req.Messages)
	media := map[int][]MediaFile{}
	for _, i := range slices.Sorted(maps.Keys(req.Media)) {
		files := req.Media[i]
		if len(files) == 0 {
			continue
		}
		if i < 0 || i >= len(msgs) || msgs[i].Role != "user" {
			return req, nil, &RequestError{fmt.Errorf("media attached to message %d, which is not a user message", i)}
		}
		var atts []Attachment
		for _, f := range files {
			if cancelled() {
				return req, nil, ErrCancelled
			}
			enc, err := s.encodeMedia(f, func() {
				sink(Notice{Text: fmt.Sprintf("encoding %s (%s)…", f.label(), f.Kind)})
			})
			var fe *FileError
			if errors.As(err, &fe) || errors.Is(err, ErrNoEncoder) {
				return req, nil, &RequestError{err}
			}
			if err != nil {
				return req, nil, err
			}
			f.enc = enc
			media[i] = append(media[i], f)
			atts = append(atts, enc.Attachment)
			rows[enc.Attachment.SHA256] = enc.Rows
		}
		msgs[i] = userMessage(msgs[i].Content, atts)
	}
	req.Messages, req.Media = msgs, media
	return req, rows, nil
}

// requestIDs validates a request and returns its prompt as a fresh
// encoding would feed it, and where its media spans sit.
func (s *Session) requestIDs(req Request) ([]int, []spanRef, error) {
	n := len(req.Messages)
	if req.Raw {
		if n != 1 || req.Messages[0].Role != "user" {
			return nil, nil, &RequestError{errors.New("a raw request is one user message: the prompt")}
		}
		if _, err := CheckSettings(s.info(), req.Settings, req.Settings); err != nil {
			return nil, nil, &RequestError{err}
		}
		return s.rawIDs(req.Messages[0].Content), nil, nil
	}
	if n == 0 || req.Messages[n-1].Role != "user" && req.Messages[n-1].Role != "model" {
		return nil, nil, &RequestError{errors.New("the conversation must end with a user message, or with the model's message for the reply to continue")}
	}
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "model" && m.Role != "system" && m.Role != "tool" {
			return nil, nil, &RequestError{fmt.Errorf("message %d has role %q: want user, model (assistant), system or tool", i, m.Role)}
		}
	}
	if _, err := CheckSettings(s.info(), req.Settings, req.Settings); err != nil {
		return nil, nil, &RequestError{err}
	}
	c := s.conversation(req.Messages)
	c.System, c.Thinking, c.Continue = req.Settings.System, req.Settings.Thinking, req.Messages[n-1].Role == "model"
	c.Tools, _ = tools.RenderDeclarations(req.Tools) // checked by toolRequest
	ids, starts, err := s.tmpl.EncodeSpans(c)
	if err != nil {
		return nil, nil, &RequestError{err}
	}
	refs, err := s.place(layout(req.Messages), ids, starts)
	if err != nil {
		return nil, nil, err
	}
	// Whether it fits is for the turn to say: continuing a cached reply
	// can take fewer tokens than this fresh encoding.
	return ids, refs, nil
}

// complete runs one request's turn on the conversation now in the session;
// ids are its prompt as requestIDs encoded it (fed as they are when raw).
func (s *Session) complete(req Request, ids []int, cancelled func() bool, sink func(Event)) {
	history := req.Messages[:len(req.Messages)-1]
	if err := s.applySettings(req.Settings); err != nil {
		sink(Failed{Op: OpComplete, Err: &RequestError{err}})
		return
	}
	if !sameMessages(s.msgs, history) {
		s.msgs, s.window, s.contOK, s.streamPending = slices.Clone(history), 0, false, nil
		s.cstate = nil
		s.versions, s.base = nil, nil // another conversation: the chat's versions stay with it
	}
	// The sampler's stream depends on the seed and the turn, so the same
	// request with the same seed samples the same reply.
	users := 0
	for _, m := range history {
		if m.Role == "user" {
			users++
		}
	}
	s.turn, s.sampler = users, nil

	st := &stopper{stops: slices.DeleteFunc(slices.Clone(req.Stop), func(x string) bool { return x == "" })}
	for _, x := range st.stops {
		st.longest = max(st.longest, len(x))
	}
	rec := s.Metrics
	s.cancelHook = func() bool { return st.hit || cancelled() }
	// The reply stops where the model waits for tool results.
	stops, respOpen := s.toolStops()
	s.stops, stops = stops, s.stops
	s.decls, _ = tools.RenderDeclarations(req.Tools)
	restored := false
	restore := func() { // before the turn's last event: a consumer may read the session then
		if !restored {
			s.stops, s.decls, restored = stops, nil, true
		}
	}
	defer restore()
	waits := func() bool { return respOpen >= 0 && s.pending == respOpen }
	s.Metrics = func(m TurnMetrics) error {
		if st.hit {
			m.FinishReason = "stop"
		} else if m.FinishReason == "eos" && waits() {
			m.FinishReason = "tool_calls"
		}
		if rec != nil {
			return rec(m)
		}
		return nil
	}
	out := sink
	sink = func(ev Event) {
		switch f := ev.(type) {
		case Finished:
			if f.Metrics.FinishReason == "eos" && waits() {
				f.Metrics.FinishReason = "tool_calls"
			}
			if respOpen >= 0 {
				ev = toolFinish(f, out)
			}
			restore()
		case Cancelled, Failed:
			restore()
		}
		out(ev)
	}
	last := len(req.Messages) - 1
	r, begun := turnReq{text: req.Messages[last].Content, files: req.Media[last], from: s.tail(), op: OpSend}, ""
	switch m := req.Messages[last]; {
	case req.Raw:
		r.raw = ids
	case m.Role == "model":
		r, begun = turnReq{msg: &m, from: s.tail(), op: OpSend, cont: true}, m.Content
	}
	s.send(r, func(ev Event) { st.pass(ev, sink) })
	s.cancelHook, s.Metrics = nil, rec
	if st.hit {
		// The reply ends before the stop string; the cache may hold
		// tokens past it, so the next turn re-derives what to reuse.
		if n := len(s.msgs); n > 0 && s.msgs[n-1].Role == "model" {
			m := &s.msgs[n-1]
			m.Content, m.Interrupted, m.Stopped = begun+st.reply, false, false
			if m.Metrics != nil {
				f := *m.Metrics // shared with copies of the conversation: a new one
				f.FinishReason = "stop"
				m.Metrics = &f
			}
		}
		s.contOK = false
	}
}

// applySettings applies a request's (or a kept conversation's) settings
// as they are: CheckSettings judges them without reference to the ones
// they replace, which belong to another conversation.
func (s *Session) applySettings(n Settings) error {
	n, err := CheckSettings(s.info(), n, n)
	if err != nil {
		return err
	}
	if s.Drafter != nil {
		if _, ok := s.Drafter.(PromptLookup); ok {
			s.Drafter = PromptLookup{MinN: n.NGramMin, MaxN: n.NGramMax}
		}
	}
	s.set = n
	return nil
}

// sameMessages compares conversations by what the model sees: role, text
// and attached files; whether a reply was cut short does not count.
func sameMessages(a, b []Message) bool {
	return slices.EqualFunc(a, b, func(x, y Message) bool {
		return x.Role == y.Role && x.Content == y.Content && sameTools(x, y) &&
			slices.EqualFunc(x.Attachments, y.Attachments, func(p, q Attachment) bool { return p.SHA256 == q.SHA256 && p.Kind == q.Kind })
	})
}

// stopper cuts a reply at the first stop string. Text that could be the
// start of a stop string is held back until it is known not to be one.
type stopper struct {
	stops   []string
	longest int
	held    string // text not yet passed on
	sent    strings.Builder
	hit     bool
	which   string // the stop string hit
	reply   string // the reply up to the stop string, once hit
}

func (st *stopper) pass(ev Event, sink func(Event)) {
	switch e := ev.(type) {
	case *Delta:
		switch {
		case st.hit:
			return
		case len(st.stops) == 0:
			st.sent.WriteString(e.Text)
			sink(e)
			return
		}
		st.held += e.Text
		c := *e // the text passed on differs: a copy, as a sent Delta is never changed
		e = &c
		cut := -1
		for _, x := range st.stops {
			if i := strings.Index(st.held, x); i >= 0 && (cut < 0 || i < cut) {
				cut, st.which = i, x
			}
		}
		if cut >= 0 {
			st.hit = true
			e.Text, st.held = st.held[:cut], ""
		} else {
			keep := st.partial()
			e.Text, st.held = st.held[:len(st.held)-keep], st.held[len(st.held)-keep:]
		}
		st.sent.WriteString(e.Text)
		st.reply = st.sent.String()
		if e.Text != "" || len(e.Tokens) > 0 {
			sink(e)
		}
	case Finished:
		st.flush(e.Reply, sink)
		if st.hit {
			e.Reply, e.Metrics.FinishReason, e.Stop = st.reply, "stop", st.which
		}
		sink(e)
	case Failed:
		if errors.Is(e.Err, chain.ErrContextFull) {
			e.Err = &RequestError{e.Err} // the conversation does not fit: the request's to fix
		}
		sink(e)
	case Cancelled:
		st.flush(e.Partial, sink)
		if st.hit {
			sink(Finished{Reply: st.reply, Metrics: withReason(e.Metrics, "stop"), Stop: st.which})
			return
		}
		sink(e)
	default:
		sink(ev)
	}
}

// partial is the length of the longest end of held that begins a stop
// string.
func (st *stopper) partial() int {
	for n := min(len(st.held), st.longest-1); n > 0; n-- {
		tail := st.held[len(st.held)-n:]
		for _, x := range st.stops {
			if strings.HasPrefix(x, tail) {
				return n
			}
		}
	}
	return 0
}

// flush passes on, at the end of the turn, the held text and what the
// detokenizer flushed into the reply without a delta (an incomplete UTF-8
// sequence), so the streamed text always adds up to the reply.
func (st *stopper) flush(reply string, sink func(Event)) {
	if st.hit {
		return
	}
	tail := st.held
	if sent := st.sent.String(); strings.HasPrefix(reply, sent+tail) {
		tail = reply[len(sent):]
	}
	if tail == "" {
		return
	}
	st.sent.WriteString(tail)
	st.reply = st.sent.String()
	st.held = ""
	sink(&Delta{Text: tail})
}

func withReason(m TurnMetrics, r string) TurnMetrics {
	m.FinishReason = r
	return m
}
