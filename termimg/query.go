package termimg

import (
	"strconv"
	"strings"
)

// Queries and the replies they draw. Terminals answer in the order asked.
const (
	// KittyQueryID is the image id of the kitty graphics query.
	KittyQueryID = 31
	// QueryKitty asks whether the kitty graphics protocol works: a 1×1 RGB
	// image with action "query" (a=q), which a supporting terminal checks
	// but does not store. The reply is ESC _Gi=31;OK ESC \ or an error.
	QueryKitty = "\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\"
	// QueryVersion is XTVERSION; the reply is ESC P >| name version ESC \.
	QueryVersion = "\x1b[>q"
	// QueryDA1 asks for the primary device attributes; the reply is
	// ESC [ ? attrs… c, where attribute 4 means sixel graphics.
	QueryDA1 = "\x1b[c"
	// QueryCellSize asks for the size of one cell in pixels (for sizing
	// sixel pictures); the reply is ESC [ 6 ; height ; width t.
	QueryCellSize = "\x1b[16t"
)

// ParseDA1 reads a primary device attributes reply ESC [ ? a;b;… c. Empty
// fields are skipped (kitty answers ESC [ ? 62 ; c).
func ParseDA1(s string) ([]int, bool) {
	body, ok := strings.CutPrefix(s, "\x1b[?")
	if !ok {
		return nil, false
	}
	body, ok = strings.CutSuffix(body, "c")
	if !ok {
		return nil, false
	}
	var attrs []int
	for _, f := range strings.Split(body, ";") {
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, false
		}
		attrs = append(attrs, n)
	}
	return attrs, len(attrs) > 0
}

// SixelInDA1 reports whether the attributes list sixel graphics (4).
func SixelInDA1(attrs []int) bool {
	for _, a := range attrs[min(1, len(attrs)):] { // the first is the terminal class
		if a == 4 {
			return true
		}
	}
	return false
}

// KittyReply is a kitty graphics protocol response.
type KittyReply struct {
	ID      int    // i= of the command answered
	OK      bool   // the payload is "OK"
	Message string // the payload: "OK" or an error such as "ENOTSUPPORTED:…"
}

// ParseKittyReply reads ESC _G keys ; payload ESC \ (also with the 8-bit ST
// or BEL terminator some terminals use).
func ParseKittyReply(s string) (KittyReply, bool) {
	body, ok := strings.CutPrefix(s, "\x1b_G")
	if !ok {
		return KittyReply{}, false
	}
	body, ok = cutTerminator(body)
	if !ok {
		return KittyReply{}, false
	}
	keys, payload, _ := strings.Cut(body, ";")
	r := KittyReply{Message: payload, OK: payload == "OK"}
	for _, kv := range strings.Split(keys, ",") {
		if v, ok := strings.CutPrefix(kv, "i="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return KittyReply{}, false
			}
			r.ID = n
		}
	}
	return r, true
}

// ParseVersion reads an XTVERSION reply ESC P >| text ESC \ and returns the
// text, such as "iTerm2 3.5.4" or "kitty(0.35.2)".
func ParseVersion(s string) (string, bool) {
	body, ok := strings.CutPrefix(s, "\x1bP>|")
	if !ok {
		return "", false
	}
	return cutTerminator(body)
}

// ParseCellSize reads the reply to QueryCellSize: ESC [ 6 ; h ; w t.
func ParseCellSize(s string) (w, h int, ok bool) {
	body, ok := strings.CutPrefix(s, "\x1b[6;")
	if !ok {
		return 0, 0, false
	}
	body, ok = strings.CutSuffix(body, "t")
	if !ok {
		return 0, 0, false
	}
	hs, ws, ok := strings.Cut(body, ";")
	if !ok {
		return 0, 0, false
	}
	h, err1 := strconv.Atoi(hs)
	w, err2 := strconv.Atoi(ws)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, false
	}
	return w, h, true
}

// cutTerminator removes a string terminator: ESC \, the 8-bit ST, or BEL.
func cutTerminator(s string) (string, bool) {
	for _, t := range []string{"\x1b\\", "\x9c", "\a"} {
		if b, ok := strings.CutSuffix(s, t); ok {
			return b, true
		}
	}
	return "", false
}

// SplitReplies cuts a buffer of terminal replies into single escape
// sequences (CSI, DCS, APC, OSC), for Detector.Feed. Bytes outside a
// sequence are dropped; an unfinished sequence at the end is returned as
// rest, to be fed again with what follows.
func SplitReplies(buf string) (seqs []string, rest string) {
	for i := 0; i < len(buf); {
		if buf[i] != 0x1b || i+1 >= len(buf) {
			if buf[i] == 0x1b {
				return seqs, buf[i:]
			}
			i++
			continue
		}
		var end int
		switch buf[i+1] {
		case '[': // CSI: parameters, then a final byte 0x40–0x7e
			end = -1
			for j := i + 2; j < len(buf); j++ {
				if buf[j] >= 0x40 && buf[j] <= 0x7e {
					end = j + 1
					break
				}
			}
		case 'P', '_', ']': // DCS, APC, OSC: up to ST (or BEL for OSC)
			end = -1
			for j := i + 2; j < len(buf); j++ {
				if buf[j] == '\a' && buf[i+1] == ']' {
					end = j + 1
					break
				}
				if buf[j] == 0x1b && j+1 < len(buf) && buf[j+1] == '\\' {
					end = j + 2
					break
				}
			}
		default:
			i += 2
			continue
		}
		if end < 0 {
			return seqs, buf[i:]
		}
		seqs = append(seqs, buf[i:end])
		i = end
	}
	return seqs, ""
}
