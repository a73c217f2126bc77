package tools

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Piece is a run of rendered text. Markup pieces are the format's own
// special tokens; everything else (names, keys, punctuation, strings,
// numbers) is Literal: a tokenizer must encode it as plain text, so that a
// description or a tool's output spelling "<|turn>" or <|"|> stays text and
// can neither open a turn nor end a string.
type Piece struct {
	Text    string
	Literal bool
}

// Text is rendered format, as pieces; String gives its bytes.
type Text []Piece

// String joins the pieces.
func (t Text) String() string {
	var b strings.Builder
	for _, p := range t {
		b.WriteString(p.Text)
	}
	return b.String()
}

// MaxDepth bounds how deeply values nest, in what is rendered and in what
// is parsed, so that whatever the renderer writes the parser reads back.
const MaxDepth = 64

// MaxNameBytes bounds a function's name.
const MaxNameBytes = 128

// ValidName reports whether name can name a function in the format:
// 1…MaxNameBytes letters, digits, '_', '-' and '.' (MCP's tool-name
// characters). The parser reads a name up to the '{' that follows it.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameBytes {
		return false
	}
	for _, r := range name {
		if !isNameRune(r) {
			return false
		}
	}
	return true
}

func isNameRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isBareKey reports whether a key is written without delimiters: the
// template writes every key bare, which parses back only for these.
func isBareKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !isNameRune(r) {
			return false
		}
	}
	return true
}

// sortedKeys orders keys as the chat template's dictsort does: without
// regard to case, then by bytes so that the order is total.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(strings.Compare(strings.ToLower(a), strings.ToLower(b)), strings.Compare(a, b))
	})
	return keys
}

// writer collects pieces; the first error sticks.
type writer struct {
	out Text
	err error
}

func (w *writer) add(s string, literal bool) {
	if s == "" {
		return
	}
	if n := len(w.out); n > 0 && w.out[n-1].Literal == literal {
		w.out[n-1].Text += s
		return
	}
	w.out = append(w.out, Piece{Text: s, Literal: literal})
}

func (w *writer) mark(s string) { w.add(s, false) }
func (w *writer) lit(s string)  { w.add(s, true) }

// str writes a delimited string. The format has no escapes: a string
// that holds the delimiter itself is written as a JSON string, which the
// parser reads too.
func (w *writer) str(s string) {
	if strings.Contains(s, Quote) {
		if !utf8.ValidString(s) {
			w.fail("tools: a string holding %s and bytes that are not UTF-8 cannot be written", Quote)
			return
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s) // a valid string always encodes
		w.lit(strings.TrimSuffix(b.String(), "\n"))
		return
	}
	w.mark(Quote)
	w.lit(s)
	w.mark(Quote)
}

// block writes open, kind:NAME{, what body writes, } and close.
func (w *writer) block(open, kind, name, close string, body func()) {
	w.mark(open)
	w.lit(kind + ":")
	w.name(kind, name)
	w.lit("{")
	body()
	w.lit("}")
	w.mark(close)
}

// result is what was written, or the first error.
func (w *writer) result() (Text, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.out, nil
}

func (w *writer) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

// name writes a function's name after checking it.
func (w *writer) name(what, name string) {
	if !ValidName(name) {
		w.fail("tools: %s name %q: want 1…%d letters, digits, '_', '-' or '.'", what, name, MaxNameBytes)
	}
	w.lit(name)
}

// key writes an object's key: bare where it parses back, else delimited
// (always delimited where the template quotes keys, in declarations).
func (w *writer) key(k string, quoted bool) {
	if quoted || !isBareKey(k) {
		w.str(k)
	} else {
		w.lit(k)
	}
	w.lit(":")
}

// value writes v as the template's format_argument does. Values are what
// encoding/json decodes (nil, bool, string, float64 or json.Number,
// []any, map[string]any), plus Go integers and []string.
//
// depth counts the arrays and objects v is inside; v itself may be one
// only while that makes at most MaxDepth.
func (w *writer) value(path string, v any, quotedKeys bool, depth int) {
	switch v.(type) {
	case []string, []any, map[string]any:
		if depth >= MaxDepth {
			w.fail("tools: %s: nested deeper than %d levels", path, MaxDepth)
			return
		}
	}
	switch v := v.(type) {
	case nil:
		w.lit("null")
	case bool:
		w.lit(strconv.FormatBool(v))
	case string:
		w.str(v)
	case json.Number:
		if !validNumber(string(v)) {
			w.fail("tools: %s: %q is not a number", path, string(v))
		}
		w.lit(string(v))
	case float64:
		w.float(path, v)
	case float32:
		w.float(path, float64(v))
	case int:
		w.lit(strconv.FormatInt(int64(v), 10))
	case int32:
		w.lit(strconv.FormatInt(int64(v), 10))
	case int64:
		w.lit(strconv.FormatInt(v, 10))
	case uint:
		w.lit(strconv.FormatUint(uint64(v), 10))
	case uint32:
		w.lit(strconv.FormatUint(uint64(v), 10))
	case uint64:
		w.lit(strconv.FormatUint(v, 10))
	case []string:
		w.lit("[")
		for i, s := range v {
			if i > 0 {
				w.lit(",")
			}
			w.str(s)
		}
		w.lit("]")
	case []any:
		w.lit("[")
		for i, e := range v {
			if i > 0 {
				w.lit(",")
			}
			w.value(fmt.Sprintf("%s[%d]", path, i), e, quotedKeys, depth+1)
		}
		w.lit("]")
	case map[string]any:
		w.lit("{")
		w.members(path, v, quotedKeys, depth+1)
		w.lit("}")
	default:
		w.fail("tools: %s: cannot write a value of type %T", path, v)
	}
}

// members writes an object's members in sorted order.
func (w *writer) members(path string, m map[string]any, quotedKeys bool, depth int) {
	for i, k := range sortedKeys(m) {
		if i > 0 {
			w.lit(",")
		}
		w.key(k, quotedKeys)
		w.value(path+"."+k, m[k], quotedKeys, depth)
	}
}

// float writes a number as JSON would, without an exponent in the usual
// range: the model writes 0.5 and 1200, not 5e-01.
func (w *writer) float(path string, f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.fail("tools: %s: %v is not a number the format can hold", path, f)
		return
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		w.lit(strconv.FormatFloat(f, 'e', -1, 64))
		return
	}
	w.lit(strconv.FormatFloat(f, 'f', -1, 64))
}

// validNumber reports whether s is a JSON number.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
