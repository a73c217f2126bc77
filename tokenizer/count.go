package tokenizer

import (
	"hash/maphash"
	"sync"
	"unicode/utf8"
)

// Counter counts the tokens of text as EncodeLiteral would, cheaply enough
// to run on every key of a long input: the text is cut where no token can
// span the cut, and the pieces' counts are kept, so an edit re-encodes only
// the piece it touched. A cut between runes a and b is safe when both have
// tokens of their own and no token of the vocabulary (nor a non-special
// added token, nor a normalizer's pattern) holds a followed by b: then no
// BPE merge can cross it, and encoding the pieces apart gives the same ids
// as the whole. Tokenizers whose pipeline is not local (a prepending or
// Unicode normalizer, merges ignored, added tokens that
// strip or need word boundaries) are never cut: Count is then Encode's
// length, exact but not incremental.
type Counter struct {
	t      *Tokenizer
	cuts   bool
	unsafe map[[2]rune]bool
	repl   map[rune]rune // the normalizer's one-rune replacements
	// ASCII runes normalized, and whether that is a token of its own:
	// the scan's common case without a map lookup.
	asciiNorm [utf8.RuneSelf]rune
	asciiOwn  [utf8.RuneSelf]bool
	seed      maphash.Seed

	mu         sync.Mutex
	pieces     map[uint64]int // a piece's hash → its token count
	prev       map[uint64]int
	Encoded    int // pieces encoded in all (the cost of Count calls)
	lastPieces int
}

// minPiece is the least bytes between cuts: short pieces would make the
// table, not the encoding, the work.
const minPiece = 16

// chosen picks about one position in 32 by the four bytes before it.
func chosen(b string) bool {
	h := (uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24) * 2654435761
	return h>>27 == 0
}

// NewCounter prepares a counter (it reads the vocabulary once).
func (t *Tokenizer) NewCounter() *Counter {
	c := &Counter{t: t, seed: maphash.MakeSeed(), pieces: map[uint64]int{}}
	c.cuts = c.local()
	if !c.cuts {
		return c
	}
	for r := range rune(utf8.RuneSelf) {
		c.asciiNorm[r] = c.norm(r)
		c.asciiOwn[r] = c.own(c.asciiNorm[r])
	}
	c.unsafe = map[[2]rune]bool{}
	addPairs := func(s string) {
		var prev rune = -1
		for _, r := range s {
			if prev >= 0 {
				c.unsafe[[2]rune{prev, r}] = true
			}
			prev = r
		}
	}
	for _, p := range t.model.pieces {
		addPairs(p)
	}
	for _, a := range t.added.byID {
		if !a.Special {
			addPairs(a.Content)
			if t.normalizer != nil {
				addPairs(t.normalizer.normalize(a.Content))
			}
		}
	}
	return c
}

// local reports whether the pipeline lets text be cut (see Counter).
func (c *Counter) local() bool {
	t := c.t
	m := t.model
	if m == nil || m.ignoreMerges { // fused unknowns never cross a cut: both runes there are tokens
		return false
	}
	for _, a := range t.added.byID {
		if !a.Special && (a.SingleWord || a.LStrip || a.RStrip) {
			return false
		}
	}
	c.repl = map[rune]rune{}
	var walk func(n normalizer) bool
	walk = func(n normalizer) bool {
		switch n := n.(type) {
		case nil:
			return true
		case sequenceNormalizer:
			for _, x := range n {
				if !walk(x) {
					return false
				}
			}
			return true
		case replaceNormalizer:
			if utf8.RuneCountInString(n.from) != 1 || utf8.RuneCountInString(n.to) != 1 {
				return false
			}
			f, _ := utf8.DecodeRuneInString(n.from)
			to, _ := utf8.DecodeRuneInString(n.to)
			for k, v := range c.repl { // a later replacement applies to earlier results
				if v == f {
					c.repl[k] = to
				}
			}
			if _, ok := c.repl[f]; !ok {
				c.repl[f] = to
			}
			return true
		}
		return false
	}
	if !walk(t.normalizer) {
		return false
	}
	switch p := t.pre.(type) {
	case nil:
	case *splitPreTokenizer:
		if utf8.RuneCountInString(p.pattern) > 1 {
			return false
		}
	default:
		return false
	}
	return true
}

// norm is r as the normalizer leaves it.
func (c *Counter) norm(r rune) rune {
	if to, ok := c.repl[r]; ok {
		return to
	}
	return r
}

// own reports whether r is a token of its own.
func (c *Counter) own(r rune) bool {
	m := c.t.model
	if r < utf8.RuneSelf {
		return m.ascii[r] >= 0
	}
	_, ok := m.runes[r]
	return ok
}

// Count is len(EncodeLiteral(text)).
func (c *Counter) Count(text string) int {
	if !c.cuts {
		c.mu.Lock()
		c.Encoded++
		c.mu.Unlock()
		return len(c.t.EncodeLiteral(text))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prev, c.pieces = c.pieces, make(map[uint64]int, len(c.pieces)+4)
	total, start, n := 0, 0, 0
	var prev rune = -1
	prevOwn := false
	for i, r := range text {
		var own bool
		if r < utf8.RuneSelf {
			own = c.asciiOwn[r]
		} else {
			own = c.own(c.norm(r))
		}
		// A cut before r at a safe pair chosen by the few bytes before it
		// alone (after a line's end, or one in about 32 by their hash), so
		// an edit moves no cut but those within a few bytes of it.
		if i-start >= minPiece && own && prevOwn && (prev == '\n' || chosen(text[i-4:i])) &&
			!c.unsafe[[2]rune{c.norm(prev), c.norm(r)}] {
			total += c.piece(text[start:i])
			start = i
			n++
		}
		prev, prevOwn = r, own
	}
	total += c.piece(text[start:])
	c.lastPieces = n + 1
	c.prev = nil
	return total
}

// piece counts one piece, from the last call's table when it was there.
func (c *Counter) piece(s string) int {
	h := maphash.String(c.seed, s)
	if n, ok := c.pieces[h]; ok {
		return n
	}
	n, ok := c.prev[h]
	if !ok {
		n = len(c.t.EncodeLiteral(s))
		c.Encoded++
	}
	c.pieces[h] = n
	return n
}

// Pieces is how many pieces the last Count cut its text into (1: none).
func (c *Counter) Pieces() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastPieces
}
