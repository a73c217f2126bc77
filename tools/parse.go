package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SyntaxError says where a call's text stops making sense, and why.
type SyntaxError struct {
	Offset int // byte offset in the call's body (the text after <|tool_call>)
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("tools: malformed call at byte %d: %s", e.Offset, e.Msg)
}

// ParseCall reads one call's body, the text between <|tool_call> and
// <tool_call|>: call:NAME{key:value,…}. It is a recursive-descent reader
// of the format, so braces, brackets and commas inside strings never end
// anything. Keys are bare, <|"|>-delimited or JSON-quoted; values are
// objects, arrays, <|"|>-delimited strings (any text up to the next <|"|>:
// quotes, braces and newlines included), JSON strings, numbers (kept as
// written, json.Number), true, false and null. Whitespace between items
// and a trailing comma are allowed. A repeated key, nesting past MaxDepth
// or anything else is a *SyntaxError; nothing panics.
func ParseCall(body string) (Call, error) {
	p := parser{s: body}
	p.ws()
	if !strings.HasPrefix(p.s[p.i:], "call:") {
		return Call{}, p.fail("want call:NAME{…}")
	}
	p.i += len("call:")
	p.ws()
	start := p.i
	name := p.name()
	if name == "" {
		return Call{}, p.fail("want the function's name after call:")
	}
	if len(name) > MaxNameBytes {
		return Call{}, &SyntaxError{Offset: start, Msg: fmt.Sprintf("the name is longer than %d bytes", MaxNameBytes)}
	}
	p.ws()
	if !p.at('{') {
		return Call{}, p.fail("want { after the name " + quoteShort(name))
	}
	args, err := p.object(0)
	if err != nil {
		return Call{}, err
	}
	p.ws()
	if p.i < len(p.s) {
		return Call{}, p.fail("unexpected text after the call's closing }")
	}
	return Call{Name: name, Args: args}, nil
}

// parser reads s from i.
type parser struct {
	s string
	i int
}

func (p *parser) fail(msg string) error { return &SyntaxError{Offset: p.i, Msg: msg} }

func (p *parser) at(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

func (p *parser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object reads {…} at p.i; outer counts the arrays and objects around it.
func (p *parser) object(outer int) (map[string]any, error) {
	if outer+1 > MaxDepth {
		return nil, p.fail(fmt.Sprintf("nested deeper than %d levels", MaxDepth))
	}
	p.i++ // {
	m := map[string]any{}
	for {
		p.ws()
		if p.at('}') {
			p.i++
			return m, nil
		}
		keyAt := p.i
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, &SyntaxError{Offset: keyAt, Msg: "the key " + quoteShort(k) + " is given twice"}
		}
		p.ws()
		if !p.at(':') {
			return nil, p.fail("want : after the key " + quoteShort(k))
		}
		p.i++
		p.ws()
		v, err := p.value(outer + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		if err := p.separator('}', "object", "after the value of "+quoteShort(k)); err != nil {
			return nil, err
		}
	}
}

// separator reads what follows an item: a comma (skipped) or the closing
// bracket (left for the loop to read).
func (p *parser) separator(close byte, what, where string) error {
	p.ws()
	switch {
	case p.at(','):
		p.i++
	case p.at(close):
	case p.i >= len(p.s):
		return p.fail(fmt.Sprintf("the %s is not closed with %c", what, close))
	default:
		return p.fail(fmt.Sprintf("want , or %c %s", close, where))
	}
	return nil
}

func (p *parser) array(outer int) ([]any, error) {
	if outer+1 > MaxDepth {
		return nil, p.fail(fmt.Sprintf("nested deeper than %d levels", MaxDepth))
	}
	p.i++ // [
	a := []any{}
	for {
		p.ws()
		if p.at(']') {
			p.i++
			return a, nil
		}
		v, err := p.value(outer + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if err := p.separator(']', "array", "in the array"); err != nil {
			return nil, err
		}
	}
}

func (p *parser) key() (string, error) {
	switch {
	case strings.HasPrefix(p.s[p.i:], Quote):
		return p.delimited()
	case p.at('"'):
		return p.jsonString()
	}
	k := p.name()
	if k == "" {
		if p.i >= len(p.s) {
			return "", p.fail("the object is not closed with }")
		}
		return "", p.fail("want a key")
	}
	return k, nil
}

// name reads a run of name characters (a function's name, a bare key).
func (p *parser) name() string {
	start := p.i
	for p.i < len(p.s) {
		r, n := utf8.DecodeRuneInString(p.s[p.i:])
		if !isNameRune(r) {
			break
		}
		p.i += n
	}
	return p.s[start:p.i]
}

// value reads one value; outer counts the arrays and objects around it.
func (p *parser) value(outer int) (any, error) {
	if p.i >= len(p.s) {
		return nil, p.fail("want a value, the text ends")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(outer)
	case c == '[':
		return p.array(outer)
	case c == '"':
		return p.jsonString()
	case c == '-' || isDigit(c):
		return p.number()
	case strings.HasPrefix(p.s[p.i:], Quote):
		return p.delimited()
	}
	for _, w := range []struct {
		word string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if rest, ok := strings.CutPrefix(p.s[p.i:], w.word); ok {
			if r, _ := utf8.DecodeRuneInString(rest); rest == "" || !isNameRune(r) {
				p.i += len(w.word)
				return w.v, nil
			}
		}
	}
	return nil, p.fail("want a value: an object, an array, a <|\"|>string<|\"|>, a number, true, false or null")
}

// delimited reads <|"|>…<|"|>: everything up to the next delimiter.
func (p *parser) delimited() (string, error) {
	start := p.i
	p.i += len(Quote)
	end := strings.Index(p.s[p.i:], Quote)
	if end < 0 {
		return "", &SyntaxError{Offset: start, Msg: "the string is not closed with <|\"|>"}
	}
	s := p.s[p.i : p.i+end]
	p.i += end + len(Quote)
	return s, nil
}

// jsonString reads a JSON string, escapes and all.
func (p *parser) jsonString() (string, error) {
	start := p.i
	i := p.i + 1
	for i < len(p.s) {
		switch p.s[i] {
		case '\\':
			i += 2
			continue
		case '"':
			var s string
			if err := json.Unmarshal([]byte(p.s[start:i+1]), &s); err != nil {
				return "", &SyntaxError{Offset: start, Msg: "a \"quoted\" string that is not valid JSON"}
			}
			p.i = i + 1
			return s, nil
		}
		i++
	}
	return "", &SyntaxError{Offset: start, Msg: "the string is not closed with \""}
}

func (p *parser) number() (any, error) {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(isDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		p.i++
	}
	lit := p.s[start:p.i]
	if !validNumber(lit) {
		return nil, &SyntaxError{Offset: start, Msg: quoteShort(lit) + " is not a number"}
	}
	return json.Number(lit), nil
}

// quoteShort quotes s for a message, cut to 40 bytes.
func quoteShort(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}
