package server

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Gemma 4 writes its thinking into the reply as <|channel>thought
// …<channel|>, then the answer; ollama's API gives the two apart
// (message.thinking and message.content, or thinking and response).

const (
	thinkOpen    = "<|channel>"
	thinkClose   = "<channel|>"
	thoughtLabel = "thought" // the channel's name, after thinkOpen
)

// thoughts splits a streamed reply into thinking and answer. Text that
// may be the start of a marker (or of the channel's name) is held until
// the next delta tells.
type thoughts struct {
	held  string
	in    bool // inside a thinking block
	named bool // the block's channel name has been read past
}

// push takes the next delta's text and returns the thinking and answer
// text it completes.
func (t *thoughts) push(text string) (thinking, answer string) {
	buf := t.held + text
	t.held = ""
	var th, an strings.Builder
	for buf != "" {
		if !t.in {
			if i := strings.Index(buf, thinkOpen); i >= 0 {
				an.WriteString(buf[:i])
				buf, t.in, t.named = buf[i+len(thinkOpen):], true, false
				continue
			}
			keep := partialSuffix(buf, thinkOpen)
			an.WriteString(buf[:len(buf)-keep])
			t.held = buf[len(buf)-keep:]
			break
		}
		if !t.named {
			label := thoughtLabel + "\n"
			if len(buf) < len(label) && strings.HasPrefix(label, buf) {
				t.held = buf // "thou": wait for the rest
				break
			}
			buf = strings.TrimPrefix(strings.TrimPrefix(buf, thoughtLabel), "\n")
			t.named = true
			continue
		}
		if j := strings.Index(buf, thinkClose); j >= 0 {
			th.WriteString(buf[:j])
			buf, t.in = buf[j+len(thinkClose):], false
			continue
		}
		keep := partialSuffix(buf, thinkClose)
		th.WriteString(buf[:len(buf)-keep])
		t.held = buf[len(buf)-keep:]
		break
	}
	return th.String(), an.String()
}

// flush returns what was held back, at the end of the reply.
func (t *thoughts) flush() (thinking, answer string) {
	held := t.held
	t.held = ""
	if t.in {
		return held, ""
	}
	return "", held
}

// partialSuffix is the length of the longest end of s that begins marker
// (and is shorter than it).
func partialSuffix(s, marker string) int {
	for n := min(len(marker)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, marker[:n]) {
			return n
		}
	}
	return 0
}

// splitThoughts splits a whole reply.
func splitThoughts(reply string) (thinking, answer string) {
	var t thoughts
	th, an := t.push(reply)
	fth, fan := t.flush()
	return th + fth, an + fan
}

// thinkOf reads ollama's think field: true, false, or a level ("low",
// "medium", "high"), which asks for thinking; Gemma 4 has no levels.
func (s *Server) thinkOf(raw json.RawMessage) (bool, error) {
	raw = bytes.TrimSpace(raw)
	var on bool
	switch {
	case len(raw) == 0, string(raw) == "null":
		return false, nil
	case json.Unmarshal(raw, &on) == nil:
	default:
		var level string
		if err := json.Unmarshal(raw, &level); err != nil {
			return false, bad("invalid_value", "think", "think must be true, false or a level (low, medium, high)")
		}
		on = level != ""
	}
	if on && !s.info.Thinking {
		return false, bad("unsupported_value", "think", s.info.Name+"'s prompt template cannot ask for thinking; leave think out or false")
	}
	return on, nil
}
