package tokenizer

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a minimal JSON reader for the two huge members of a
// tokenizer.json, model.vocab and model.merges. encoding/json needs about
// 0.8 s and 150 MB for Gemma's 33 MB file; reading the members directly,
// with token text kept in one arena, takes a fraction of both.
type scanner struct {
	data  []byte
	pos   int
	depth int // arrays and objects open around pos
}

var errUnexpectedEnd = errors.New("unexpected end of JSON")

// MaxDepth is how deeply arrays and objects may nest in a tokenizer.json,
// as serde_json (which the Rust library reads it with) allows. A real one
// nests six levels; the limit keeps a hostile file from recursing the
// reader (here or in encoding/json, 10,000 levels) into a stack overflow
// or quadratic work.
const MaxDepth = 128

// ErrTooDeep is wrapped when a document nests deeper than MaxDepth.
var ErrTooDeep = errors.New("nested deeper than the limit")

// enter opens an array or object, refusing one past MaxDepth.
func (s *scanner) enter() error {
	if s.depth >= MaxDepth {
		return fmt.Errorf("offset %d: arrays and objects %w of %d levels", s.pos, ErrTooDeep, MaxDepth)
	}
	s.depth++
	return nil
}

func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", s.pos, fmt.Sprintf(format, args...))
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte without consuming it, or 0 at the end.
func (s *scanner) peek() byte {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		if s.pos >= len(s.data) {
			return errUnexpectedEnd
		}
		return s.errorf("expected %q, found %q", c, s.data[s.pos])
	}
	s.pos++
	return nil
}

// str reads a JSON string and appends its decoded bytes to dst.
func (s *scanner) str(dst []byte) ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return dst, err
	}
	for {
		i := quoteOrEscape(s.data[s.pos:])
		if i < 0 {
			return dst, errUnexpectedEnd
		}
		dst = append(dst, s.data[s.pos:s.pos+i]...)
		s.pos += i
		if s.data[s.pos] == '"' {
			s.pos++
			return dst, nil
		}
		// An escape sequence.
		if s.pos+1 >= len(s.data) {
			return dst, errUnexpectedEnd
		}
		c := s.data[s.pos+1]
		s.pos += 2
		switch c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, err := s.hex4()
			if err != nil {
				return dst, err
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					save := s.pos
					s.pos += 2
					if r2, err = s.hex4(); err != nil {
						return dst, err
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						r = d
					} else {
						s.pos = save
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, s.errorf("invalid escape %q", "\\"+string(rune(c)))
		}
	}
}

// quoteOrEscape returns the index of the first '"' or '\\' in b, or -1.
// Token strings are short, so a plain loop beats bytes.IndexAny's setup.
func quoteOrEscape(b []byte) int {
	for i, c := range b {
		if c == '"' || c == '\\' {
			return i
		}
	}
	return -1
}

// rawString reads a JSON string. Without escapes it returns the offset of
// its contents in the input, which it does not copy; otherwise it decodes
// into *buf and returns off = -1.
func (s *scanner) rawString(buf *[]byte) (b []byte, off int, err error) {
	if err := s.expect('"'); err != nil {
		return nil, 0, err
	}
	i := quoteOrEscape(s.data[s.pos:])
	if i < 0 {
		return nil, 0, errUnexpectedEnd
	}
	if s.data[s.pos+i] == '"' {
		off = s.pos
		s.pos += i + 1
		return s.data[off : off+i], off, nil
	}
	s.pos-- // back to the opening quote
	*buf, err = s.str((*buf)[:0])
	return *buf, -1, err
}

func (s *scanner) hex4() (rune, error) {
	if s.pos+4 > len(s.data) {
		return 0, errUnexpectedEnd
	}
	v, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 16)
	if err != nil {
		return 0, s.errorf("invalid \\u escape")
	}
	s.pos += 4
	return rune(v), nil
}

// integer reads a non-negative JSON integer.
func (s *scanner) integer() (int, error) {
	s.skipSpace()
	start := s.pos
	n := 0
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		n = n*10 + int(s.data[s.pos]-'0')
		if n >= 1<<31 { // ids are int32
			return 0, s.errorf("integer out of range")
		}
		s.pos++
	}
	if s.pos == start {
		return 0, s.errorf("expected a non-negative integer")
	}
	if s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '.', 'e', 'E':
			return 0, s.errorf("expected an integer")
		}
	}
	return n, nil
}

// skip consumes one JSON value of any kind without decoding it.
func (s *scanner) skip() error {
	switch c := s.peek(); c {
	case '"':
		s.pos++
		for {
			i := quoteOrEscape(s.data[s.pos:])
			if i < 0 {
				return errUnexpectedEnd
			}
			s.pos += i + 1
			if s.data[s.pos-1] == '"' {
				return nil
			}
			if s.pos >= len(s.data) {
				return errUnexpectedEnd // a backslash as the last byte
			}
			s.pos++ // the escaped byte
		}
	case '{', '[':
		close := byte('}')
		if c == '[' {
			close = ']'
		}
		if err := s.enter(); err != nil {
			return err
		}
		defer func() { s.depth-- }()
		s.pos++
		if s.peek() == close {
			s.pos++
			return nil
		}
		for {
			if c == '{' {
				if err := s.skip(); err != nil { // key
					return err
				}
				if err := s.expect(':'); err != nil {
					return err
				}
			}
			if err := s.skip(); err != nil {
				return err
			}
			switch s.peek() {
			case ',':
				s.pos++
			case close:
				s.pos++
				return nil
			case 0:
				return errUnexpectedEnd
			default:
				return s.errorf("expected ',' or %q", close)
			}
		}
	case 0:
		return errUnexpectedEnd
	default:
		// A number, true, false or null: run to the next delimiter.
		start := s.pos
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if s.pos == start {
					return s.errorf("unexpected %q", s.data[s.pos])
				}
				return nil
			}
			s.pos++
		}
		return nil
	}
}

// object calls member for each key of a JSON object; member must consume
// the value.
func (s *scanner) object(member func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	var key []byte
	for {
		var err error
		if key, err = s.str(key[:0]); err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		case 0:
			return errUnexpectedEnd
		default:
			return s.errorf("expected ',' or '}'")
		}
	}
}

// array calls elem for each element of a JSON array; elem must consume it.
func (s *scanner) array(elem func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer func() { s.depth-- }()
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		case 0:
			return errUnexpectedEnd
		default:
			return s.errorf("expected ',' or ']'")
		}
	}
}
