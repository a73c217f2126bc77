package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/orchard-llm/orchard/termsafe"
)

// normalizer rewrites text before it is split into words. Added tokens
// with normalized=false are matched before it runs, the rest after.
type normalizer interface {
	normalize(s string) string
}

// component is the union of the fields the supported normalizers,
// pre-tokenizers and decoders use in tokenizer.json.
type component struct {
	Type          string            `json:"type"`
	Pattern       *pattern          `json:"pattern"`
	Content       *string           `json:"content"`
	Prepend       *string           `json:"prepend"`
	Behavior      string            `json:"behavior"`
	Invert        bool              `json:"invert"`
	Start         int               `json:"start"`
	Stop          int               `json:"stop"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	Decoders      []json.RawMessage `json:"decoders"`
}

// pattern is a Replace or Split pattern. Only literal strings are
// implemented: Rust uses Oniguruma for Regex, whose semantics Go's regexp
// does not share, so a Regex is a load error rather than a guess.
type pattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

func (p *pattern) literal(where string) (string, error) {
	switch {
	case p == nil:
		return "", fmt.Errorf("%s: missing pattern", where)
	case p.Regex != nil:
		return "", fmt.Errorf("%s: Regex pattern %s is not implemented (only String patterns)", where, termsafe.Quote(*p.Regex))
	case p.String == nil:
		return "", fmt.Errorf("%s: pattern has neither String nor Regex", where)
	}
	return *p.String, nil
}

func parseComponent(raw json.RawMessage, where string) (*component, error) {
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &c, nil
}

// parseSequence parses the members of a Sequence component with parse,
// dropping null members; where names the position in errors.
func parseSequence[T comparable](subs []json.RawMessage, where string, parse func(json.RawMessage, string) (T, error)) ([]T, error) {
	var seq []T
	var zero T
	for i, sub := range subs {
		x, err := parse(sub, fmt.Sprintf("%s[%d]", where, i))
		if err != nil {
			return nil, err
		}
		if x != zero {
			seq = append(seq, x)
		}
	}
	return seq, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// parseNormalizer builds the normalizer a tokenizer.json declares; nil
// means none.
func parseNormalizer(raw json.RawMessage, where string) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	c, err := parseComponent(raw, where)
	if err != nil {
		return nil, err
	}
	where = fmt.Sprintf("%s %s", where, c.Type)
	switch c.Type {
	case "Sequence":
		seq, err := parseSequence(c.Normalizers, where, parseNormalizer)
		return sequenceNormalizer(seq), err
	case "Replace":
		from, err := c.Pattern.literal(where)
		if err != nil {
			return nil, err
		}
		if c.Content == nil {
			return nil, fmt.Errorf("%s: missing content", where)
		}
		return replaceNormalizer{from: from, to: *c.Content}, nil
	case "Prepend":
		if c.Prepend == nil {
			return nil, fmt.Errorf("%s: missing prepend", where)
		}
		return prependNormalizer(*c.Prepend), nil
	case "NFC":
		return unicodeNormalizer{norm.NFC}, nil
	case "NFKC":
		return unicodeNormalizer{norm.NFKC}, nil
	case "NFD":
		return unicodeNormalizer{norm.NFD}, nil
	case "NFKD":
		return unicodeNormalizer{norm.NFKD}, nil
	}
	return nil, fmt.Errorf("normalizer %s (%s) is not implemented", termsafe.Quote(c.Type), where)
}

type sequenceNormalizer []normalizer

func (seq sequenceNormalizer) normalize(s string) string {
	for _, n := range seq {
		s = n.normalize(s)
	}
	return s
}

// replaceNormalizer replaces every non-overlapping occurrence, left to
// right. An empty pattern matches nothing, as in Rust.
type replaceNormalizer struct{ from, to string }

func (r replaceNormalizer) normalize(s string) string {
	if r.from == "" {
		return s
	}
	return strings.ReplaceAll(s, r.from, r.to)
}

// prependNormalizer adds its text to every non-empty piece.
type prependNormalizer string

func (p prependNormalizer) normalize(s string) string {
	if s == "" {
		return s
	}
	return string(p) + s
}

type unicodeNormalizer struct{ form norm.Form }

func (u unicodeNormalizer) normalize(s string) string { return u.form.String(s) }
