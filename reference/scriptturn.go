package reference

import "strings"

// turnCache is the script's reading of the turn the head is in, kept
// while the log does not change it: the reply starts at position start
// (reply nil: the weights answer), checked through position at. A write
// below start, or of a turn or tool-result marker, drops it.
type turnCache struct {
	valid bool
	at    int
	start int
	reply []int32
}

// next returns the scripted token after position q, or −1 where the
// weights answer. Once the turn is read, a token costs a comparison of
// the reply so far, without allocation.
func (s *Scripted) next(q int) int32 {
	c := &s.turn
	if q < 0 || q >= len(s.log.ids) || q >= s.log.top {
		return -1
	}
	if c.valid && q+1 < c.start {
		c.valid = false
	}
	for i := c.at + 1; c.valid && i <= q; i++ { // markers fed past what was read
		if s.structural(s.log.ids[i]) {
			c.valid = false
		}
	}
	if !c.valid {
		*c = s.read(q)
	}
	c.at = max(c.at, q)
	k := q + 1 - c.start
	if c.reply == nil || k < 0 || k >= len(c.reply) {
		return -1
	}
	for i := range k {
		if s.log.ids[c.start+i] != c.reply[i] {
			return -1 // the turn left the script (an edit, a prefilled reply)
		}
	}
	return c.reply[k]
}

// read finds, at position q, the model turn q is in, the text that
// triggers it — the last tool result inside that turn, else the user
// message before it — and the first entry matching that text. Unknown ids
// (soft rows) in a user message are left out of its text; anywhere else
// they leave the turn to the weights.
func (s *Scripted) read(q int) turnCache {
	none := turnCache{valid: true, at: q, start: q + 1}
	ids := s.log.ids
	o := -1
	for i := q; i >= 0 && o < 0; i-- {
		switch id := ids[i]; {
		case id < 0 || id == s.tClose:
			return none
		case id == s.tOpen:
			o = i
		}
	}
	if o < 0 {
		return none
	}
	role, h, ok := s.header(o, q)
	if !ok && h < 0 {
		return turnCache{} // "model\n" not complete yet: read again next time
	}
	if !ok || role != "model" {
		return none
	}
	text, start, ok := s.toolResult(h, q)
	if !ok {
		return none
	}
	if start < 0 { // no tool result: the user message before the turn
		if text, ok = s.userMessage(o); !ok {
			return turnCache{valid: true, at: q, start: h}
		}
		start = h
	}
	for _, r := range s.replies {
		if r.re.MatchString(text) {
			return turnCache{valid: true, at: q, start: start, reply: r.ids}
		}
	}
	return turnCache{valid: true, at: q, start: start}
}

// header reads the role after the turn opener at o ("model\n"): the role
// and the first position of the turn's content. ok is false for a header
// that is not one, with content −1 when it only is not complete by
// position limit.
func (s *Scripted) header(o, limit int) (role string, content int, ok bool) {
	var ids []int
	for i := o + 1; i <= o+8; i++ {
		if i > limit {
			return "", -1, false
		}
		if s.log.ids[i] < 0 {
			return "", 0, false
		}
		ids = append(ids, int(s.log.ids[i]))
		text := s.tok.Decode(ids, false)
		if j := strings.IndexByte(text, '\n'); j >= 0 {
			return text[:j], i + 1, j == len(text)-1
		}
	}
	return "", 0, false
}

// toolResult finds the last complete tool result in [h, q]: its text,
// markers included, and the position after it (−1: none). ok is false for
// an unterminated or unreadable one.
func (s *Scripted) toolResult(h, q int) (text string, start int, ok bool) {
	if s.toolOpen < 0 || s.toolClose < 0 {
		return "", -1, true
	}
	ids := s.log.ids
	e := -1
	for i := q; i >= h; i-- {
		if ids[i] == s.toolClose {
			e = i
			break
		}
	}
	if e < 0 {
		return "", -1, true
	}
	var block []int
	for i := e; i >= h; i-- {
		if ids[i] < 0 {
			return "", 0, false
		}
		block = append(block, int(ids[i]))
		if ids[i] == s.toolOpen {
			for a, b := 0, len(block)-1; a < b; a, b = a+1, b-1 {
				block[a], block[b] = block[b], block[a]
			}
			return s.tok.Decode(block, false), e + 1, true
		}
	}
	return "", 0, false
}

// userMessage is the text of the user turn that closes just before the
// turn opener at o (only newlines between), soft rows left out.
func (s *Scripted) userMessage(o int) (string, bool) {
	ids := s.log.ids
	c := -1
	for i := o - 1; i >= 0 && c < 0; i-- {
		switch ids[i] {
		case s.tClose:
			c = i
		case s.newline:
		default:
			return "", false
		}
	}
	if c < 0 {
		return "", false
	}
	u := -1
	for i := c - 1; i >= 0 && u < 0; i-- {
		switch ids[i] {
		case s.tClose:
			return "", false
		case s.tOpen:
			u = i
		}
	}
	if u < 0 {
		return "", false
	}
	role, h, ok := s.header(u, c-1)
	if !ok || role != "user" {
		return "", false
	}
	content := make([]int, 0, c-h)
	for _, id := range ids[h:c] {
		if id >= 0 {
			content = append(content, int(id))
		}
	}
	return s.tok.Decode(content, true), true
}
