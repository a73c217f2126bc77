package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

// preTokenizer cuts normalized text into words that BPE encodes
// independently. It appends the words to dst.
type preTokenizer interface {
	split(s string, dst []string) []string
}

func parsePreTokenizer(raw json.RawMessage, where string) (preTokenizer, error) {
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
		seq, err := parseSequence(c.PreTokenizers, where, parsePreTokenizer)
		return sequencePreTokenizer(seq), err
	case "Split":
		lit, err := c.Pattern.literal(where)
		if err != nil {
			return nil, err
		}
		b, ok := splitBehaviors[c.Behavior]
		if !ok {
			return nil, fmt.Errorf("%s: behavior %s is not implemented", where, termsafe.Quote(c.Behavior))
		}
		return &splitPreTokenizer{pattern: lit, behavior: b, invert: c.Invert}, nil
	}
	return nil, fmt.Errorf("pre-tokenizer %s (%s) is not implemented", termsafe.Quote(c.Type), where)
}

type sequencePreTokenizer []preTokenizer

func (seq sequencePreTokenizer) split(s string, dst []string) []string {
	words := []string{s}
	for _, p := range seq {
		var next []string
		for _, w := range words {
			next = p.split(w, next)
		}
		words = next
	}
	return append(dst, words...)
}

type splitBehavior int

const (
	splitRemoved splitBehavior = iota
	splitIsolated
	splitMergedWithPrevious
	splitMergedWithNext
	splitContiguous
)

var splitBehaviors = map[string]splitBehavior{
	"Removed":            splitRemoved,
	"Isolated":           splitIsolated,
	"MergedWithPrevious": splitMergedWithPrevious,
	"MergedWithNext":     splitMergedWithNext,
	"Contiguous":         splitContiguous,
}

// splitPreTokenizer splits on a literal string the way Rust's Split does.
type splitPreTokenizer struct {
	pattern  string
	behavior splitBehavior
	invert   bool
}

type span struct {
	start, end int
	match      bool
}

func (p *splitPreTokenizer) split(s string, dst []string) []string {
	if s == "" {
		return dst
	}
	// Fast path: the common case (Gemma's split on " " after spaces became
	// ▁) has no match and yields the input unchanged.
	if p.pattern == "" || !strings.Contains(s, p.pattern) {
		if p.invert && p.behavior == splitRemoved {
			return dst
		}
		return append(dst, s)
	}
	var spans []span
	prev := 0
	for prev < len(s) {
		i := strings.Index(s[prev:], p.pattern)
		if i < 0 {
			break
		}
		if i > 0 {
			spans = append(spans, span{prev, prev + i, p.invert})
		}
		spans = append(spans, span{prev + i, prev + i + len(p.pattern), !p.invert})
		prev += i + len(p.pattern)
	}
	if prev < len(s) {
		spans = append(spans, span{prev, len(s), p.invert})
	}

	var out []span // match now means "remove"
	switch p.behavior {
	case splitIsolated:
		for _, sp := range spans {
			out = append(out, span{sp.start, sp.end, false})
		}
	case splitRemoved:
		out = spans
	case splitContiguous:
		prevMatch := false
		for _, sp := range spans {
			if sp.match == prevMatch && len(out) > 0 {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
	case splitMergedWithPrevious:
		prevMatch := false
		for _, sp := range spans {
			if sp.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = sp.end
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
	case splitMergedWithNext:
		prevMatch := false
		for i := len(spans) - 1; i >= 0; i-- {
			sp := spans[i]
			if sp.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = sp.start
			} else {
				out = append(out, span{sp.start, sp.end, false})
			}
			prevMatch = sp.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	for _, sp := range out {
		if !sp.match && sp.end > sp.start {
			dst = append(dst, s[sp.start:sp.end])
		}
	}
	return dst
}
