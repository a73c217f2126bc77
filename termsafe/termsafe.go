// Package termsafe makes strings that came from files safe to print on a
// terminal. A checkpoint, a bundle config or a model reply may hold
// escape sequences (ESC ] 0;… retitles the window, ESC ] 52;… writes the
// clipboard, ESC [2J clears the screen), C1 controls that some terminals
// obey as escapes, and bidirectional overrides that reorder what is shown.
// Line and Text show every such character as a visible escape (\x1b,
// \u202e) instead; JSON escapes them inside JSON text; Quote cuts long
// values for messages.
package termsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// unsafe reports whether r must not reach a terminal as itself: C0
// controls, DEL, C1 controls, the bidirectional formatting characters and
// the Unicode line and paragraph separators.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, 0x80 <= r && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// Line returns s with every control character shown as an escape,
// newlines and tabs included: for one-line fields such as names.
func Line(s string) string { return clean(s, false) }

// Text returns s with every control character shown as an escape except
// newline and tab: for multi-line text such as messages and errors.
func Text(s string) string { return clean(s, true) }

// Safe reports whether s prints as itself (Text would not change it).
func Safe(s string) bool { return firstUnsafe(s, true) < 0 }

// SafeLine reports whether s prints as itself on one line (Line would not
// change it): for names and keys, where a newline or tab would split or
// misalign the message that shows them.
func SafeLine(s string) bool { return firstUnsafe(s, false) < 0 }

func firstUnsafe(s string, keepLines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 || c == 0x7f) && !(keepLines && (c == '\n' || c == '\t')) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafe(r) {
			return i
		}
		i += n
	}
	return -1
}

func clean(s string, keepLines bool) string {
	i := firstUnsafe(s, keepLines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case unsafe(r):
			b.WriteString(`\u`)
			b.WriteString(hex4(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

func hex2(c byte) string { return string([]byte{hexDigits[c>>4], hexDigits[c&15]}) }

func hex4(r rune) string {
	return string([]byte{hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15]})
}

// MaxQuote is how many bytes of a value Quote keeps.
const MaxQuote = 100

// Quote returns s as a Go string literal for a message, cut after
// MaxQuote bytes (at a character boundary) with its full length noted,
// so a 50 MB token in a file makes a one-line error. strconv.Quote shows
// every control and format character as an escape.
func Quote(s string) string {
	if len(s) <= MaxQuote {
		return strconv.Quote(s)
	}
	cut := MaxQuote
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// JSON escapes, inside JSON text, the characters encoding/json leaves as
// they are but a terminal may obey: DEL, the C1 controls and the
// bidirectional formatting characters become \u escapes (encoding/json
// already escapes C0 controls and U+2028/U+2029). Those characters can
// only occur inside strings of valid JSON, so the result decodes to the
// same values. Invalid UTF-8 becomes \ufffd.
func JSON(b []byte) []byte {
	i := 0
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf && c != 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || unsafe(r) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		if c := b[i]; c < utf8.RuneSelf && c != 0x7f {
			out = append(out, c) // JSON's own whitespace and punctuation
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case unsafe(r):
			out = append(out, `\u`...)
			out = append(out, hex4(r)...)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}
