package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/orchard-llm/orchard/termsafe"
)

// decoder is one step of the decoder chain. Like Rust's decode_chain it
// maps a list of token strings to a new list; the results are joined at the
// end.
type decoder interface {
	decodeChain(tokens []string) []string
}

func parseDecoder(raw json.RawMessage, where string) (decoder, error) {
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
		seq, err := parseSequence(c.Decoders, where, parseDecoder)
		return sequenceDecoder(seq), err
	case "Replace":
		from, err := c.Pattern.literal(where)
		if err != nil {
			return nil, err
		}
		if c.Content == nil {
			return nil, fmt.Errorf("%s: missing content", where)
		}
		return replaceDecoder{from: from, to: *c.Content}, nil
	case "ByteFallback":
		return byteFallbackDecoder{}, nil
	case "Fuse":
		return fuseDecoder{}, nil
	case "Strip":
		if c.Content == nil || utf8.RuneCountInString(*c.Content) != 1 {
			return nil, fmt.Errorf("%s: content must be one character", where)
		}
		if c.Start < 0 || c.Stop < 0 {
			return nil, fmt.Errorf("%s: negative start or stop", where)
		}
		r, _ := utf8.DecodeRuneInString(*c.Content)
		return stripDecoder{content: r, start: c.Start, stop: c.Stop}, nil
	}
	return nil, fmt.Errorf("decoder %s (%s) is not implemented", termsafe.Quote(c.Type), where)
}

type sequenceDecoder []decoder

func (seq sequenceDecoder) decodeChain(tokens []string) []string {
	for _, d := range seq {
		tokens = d.decodeChain(tokens)
	}
	return tokens
}

// replaceDecoder replaces within each token separately.
type replaceDecoder struct{ from, to string }

func (r replaceDecoder) decodeChain(tokens []string) []string {
	if r.from == "" {
		return tokens
	}
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(t, r.from, r.to)
	}
	return tokens
}

// byteFallbackDecoder turns runs of "<0xXX>" tokens back into text. A run
// that is not valid UTF-8 becomes one U+FFFD per byte, as in Rust.
type byteFallbackDecoder struct{}

func (byteFallbackDecoder) decodeChain(tokens []string) []string {
	out := tokens[:0:0]
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, t := range tokens {
		if b, ok := byteToken(t); ok {
			run = append(run, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

type fuseDecoder struct{}

func (fuseDecoder) decodeChain(tokens []string) []string {
	if len(tokens) <= 1 {
		return tokens
	}
	return []string{strings.Join(tokens, "")}
}

// stripDecoder removes up to start leading and stop trailing copies of
// content from each token.
type stripDecoder struct {
	content     rune
	start, stop int
}

func (d stripDecoder) decodeChain(tokens []string) []string {
	for i, t := range tokens {
		for n := 0; n < d.start; n++ {
			r, size := utf8.DecodeRuneInString(t)
			if size == 0 || r != d.content {
				break
			}
			t = t[size:]
		}
		for n := 0; n < d.stop; n++ {
			r, size := utf8.DecodeLastRuneInString(t)
			if size == 0 || r != d.content {
				break
			}
			t = t[:len(t)-size]
		}
		tokens[i] = t
	}
	return tokens
}
