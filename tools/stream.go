package tools

import (
	"errors"
	"fmt"
	"strings"
)

// EventKind says what a Stream found.
type EventKind uint8

const (
	// EventText is reply text, to show as it comes.
	EventText EventKind = iota
	// EventCallStart: the model wrote <|tool_call> and is writing a call
	// (a front end may show that a call is coming). Text is the marker.
	EventCallStart
	// EventCall: a call ended and parses. Call holds it; Text is its
	// source, markers included.
	EventCall
	// EventMalformed: a call ended (or the reply did) and does not parse.
	// Text is its source, to show as text; Err says what is wrong.
	EventMalformed
	// EventResponseWanted: the model wrote <|tool_response>, after its
	// calls: it waits for their results. Text is the marker.
	EventResponseWanted
)

// Event is one thing a Stream found in a reply.
type Event struct {
	Kind EventKind
	Text string
	Call Call
	Err  error
}

// MaxCallBytes bounds one call's text: a call still open past it is
// malformed, and what follows is text again.
const MaxCallBytes = 1 << 20

// Stream finds calls in a reply as it is generated: feed it the text of
// each token (or any pieces) and it says where a call starts and ends,
// holding back only the few bytes that may begin a marker and the text
// of a call until it closes. A call ends at the first <tool_call|> outside
// its <|"|> strings. Outside calls, feeding text allocates
// nothing. The zero value is ready; a Stream serves one reply at a time.
type Stream struct {
	pend    string          // outside a call: a tail that may begin a marker
	inCall  bool            // between <|tool_call> and <tool_call|>
	body    strings.Builder // the call's text so far
	scanned int             // body bytes already searched for the closer
	quoted  bool            // the body so far ends inside a <|"|> string
}

// Feed takes the next text of the reply and appends what it found to ev.
func (s *Stream) Feed(delta string, ev []Event) []Event {
	for delta != "" {
		if s.inCall {
			delta, ev = s.feedCall(delta, ev)
			continue
		}
		data := delta
		if pend := s.pend; pend != "" {
			// Join the held-back tail only when the text goes on with a
			// marker: otherwise it is text, and nothing is allocated.
			s.pend = ""
			if continuesMarker(pend, delta) {
				data = pend + delta
			} else {
				ev = append(ev, Event{Kind: EventText, Text: pend})
			}
		}
		delta = ""
		if strings.IndexByte(data, '<') < 0 {
			return append(ev, Event{Kind: EventText, Text: data})
		}
		if at, marker := nextMarker(data); at >= 0 {
			if at > 0 {
				ev = append(ev, Event{Kind: EventText, Text: data[:at]})
			}
			if marker == CallOpen {
				ev = append(ev, Event{Kind: EventCallStart, Text: CallOpen})
				s.inCall, s.scanned, s.quoted = true, 0, false
				s.body.Reset()
			} else {
				ev = append(ev, Event{Kind: EventResponseWanted, Text: ResponseOpen})
			}
			delta = data[at+len(marker):]
			continue
		}
		keep := partialMarker(data)
		if n := len(data) - keep; n > 0 {
			ev = append(ev, Event{Kind: EventText, Text: data[:n]})
		}
		s.pend = data[len(data)-keep:]
	}
	return ev
}

// End says the reply is over: a call left open is a call when it parses
// (the model may stop before <tool_call|>), else malformed; held-back text
// is text. The Stream is then ready for another reply.
func (s *Stream) End(ev []Event) []Event {
	if s.inCall {
		ev = s.finish(s.body.String(), false, ev)
	}
	if s.pend != "" {
		ev = append(ev, Event{Kind: EventText, Text: s.pend})
	}
	*s = Stream{}
	return ev
}

func (s *Stream) feedCall(delta string, ev []Event) (string, []Event) {
	s.body.WriteString(delta)
	body := s.body.String()
	if end, ok := s.scanClose(body); ok {
		ev = s.finish(body[:end], true, ev)
		s.inCall, s.quoted = false, false
		s.body = strings.Builder{}
		return body[end+len(CallClose):], ev
	}
	if len(body) > MaxCallBytes {
		ev = append(ev, Event{Kind: EventMalformed, Text: CallOpen + body,
			Err: fmt.Errorf("tools: a call longer than %d bytes without %s", MaxCallBytes, CallClose)})
		s.inCall, s.quoted = false, false
		s.body = strings.Builder{}
	}
	return "", ev
}

// scanClose looks for the call's <tool_call|> in body from where it
// stopped last, outside <|"|> strings: a string may hold any text,
// markers' spellings included. It stops before a tail that may begin a
// marker, to read it whole with the next text.
func (s *Stream) scanClose(body string) (int, bool) {
	i := s.scanned
	for {
		j := strings.IndexByte(body[i:], '<')
		if j < 0 {
			s.scanned = len(body)
			return 0, false
		}
		i += j
		rest := body[i:]
		switch {
		case strings.HasPrefix(rest, Quote):
			s.quoted = !s.quoted
			i += len(Quote)
			continue
		case !s.quoted && strings.HasPrefix(rest, CallClose):
			return i, true
		case len(rest) < len(CallClose) && (strings.HasPrefix(Quote, rest) || strings.HasPrefix(CallClose, rest)):
			s.scanned = i
			return 0, false
		}
		i++
	}
}

// finish reports a call's body as a call or as malformed text.
func (s *Stream) finish(body string, closed bool, ev []Event) []Event {
	src := CallOpen + body
	if closed {
		src += CallClose
	}
	c, err := ParseCall(body)
	if err != nil {
		if !closed {
			err = fmt.Errorf("%w (the reply ended before %s)", err, CallClose)
		}
		return append(ev, Event{Kind: EventMalformed, Text: src, Err: err})
	}
	return append(ev, Event{Kind: EventCall, Text: src, Call: c})
}

// nextMarker finds the first <|tool_call> or <|tool_response> in data.
func nextMarker(data string) (int, string) {
	const common = "<|tool_"
	for off := 0; ; {
		i := strings.Index(data[off:], common)
		if i < 0 {
			return -1, ""
		}
		at := off + i
		for _, m := range []string{CallOpen, ResponseOpen} {
			if strings.HasPrefix(data[at:], m) {
				return at, m
			}
		}
		off = at + len(common)
	}
}

// partialMarker is the length of the longest tail of data that a marker
// may continue: markers hold one '<', at their start.
func partialMarker(data string) int {
	i := strings.LastIndexByte(data, '<')
	if i < 0 {
		return 0
	}
	tail := data[i:]
	if strings.HasPrefix(CallOpen, tail) || strings.HasPrefix(ResponseOpen, tail) {
		return len(tail)
	}
	return 0
}

// continuesMarker reports whether delta goes on with a marker that pend,
// a held-back tail, began.
func continuesMarker(pend, delta string) bool {
	for _, m := range []string{CallOpen, ResponseOpen} {
		if rest, ok := strings.CutPrefix(m, pend); ok && (strings.HasPrefix(delta, rest) || strings.HasPrefix(rest, delta)) {
			return true
		}
	}
	return false
}

// Parse splits a whole reply as a Stream fed it at once would, without
// EventCallStart and with adjacent text joined: text, calls, malformed
// calls (as text, with their error) and <|tool_response> markers, in order.
func Parse(reply string) []Event {
	var s Stream
	return settled(s.End(s.Feed(reply, nil)))
}

// settled drops EventCallStart and joins adjacent text.
func settled(ev []Event) []Event {
	var out []Event
	for _, e := range ev {
		switch {
		case e.Kind == EventCallStart:
			continue
		case e.Kind == EventText && len(out) > 0 && out[len(out)-1].Kind == EventText:
			out[len(out)-1].Text += e.Text
			continue
		}
		out = append(out, e)
	}
	return out
}

// Split returns a whole reply's text (without its well-formed calls and
// <|tool_response> markers; a malformed call stays in it as written), its
// calls in order, and the malformed calls' errors joined (nil when none).
func Split(reply string) (text string, calls []Call, err error) {
	var b strings.Builder
	var errs []error
	for _, e := range Parse(reply) {
		switch e.Kind {
		case EventText:
			b.WriteString(e.Text)
		case EventCall:
			calls = append(calls, e.Call)
		case EventMalformed:
			b.WriteString(e.Text)
			errs = append(errs, e.Err)
		}
	}
	return b.String(), calls, errors.Join(errs...)
}
