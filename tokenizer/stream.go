package tokenizer

import "strings"

// maxPending bounds how many tokens a Stream holds back while their text
// is incomplete, which keeps the work per token constant even when a model
// emits a long run of invalid bytes.
const maxPending = 8

// Stream turns token ids into text as a model produces them. Push returns
// only complete text: a character spelled by several byte-fallback tokens
// comes out whole once its last byte arrives, never as U+FFFD halves.
//
// Each Push decodes a window of a few tokens: the last emitted ones, kept
// as context for decoders whose output depends on the neighbours (such as
// Strip), and the pending ones. The concatenated output equals Decode of
// all ids except where the ids spell invalid UTF-8, which the Stream
// renders byte by byte where Decode would blank the whole byte run.
//
// A Stream is not safe for concurrent use.
type Stream struct {
	t           *Tokenizer
	skipSpecial bool
	ids         []int  // ids[:ctx] were emitted (context), the rest pend
	ctx         int    // number of context ids
	prefix      string // Decode(ids[:ctx]); stale while lazy
	lazy        bool   // prefix not computed yet (the fast path skips it)
	solid       bool   // the context decodes to text, so a following piece is never stripped
}

// NewStream starts a stream. With skipSpecial, special tokens produce no
// text.
func NewStream(t *Tokenizer, skipSpecial bool) *Stream {
	return &Stream{t: t, skipSpecial: skipSpecial, ids: make([]int, 0, 2*maxPending)}
}

// Push adds one token and returns the text it completes, often "" (a
// partial character, a skipped special token) and sometimes several
// characters at once.
func (s *Stream) Push(id int) string {
	// Fast path: nothing pending, the context holds text, and the token
	// has a fixed piece — its text is that piece (see pieces).
	if s.solid && len(s.ids) == s.ctx && !(s.skipSpecial && s.t.IsSpecial(id)) {
		if p, ok := s.t.pieces.piece(id); ok {
			s.ids = append(s.ids[:0], id)
			s.ctx, s.lazy = 1, true
			s.solid = s.t.pieces.survivesStrip(p)
			return p
		}
	}
	s.settle()
	s.ids = append(s.ids, id)
	text := s.t.Decode(s.ids, s.skipSpecial)
	if !strings.HasPrefix(text, s.prefix) {
		// The new token changed how the context decodes (a byte run turned
		// invalid). What was emitted stays; continue without context.
		s.dropContext()
		text = s.t.Decode(s.ids, s.skipSpecial)
	}
	pending := len(s.ids) - s.ctx
	if pending < maxPending && (len(text) <= len(s.prefix) || s.incomplete(text)) {
		return ""
	}
	out := text[len(s.prefix):]
	// The tokens just emitted become the context of the next call.
	s.dropContext()
	s.ctx = len(s.ids)
	s.prefix = s.t.Decode(s.ids, s.skipSpecial)
	s.solid = s.prefix != "" && s.t.pieces != nil
	return out
}

// settle computes a prefix the fast path left lazy.
func (s *Stream) settle() {
	if s.lazy {
		s.prefix = s.t.Decode(s.ids[:s.ctx], s.skipSpecial)
		s.lazy = false
	}
}

// Flush returns whatever text is still held back, incomplete characters
// included (as U+FFFD), and resets the stream.
func (s *Stream) Flush() string {
	s.settle()
	text := s.t.Decode(s.ids, s.skipSpecial)
	out := text
	if strings.HasPrefix(text, s.prefix) {
		out = text[len(s.prefix):]
	} else {
		out = s.t.Decode(s.ids[s.ctx:], s.skipSpecial)
	}
	s.ids, s.ctx, s.prefix, s.solid = s.ids[:0], 0, "", false
	return out
}

// Pending returns the tokens held back because their text is not complete
// yet (the first bytes of a character). A Stream continuing the same text
// later — after a checkpoint, say — pushes them first, so the character
// comes out whole.
func (s *Stream) Pending() []int {
	if len(s.ids) == s.ctx {
		return nil
	}
	return append([]int(nil), s.ids[s.ctx:]...)
}

// incomplete reports whether text may end in the first bytes of a
// character: U+FFFD made by a byte-fallback token (the last token that
// produces text: a skipped special token between two bytes of one
// character must not cut it). A literal U+FFFD token is complete text and
// is not held back.
func (s *Stream) incomplete(text string) bool {
	if !strings.HasSuffix(text, "\uFFFD") {
		return false
	}
	for i := len(s.ids) - 1; i >= s.ctx; i-- {
		id := s.ids[i]
		if s.skipSpecial && s.t.IsSpecial(id) {
			continue
		}
		tok, ok := s.t.Token(id)
		if !ok {
			return false
		}
		_, isByte := byteToken(tok)
		return isByte
	}
	return false
}

// dropContext forgets the context ids, keeping only the pending ones.
func (s *Stream) dropContext() {
	n := copy(s.ids, s.ids[s.ctx:])
	s.ids = s.ids[:n]
	s.ctx, s.prefix, s.lazy, s.solid = 0, "", false, false
}
