package engine

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/tokenizer"
)

// turn is the bookkeeping of one Send.
type turn struct {
	start, decodeStart time.Time
	copied0            int64 // the seam's copy meter when decoding started (seamMetered)
	seamMetered        bool
	firstEmit          time.Time
	lastEmit           time.Time
	prompt             []int
	reused             int
	dropped            int
	prefillSec         float64
	gen                []int  // emitted tokens
	fromDraft          []bool // parallel to gen
	perTok             []float64
	spec               SpecStats
	reply              []byte // emitted text
	stream             *tokenizer.Stream
	emit               func(Event)
	finish             string
	lastFed            bool // the last emitted token is in the cache (verify rounds)
	op                 Op   // the Op of a Failed event
	cont               bool // the reply continues the model's message the prompt ends with
	raw                bool // the prompt was fed as given, without the template
	undo               *undoPoint
	one                [1]int  // a single emitted token, without allocating
	deltas             []Delta // the slab the next Delta events come from
}

// deltaSlab is how many Delta events one allocation makes room for.
const deltaSlab = 64

// newDelta returns a Delta of the turn's slab that no one has seen: each
// is sent once and never reused, so consumers may keep it.
func (t *turn) newDelta() *Delta {
	if len(t.deltas) == 0 {
		t.deltas = make([]Delta, deltaSlab)
	}
	d := &t.deltas[0]
	t.deltas = t.deltas[1:]
	return d
}

// Send runs one turn for the user's text, reporting through emit. It
// returns when the turn has finished, was cancelled or failed; on failure
// the conversation and cache are as they were before it (or consistent
// with what was fed), never half-updated.
func (s *Session) Send(text string, emit func(Event), media ...MediaFile) error {
	return s.toolTurn(emit, func(emit func(Event)) error {
		return s.send(turnReq{text: text, files: media, from: s.tail(), op: OpSend}, emit)
	})
}

// PrefillOnly adds the user's message and prefills it without generating:
// the prediction stays pending, as after corellm-chat's --kv-save prefill.
func (s *Session) PrefillOnly(text string, emit func(Event), media ...MediaFile) error {
	return s.send(turnReq{text: text, files: media, from: s.tail(), op: OpSend, prefillOnly: true}, emit)
}

// turnReq is what a turn starts from.
type turnReq struct {
	text  string
	files []MediaFile // to attach to the message
	// msg, when set, is the message as it was (Regenerate; Edit with its
	// new text): its attachments are already encoded.
	msg         *Message
	from        tailState // what its prompt continues (the session's tail, or a turn's base)
	op          Op        // the Op of its Failed event: send, regenerate, edit
	prefillOnly bool
	// cont: msg is the model's reply begun (an API request's prefill);
	// the prompt ends inside it and the reply continues it.
	cont bool
	// raw, when set, is the whole prompt (Request.Raw): the message holds
	// its text, and the template is not used.
	raw []int
	// undo, when set, is where a failure puts the session back (tool
	// results: to before their message); else the session as it is.
	undo *undoPoint
}

func (s *Session) send(r turnReq, emit func(Event)) error {
	s.cancel.Store(false)
	undo := r.undo
	if undo == nil {
		undo = s.undoPoint()
	}
	t := &turn{start: s.now(), emit: emit, stream: tokenizer.NewStream(s.tok, false), op: r.op, cont: r.cont, raw: r.raw != nil, undo: undo}
	s.turn++
	s.streamPending = nil // a new message: the last reply's unfinished bytes stay unshown
	var msg Message
	if r.msg != nil {
		msg = *r.msg
	} else {
		var atts []Attachment
		if len(r.files) > 0 {
			var err error
			if atts, err = s.attach(r.files, emit); err != nil {
				return s.fail(t, err)
			}
		}
		msg = userMessage(r.text, atts)
	}
	msgs := append(slices.Clone(s.msgs), msg)
	p, err := prompt{ids: r.raw}, s.rawFits(r.raw)
	if r.raw == nil {
		p, err = s.promptIDs(msgs, r.from, r.cont)
	}
	if r.raw == nil && s.set.ContextPolicy == ContextCompact && s.overflows(p, err, msgs) {
		// The policy's compaction is a step of its own: it stays when the
		// turn after it fails, which then continues from it.
		if err = s.compactBefore(msgs, emit); err != nil {
			if errors.Is(err, ErrCancelled) {
				s.rollback(t.undo)
				emit(Cancelled{Metrics: TurnMetrics{FinishReason: "cancelled"}, Unstarted: true})
				return err
			}
			return s.fail(t, err)
		}
		turn := t.undo.turn // a failure after it still takes back the turn's count
		r.from, t.undo = s.tail(), s.undoPoint()
		t.undo.turn = turn
		p, err = s.promptIDs(msgs, r.from, r.cont)
	}
	if err != nil {
		return s.fail(t, err)
	}
	ids, refs := p.ids, p.spans
	t.prompt, t.dropped = ids, p.dropped
	s.lastPrompt = ids
	if p.dropped > 0 {
		emit(Notice{Text: fmt.Sprintf("the model no longer sees the %d oldest messages, which did not fit the %d-token context (they stay in the conversation); the rest is prefilled again", p.dropped, s.caps.Context)})
	} else if left := s.caps.Context - len(ids); left < s.caps.Context/8 && s.set.ContextPolicy != ContextCompact {
		// Say so before the context runs out, not after (compact makes
		// room itself when the next message would not fit).
		emit(Notice{Text: fmt.Sprintf("the context is nearly full: %d of %d tokens left for replies; %s", left, s.caps.Context, contextAdvice(s.set.ContextPolicy))})
	}

	// Reuse the longest common prefix, always re-feeding at least one token;
	// a media span whose rows differ from the cached ones ends it.
	lcp, err := s.reuseFor(ids, refs, msgs, emit)
	if err != nil {
		return s.fail(t, err)
	}
	t.reused = lcp
	s.msgs, s.window = msgs, p.window
	s.began(r.from, len(msgs)-1)
	emit(Started{Turn: len(msgs) - 1, PromptTokens: len(ids), ReusedTokens: lcp, Versions: s.versionCount(len(msgs)),
		Attachments: msgs[len(msgs)-1].Attachments, Window: s.window})

	next, err := s.prefill(t, ids[lcp:])
	if err != nil {
		if errors.Is(err, ErrCancelled) {
			return s.cancelled(t)
		}
		return s.fail(t, err)
	}
	t.prefillSec = s.now().Sub(t.start).Seconds()
	if r.prefillOnly {
		s.pending = next
		m := s.metrics(t)
		m.FinishReason = "prefill"
		emit(Finished{Metrics: m})
		return nil
	}
	t.decodeStart = s.now()
	t.copied0, t.seamMetered = chain.SeamCopies(s.chain)
	if err := s.decode(t, next); err != nil {
		if errors.Is(err, ErrCancelled) {
			return s.cancelled(t)
		}
		return s.fail(t, err)
	}
	return s.finished(t)
}

// prompt is what a turn feeds: its ids, the media spans in them, and the
// first message the model sees (window; the context policy may move it on
// by dropped messages, which stay in the conversation).
type prompt struct {
	ids             []int
	spans           []spanRef
	window, dropped int
}

// promptIDs builds the prompt of msgs (the new message last) from the
// window from starts at, places its media spans and applies the context
// policy: "drop-oldest" moves the window past the oldest turns the
// context cannot hold. The conversation itself never loses a message.
// With cont the prompt ends inside the last message, the model's, which
// the reply continues.
func (s *Session) promptIDs(msgs []Message, from tailState, cont bool) (prompt, error) {
	ctx := s.caps.Context
	p := prompt{window: min(max(from.Window, 0), len(msgs)-1)}
	var err error
	if p.ids, p.spans, err = s.encode(s.seen(msgs, p.window), from, cont); err != nil {
		return prompt{}, err
	}
	if len(p.ids) < ctx {
		return p, nil
	}
	if s.set.ContextPolicy != ContextDropOldest {
		return prompt{}, &ContextFullError{Tokens: len(p.ids), Context: ctx, Policy: s.set.ContextPolicy}
	}
	// Move past the oldest turns (never the system prompt, never the new
	// message) until the prompt leaves a quarter of the context to reply.
	room := ctx - ctx/4
	for len(p.ids) > room && len(msgs)-p.window > 1 {
		m, cut := msgs[p.window:], 1
		if len(m) > 2 && m[0].Role == "user" && m[1].Role == "model" {
			cut = 2
		}
		p.window, p.dropped = p.window+cut, p.dropped+cut
		for len(msgs)-p.window > 1 && msgs[p.window].Role == "system" { // a system turn goes with the turns it followed
			p.window, p.dropped = p.window+1, p.dropped+1
		}
		if p.ids, p.spans, err = s.encode(s.seen(msgs, p.window), noTail, cont); err != nil {
			return prompt{}, err
		}
	}
	if len(p.ids) >= ctx {
		return prompt{}, &ContextFullError{Tokens: len(p.ids), Context: ctx, Alone: true, Policy: s.set.ContextPolicy}
	}
	return p, nil
}

// encode renders msgs as a turn's prompt, with its media spans placed.
// A turn that continues from a clean one reuses the reply's generated ids
// as they are (re-tokenized text can differ from them) and appends what
// the conversation renders after the reply; otherwise the conversation is
// encoded afresh and the turn reuses the longest common prefix.
func (s *Session) encode(msgs []Message, from tailState, cont bool) ([]int, []spanRef, error) {
	conv := s.conversation(msgs)
	conv.Continue = cont
	spans := layout(msgs)
	if from.ContOK && !cont {
		ids, refs, ok, err := s.continued(conv, spans, from)
		if err != nil || ok {
			return ids, refs, err
		}
	}
	ids, starts, err := s.tmpl.EncodeSpans(conv)
	if err != nil {
		return nil, nil, err
	}
	refs, err := s.place(spans, ids, starts)
	return ids, refs, err
}

// continued is the prompt continuing from's ids, when the conversation
// still renders with from's prompt first (history and system prompt
// unchanged) and from records where each media span of its ids sits (a
// checkpoint from before orchard recorded them does not: the turn then
// encodes afresh).
func (s *Session) continued(conv tokenizer.Conversation, spans []spanRef, from tailState) ([]int, []spanRef, bool, error) {
	full, err := s.tmpl.Render(conv)
	if err != nil || !strings.HasPrefix(full, from.PrevPrompt) {
		return nil, nil, false, err
	}
	rest, after, ok, err := s.tmpl.EncodeAfterReplySpans(conv)
	if err != nil || !ok {
		return nil, nil, false, err
	}
	had := len(spans) - len(after) // the spans in from's ids
	if had < 0 || had != len(from.Spans) {
		return nil, nil, false, nil
	}
	starts := make([]int, 0, len(spans))
	for i, r := range from.Spans {
		if r.SHA256 != spans[i].SHA256 || r.Span != spans[i].Span || r.Rows != spans[i].Rows {
			return nil, nil, false, nil
		}
		starts = append(starts, r.Start)
	}
	for _, at := range after {
		starts = append(starts, len(from.IDs)+at)
	}
	ids := append(slices.Clone(from.IDs), rest...)
	refs, err := s.place(spans, ids, starts)
	if err != nil {
		return nil, nil, false, nil // a record that does not fit: encode afresh
	}
	return ids, refs, true, nil
}

// prefill feeds tokens in slices of the widest prefill call, reporting
// progress and checking for cancellation between slices.
func (s *Session) prefill(t *turn, toks []int) (int, error) {
	slice := slices.Max(append(slices.Clone(s.caps.PrefillWidths), 64))
	var next int
	for done := 0; done < len(toks); {
		if s.stopRequested() {
			return 0, ErrCancelled
		}
		n := min(slice, len(toks)-done)
		var err error
		if next, err = s.chain.Prefill(toks[done : done+n]); err != nil {
			return 0, err
		}
		s.committed = append(s.committed, toks[done:done+n]...)
		done += n
		t.emit(PrefillProgress{Done: done, Total: len(toks)})
	}
	return s.choose(next), nil
}

// choose returns the next token: the chain's argmax, or a sample from its
// logits when the settings ask for sampling.
func (s *Session) choose(argmax int) int {
	if s.set.Sampling.Greedy() || s.chain.Logits() == nil {
		return argmax
	}
	if s.sampler == nil || s.samplerTurn != s.turn {
		s.sampler, s.samplerTurn = newSampler(s.set.Sampling, s.set.Sampling.Seed, s.turn), s.turn
	}
	recent := s.committed
	if len(recent) > 256 {
		recent = recent[len(recent)-256:]
	}
	return s.sampler.pick(s.chain.Logits(), recent)
}

// decode generates from the prediction next until a stop token, the cap or
// the context end.
func (s *Session) decode(t *turn, next int) error {
	ctx := s.caps.Context
	capTokens := s.set.MaxTokens
	if capTokens == 0 {
		capTokens = ctx
	}
	verify := s.caps.MaxVerify()
	minCopy := 1
	if s.b.Family == "r1" {
		minCopy = 2 // the width-4 call costs the same; the published runtime fires from 2
	}
	draft := make([]int, 0, 16)
	feed := make([]int, 0, 17)
	for {
		if slices.Contains(s.stops, next) {
			s.pending, t.finish = next, "eos"
			return nil
		}
		if len(t.gen) >= capTokens {
			t.finish = "cap"
			if t.lastFed {
				// A verify round fed the last emitted token; leave it
				// pending as plain decoding does, so the cache does not
				// depend on whether speculation ran.
				n := len(s.committed) - 1
				if err := s.chain.Rewind(n); err != nil {
					return err
				}
				s.committed, s.pending = s.committed[:n], s.committed[n]
				return nil
			}
			s.pending = next
			return nil
		}
		pos := s.chain.Position()
		if pos >= ctx {
			s.pending, t.finish = next, "contextFull"
			return nil
		}
		if s.stopRequested() {
			s.pending = next
			return ErrCancelled
		}
		remaining := capTokens - len(t.gen)
		maxDraft := min(s.set.DraftLen, verify-1, ctx-1-pos, remaining-1)
		if s.speculate() && maxDraft >= minCopy {
			draft = s.Drafter.Draft(draft[:0], s.committed, next, maxDraft)
			if len(draft) >= minCopy {
				var err error
				if next, err = s.verifyRound(t, next, draft, feed); err != nil {
					return err
				}
				if next < 0 { // a stop token was accepted inside the draft
					t.finish = "eos"
					return nil
				}
				continue
			}
			t.spec.FallbackRounds++
		}
		// Emit first (the user sees the token now), then feed it — unless
		// it is the last one the cap allows: then it stays pending.
		t.one[0] = next
		s.emitTokens(t, t.one[:], 0)
		t.lastFed = false
		if len(t.gen) >= capTokens {
			s.pending, t.finish = next, "cap"
			return nil
		}
		t0, cold := s.now(), coldCalls(s.chain)
		n, err := s.chain.Decode(next)
		if err != nil {
			s.pending = next
			return err
		}
		s.policy.observeDecode(s.now().Sub(t0).Seconds(), coldCalls(s.chain) != cold)
		s.committed = append(s.committed, next)
		next = s.choose(n)
	}
}

// speculate reports whether this round may draft.
func (s *Session) speculate() bool {
	if s.set.Speculation == SpecModeOff || s.caps.MaxVerify() == 0 || !s.set.Sampling.Greedy() {
		return false
	}
	if s.set.Speculation == SpecModeAuto {
		return s.policy.allow(s.emitted)
	}
	return true
}

// verifyRound feeds [next]+draft in one verify call, keeps the exact
// greedy prefix, rolls the rest back by position, and returns the new
// prediction (−1 when a stop token was accepted: it becomes pending).
func (s *Session) verifyRound(t *turn, next int, draft, feed []int) (int, error) {
	base := s.chain.Position()
	feed = append(append(feed[:0], next), draft...)
	t0, cold := s.now(), coldCalls(s.chain)
	targets, err := s.chain.Verify(feed)
	if err != nil {
		return 0, err
	}
	dt := s.now().Sub(t0).Seconds()
	acc := 1
	for acc < len(feed) && feed[acc] == targets[acc-1] {
		acc++
	}
	// A stop token among the accepted drafts ends the turn there: it is
	// the pending prediction, neither emitted nor kept in the cache.
	stop := -1
	for j := 1; j < acc; j++ {
		if slices.Contains(s.stops, feed[j]) {
			stop = j
			break
		}
	}
	keep := acc
	if stop > 0 {
		keep = stop
	}
	if err := s.chain.Rewind(base + keep); err != nil {
		return 0, err
	}
	s.policy.observeVerify(dt, keep, coldCalls(s.chain) != cold)
	t.spec.Rounds++
	t.spec.Drafted += len(feed)
	t.spec.Accepted += acc
	t.spec.pldCopied += len(draft)
	t.spec.pldAccepted += acc - 1
	s.committed = append(s.committed, feed[:keep]...)
	s.emitTokens(t, feed[:keep], 1)
	t.lastFed = true
	if stop > 0 {
		s.pending = feed[stop]
		return -1, nil
	}
	return targets[keep-1], nil
}

// emitTokens records emitted tokens and sends their text. Tokens from
// index firstDraft on came from an accepted draft. Per-token time is the
// gap since the previous emission (the first from the end of prefill),
// shared by the tokens emitted together.
func (s *Session) emitTokens(t *turn, toks []int, firstDraft int) {
	now := s.now()
	last := t.lastEmit
	// The first token of a turn is the prefill's prediction: its time is
	// the TTFT, reported apart, so it gets no per-token latency (it would
	// always read 0 ms). Tokens emitted together share the gap.
	timed := len(toks)
	first := t.firstEmit.IsZero()
	if first {
		t.firstEmit, last = now, t.decodeStart
		timed--
	}
	t.lastEmit = now
	sec := now.Sub(last).Seconds()
	from := len(t.gen)
	var text string
	for i, tok := range toks {
		t.gen = append(t.gen, tok)
		t.fromDraft = append(t.fromDraft, firstDraft > 0 && i >= firstDraft)
		if !first || i > 0 {
			t.perTok = append(t.perTok, 1000*sec/float64(timed))
		}
		text += t.stream.Push(tok) // one token: the piece itself, no copy
	}
	s.emitted += len(toks)
	t.reply = append(t.reply, text...)
	// The event shares the turn's record: it only grows, and the full
	// slice expressions make a consumer's append copy rather than write.
	to := len(t.gen)
	d := t.newDelta()
	*d = Delta{Text: text, Tokens: t.gen[from:to:to], FromDraft: t.fromDraft[from:to:to], Live: s.live(t, now)}
	t.emit(d)
}

// live computes the running figures after an emission.
func (s *Session) live(t *turn, now time.Time) Live {
	l := Live{Generated: len(t.gen), ContextUsed: s.chain.Position(), ContextLimit: s.caps.Context, SpecState: s.specState()}
	if el := now.Sub(t.decodeStart).Seconds(); el > 0 {
		l.DecodeTokPerS = float64(len(t.gen)) / el
	}
	if n := len(t.perTok); n > 0 {
		l.LastTokenMs = t.perTok[n-1]
	}
	if t.spec.Drafted > 0 {
		l.AcceptanceRate = float64(t.spec.Accepted) / float64(t.spec.Drafted)
	}
	return l
}

// specState is what the user sees of the speculation policy.
func (s *Session) specState() SpecState {
	switch {
	case s.caps.MaxVerify() == 0:
		return SpecUnsupported
	case s.set.Speculation == SpecModeOff || !s.set.Sampling.Greedy():
		return SpecOff
	case s.set.Speculation == SpecModeOn:
		return SpecOn
	case s.policy.paused(s.emitted):
		return SpecPaused
	}
	return SpecAdaptive
}

// finished closes a turn that ended normally.
func (s *Session) finished(t *turn) error {
	reply := s.endTurn(t)
	m := s.metrics(t)
	s.record(m)
	s.keepFigures(m)
	t.emit(Finished{Reply: reply, Metrics: m})
	return nil
}

// cancelled closes a turn stopped by the user (or cut short by the
// engine closing); the partial reply is kept, with its figures.
func (s *Session) cancelled(t *turn) error {
	t.finish = "cancelled"
	reply := s.endTurn(t)
	if n := len(s.msgs); n > 0 && s.msgs[n-1].Role == "model" {
		s.msgs[n-1].Interrupted = true
		s.msgs[n-1].Stopped = !s.closing.Load()
	}
	m := s.metrics(t)
	s.record(m)
	s.keepFigures(m)
	t.emit(Cancelled{Partial: reply, Metrics: m})
	return ErrCancelled
}

// keepFigures gives the reply just added its turn's figures.
func (s *Session) keepFigures(m TurnMetrics) {
	if n := len(s.msgs); n > 0 && s.msgs[n-1].Role == "model" {
		s.msgs[n-1].Metrics = m.Kept()
	}
}

// fail closes a turn that failed, for whatever reason and at whatever
// point: the conversation is put back exactly as it was before the turn
// (the front end gives the message back to the user), and so is what the
// next turn continues — the cache keeps what it still holds of it, and
// the rest waits in unfed, so the next turn's output is the same as if
// this one had never been tried.
func (s *Session) fail(t *turn, err error) error {
	t.finish = "error"
	if rerr := s.rollback(t.undo); rerr != nil {
		err = errors.Join(err, rerr)
	}
	op := t.op
	if op == "" {
		op = OpSend
	}
	t.emit(Failed{Op: op, Err: err})
	return err
}

// undoPoint is what a failed turn puts back.
type undoPoint struct {
	msgs       []Message
	tail       tailState
	base       *tailState
	baseAt     int
	versions   map[int]*versionSet
	gen        uint64
	turn       int
	lastPrompt []int
}

func (s *Session) undoPoint() *undoPoint {
	return &undoPoint{msgs: slices.Clone(s.msgs), tail: s.tail(), base: s.base, baseAt: s.baseAt, versions: s.versions,
		gen: s.gen, turn: s.turn, lastPrompt: s.lastPrompt}
}

// rollback puts the session back at u. The chain keeps the longest prefix
// of u's tokens it still holds (a failed call may have moved it).
func (s *Session) rollback(u *undoPoint) error {
	if p := s.chain.Position(); p < len(s.committed) {
		s.committed = s.committed[:p] // the failed call fed less than recorded
	} else if p > len(s.committed) {
		if err := s.chain.Rewind(len(s.committed)); err != nil {
			s.committed = nil
			if rerr := s.chain.Reset(); rerr != nil {
				return rerr
			}
		}
	}
	s.msgs, s.base, s.baseAt, s.versions, s.gen, s.turn, s.lastPrompt = u.msgs, u.base, u.baseAt, u.versions, u.gen, u.turn, u.lastPrompt
	s.sampler = nil // its stream belongs to the turn that failed
	_, err := s.applyTail(u.tail)
	return err
}

// endTurn appends the model's reply and records what the next turn may
// continue from.
func (s *Session) endTurn(t *turn) string {
	s.streamPending = nil
	switch t.finish {
	case "cap", "cancelled", "contextFull":
		// The reply may go on (Continue, perhaps after a checkpoint): the
		// first bytes of an unfinished character wait for the rest.
		s.streamPending = t.stream.Pending()
	default:
		t.reply = append(t.reply, t.stream.Flush()...)
	}
	reply := string(t.reply)
	seen := s.seen(s.msgs, s.window) // what the turn's prompt rendered
	s.contOK, s.unfed = false, nil
	if t.finish == "cap" && s.pending >= 0 {
		// Emitted, not fed: Continue feeds it first rather than emit it
		// again, whether or not the next turn continues the history.
		s.unfed = []int{s.pending}
	}
	if t.cont {
		// The reply goes on from the message the prompt ended in; the
		// next turn re-encodes it and reuses the common prefix.
		s.msgs[len(s.msgs)-1].Content += reply
		return reply
	}
	s.msgs = append(s.msgs, Message{Role: "model", Content: reply})
	if t.raw {
		return reply // no conversation to continue: the next prompt is encoded afresh
	}
	rendered, err := s.tmpl.Render(s.conversation(seen))
	if err != nil || len(s.committed) < len(t.prompt) || !slices.Equal(s.committed[:len(t.prompt)], t.prompt) {
		return reply
	}
	// Thought blocks are stripped from history, so a reply holding one is
	// re-rendered rather than continued.
	if open, ok := s.tok.TokenID("<|channel>"); ok && slices.Contains(t.gen, open) {
		return reply
	}
	s.contOK, s.prevPrompt = true, rendered
	return reply
}

// metrics assembles the turn's figures.
func (s *Session) metrics(t *turn) TurnMetrics {
	end := s.now()
	m := TurnMetrics{PromptTokens: len(t.prompt), ReusedTokens: t.reused, GeneratedTokens: len(t.gen),
		FinishReason: t.finish, PrefillSeconds: t.prefillSec, ContextUsed: s.chain.Position(),
		ContextLimit: s.caps.Context, DroppedTurns: t.dropped, PerTokenMillis: t.perTok}
	if fed := len(t.prompt) - t.reused; t.prefillSec > 0 {
		m.PrefillTokPerSec = float64(fed) / t.prefillSec
	}
	if !t.firstEmit.IsZero() {
		m.TTFTSeconds = t.firstEmit.Sub(t.start).Seconds()
	}
	if n, ok := chain.SeamCopies(s.chain); ok && t.seamMetered && len(t.gen) > 0 {
		m.SeamMetered, m.SeamCopiedBytesPerToken = true, float64(n-t.copied0)/float64(len(t.gen))
	}
	if !t.decodeStart.IsZero() {
		if el := end.Sub(t.decodeStart).Seconds(); el > 0 {
			m.DecodeTokPerSec = float64(len(t.gen)) / el
		}
	}
	if n := len(t.perTok); n > 0 {
		sorted := slices.Clone(t.perTok)
		sort.Float64s(sorted)
		var sum float64
		for _, v := range sorted {
			sum += v
		}
		m.PerTokenMinMs, m.PerTokenMaxMs, m.PerTokenMedianMs = sorted[0], sorted[n-1], sorted[n/2]
		m.PerTokenMeanMs = sum / float64(n)
	}
	t.spec.Enabled = s.set.Speculation != SpecModeOff && s.caps.MaxVerify() > 0 && s.set.Sampling.Greedy()
	t.spec.State = s.specState()
	t.spec.finish()
	s.total.add(t.spec)
	m.Spec = t.spec
	m.Memory = s.sampleMemory()
	return m
}

// record hands the turn's metrics to the metrics log, if any.
func (s *Session) record(m TurnMetrics) {
	if s.Metrics != nil {
		s.Metrics(m) // a full disk must not break the chat; the log is best effort
	}
}

// SessionSpec returns the speculation figures of the whole session.
func (s *Session) SessionSpec() SpecStats { return s.total }

func commonPrefix(a, b []int) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Continue generates from the pending token without a new user message —
// what corellm-chat's --kv-restore does after loading a cache. The reply
// becomes a new model message.
func (s *Session) Continue(emit func(Event)) error {
	if s.pending < 0 && len(s.unfed) == 0 {
		err := errors.New("nothing to continue: the cache holds no pending token")
		emit(Failed{Op: OpContinue, Err: err})
		return err
	}
	s.cancel.Store(false)
	t := &turn{start: s.now(), emit: emit, stream: tokenizer.NewStream(s.tok, false), op: OpContinue, undo: s.undoPoint()}
	s.turn++
	// The last reply's unfinished character continues in this one.
	for _, id := range s.streamPending {
		t.reply = append(t.reply, t.stream.Push(id)...)
	}
	s.streamPending = nil
	t.prompt = slices.Clone(s.committed)
	t.reused = len(t.prompt)
	s.lastPrompt = t.prompt
	emit(Started{Turn: len(s.msgs), PromptTokens: len(t.prompt), ReusedTokens: t.reused, Window: s.window})
	next := s.pending
	// A reply cut at its cap left its last token emitted but not fed; a
	// conversation brought back without its cache (the history) or on
	// another version holds more: they are fed as a prefill.
	if len(s.unfed) > 0 {
		n, err := s.prefill(t, s.unfed)
		if err != nil {
			if errors.Is(err, ErrCancelled) {
				return s.cancelled(t)
			}
			return s.fail(t, err)
		}
		next = n
	}
	s.pending, s.unfed, s.contOK = -1, nil, false
	t.decodeStart = s.now()
	t.copied0, t.seamMetered = chain.SeamCopies(s.chain)
	if err := s.decode(t, next); err != nil {
		if errors.Is(err, ErrCancelled) {
			return s.cancelled(t)
		}
		return s.fail(t, err)
	}
	return s.finished(t)
}
