package tokenizer

import "unicode/utf8"

// pieces is the streaming fast path's table: for decoder chains made of
// per-token Replace steps, a ByteFallback, Fuse and a leading-only Strip
// (Gemma's and most SentencePiece files), a token that follows text
// decodes to its own fixed piece, whatever its neighbours. A Stream then
// emits that piece without decoding a window (no work proportional to the
// window, no allocation).
type pieces struct {
	text      []string // id → its decoded piece; valid where ok[id]
	ok        []bool
	stripRune rune // the leading Strip's content and count (0: none)
	stripN    int
}

// newPieces builds the table, or returns nil when the chain's shape does
// not allow it (a decoder whose output for a token depends on others).
func newPieces(t *Tokenizer) *pieces {
	var chain []decoder
	switch d := t.decoder.(type) {
	case sequenceDecoder:
		chain = d
	case nil:
		return nil
	default:
		chain = []decoder{d}
	}
	p := &pieces{}
	var replaces []replaceDecoder
	fused := false
	for _, d := range chain {
		switch d := d.(type) {
		case replaceDecoder:
			if fused {
				return nil
			}
			replaces = append(replaces, d)
		case byteFallbackDecoder:
			if fused {
				return nil
			}
		case fuseDecoder:
			fused = true
		case stripDecoder:
			if !fused || d.stop != 0 || p.stripN != 0 {
				return nil
			}
			p.stripRune, p.stripN = d.content, d.start
		default:
			return nil
		}
	}
	if !fused {
		return nil
	}
	p.text, p.ok = make([]string, len(t.idText)), make([]bool, len(t.idText))
	for id, s := range t.idText {
		if t.idKind[id] == kindNone {
			continue
		}
		if _, isByte := byteToken(s); isByte {
			continue // byte runs decode together
		}
		for _, r := range replaces {
			s = r.decodeChain([]string{s})[0]
		}
		p.text[id], p.ok[id] = s, true
	}
	return p
}

// piece returns id's fixed piece, if it has one.
func (p *pieces) piece(id int) (string, bool) {
	if p == nil || id < 0 || id >= len(p.ok) || !p.ok[id] {
		return "", false
	}
	return p.text[id], true
}

// survivesStrip reports whether s keeps some text after the leading
// Strip: then a following piece is never stripped.
func (p *pieces) survivesStrip(s string) bool {
	for n := 0; n < p.stripN; n++ {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || r != p.stripRune {
			break
		}
		s = s[size:]
	}
	return s != ""
}
