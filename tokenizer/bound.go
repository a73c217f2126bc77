package tokenizer

import "unicode/utf8"

// MaxBytesPerToken bounds the bytes of text one token stands for: text of
// more than n × MaxBytesPerToken() bytes never encodes to n tokens or
// fewer, so a caller can refuse text that cannot fit a context without
// encoding it (a 30 MB message takes BPE seconds and gigabytes). ok is
// false when the tokenizer gives no such bound: a normalizer or
// pre-tokenizer that deletes text, an added token that swallows the
// spaces around it, characters without a token dropped or fused into one.
func (t *Tokenizer) MaxBytesPerToken() (n int, ok bool) {
	grow, ok := shrinkFactor(t.normalizer)
	if !ok || !keepsAll(t.pre) {
		return 0, false
	}
	m := t.model
	allBytes := m.byteFallback
	for _, id := range m.bytes {
		allBytes = allBytes && id >= 0
	}
	if !allBytes && (m.unk < 0 || m.fuseUnk) {
		return 0, false // a character without a token is dropped, or a run of them is one token
	}
	normalized := utf8.UTFMax // the unknown token stands for one character
	for _, p := range m.pieces {
		normalized = max(normalized, len(p))
	}
	raw := 0
	for id, tok := range t.added.byID {
		if tok.LStrip || tok.RStrip {
			return 0, false
		}
		if !tok.Normalized {
			raw = max(raw, len(tok.Content))
			continue
		}
		normalized = max(normalized, len(tok.Content), len(t.added.decodeAs[id]))
	}
	return max(raw, grow*normalized), true
}

// shrinkFactor bounds how many bytes of input one byte of a normalizer's
// output can come from: 1 for one that only adds or replaces with longer
// text, 4 for Unicode normalization (NFKC turns the 4-byte 𝐀 into "A",
// NFC three 3-byte jamo into one syllable); false for one that deletes.
func shrinkFactor(n normalizer) (int, bool) {
	switch n := n.(type) {
	case nil, prependNormalizer:
		return 1, true
	case replaceNormalizer:
		switch {
		case n.from == "" || len(n.to) >= len(n.from):
			return 1, true
		case n.to == "":
			return 0, false
		}
		return (len(n.from) + len(n.to) - 1) / len(n.to), true
	case unicodeNormalizer:
		return utf8.UTFMax, true
	case sequenceNormalizer:
		f := 1
		for _, sub := range n {
			g, ok := shrinkFactor(sub)
			if !ok {
				return 0, false
			}
			f *= g
		}
		return f, true
	}
	return 0, false
}

// keepsAll reports whether a pre-tokenizer keeps every byte of its input
// in some word (a Split that removes its matches does not).
func keepsAll(p preTokenizer) bool {
	switch p := p.(type) {
	case nil:
		return true
	case *splitPreTokenizer:
		return p.behavior != splitRemoved
	case sequencePreTokenizer:
		for _, sub := range p {
			if !keepsAll(sub) {
				return false
			}
		}
		return true
	}
	return false
}
