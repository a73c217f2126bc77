package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// countText is about n bytes of the conformance corpus.
func countText(t testing.TB, n int) string {
	var b strings.Builder
	for b.Len() < n {
		for _, s := range corpusTexts(t, 0) {
			b.WriteString(s)
			b.WriteString("\n")
			if b.Len() >= n {
				break
			}
		}
	}
	return b.String()
}

// TestCounterMatchesEncode: over random edits of a 50 KB text, Count is
// always EncodeLiteral's length, and a key typed at the end re-encodes
// a piece or two, not the text.
func TestCounterMatchesEncode(t *testing.T) {
	toks := map[string]func(testing.TB) *Tokenizer{
		"synth": func(tb testing.TB) *Tokenizer { return synthTokenizer(tb, 4096) },
		"gemma": loadGemma,
	}
	for name, load := range toks {
		t.Run(name, func(t *testing.T) {
			tok := load(t)
			c := tok.NewCounter()
			text := countText(t, 50_000)
			if got, want := c.Count(text), len(tok.EncodeLiteral(text)); got != want {
				t.Fatalf("Count = %d, EncodeLiteral %d tokens", got, want)
			}
			if c.Pieces() < 100 {
				t.Fatalf("a 50 KB text cut into %d pieces: nothing incremental", c.Pieces())
			}
			rng := rand.New(rand.NewPCG(1, 2))
			alphabet := []rune("ab .,\n\té🍎-_e ")
			for i := range 300 {
				r := []rune(text)
				at := rng.IntN(len(r) + 1)
				if i%3 == 0 && at < len(r) {
					r = append(r[:at], r[at+1:]...)
				} else {
					r = append(r[:at], append([]rune{alphabet[rng.IntN(len(alphabet))]}, r[at:]...)...)
				}
				text = string(r)
				if i%25 != 0 { // EncodeLiteral of 50 KB is the slow part: check every 25th
					c.Count(text)
					continue
				}
				if got, want := c.Count(text), len(tok.EncodeLiteral(text)); got != want {
					t.Fatalf("edit %d: Count = %d, EncodeLiteral %d tokens", i, got, want)
				}
			}
			before := c.Encoded
			c.Count(text + "x")
			if n := c.Encoded - before; n > 2 {
				t.Errorf("a key typed at the end encoded %d pieces", n)
			}
		})
	}
}

// BenchmarkCountPerKey is the cost of pricing a 50 KB input on each key
// (one character typed at the end): the Counter against encoding it all.
func BenchmarkCountPerKey(b *testing.B) {
	toks := map[string]func(testing.TB) *Tokenizer{
		"synth": func(tb testing.TB) *Tokenizer { return synthTokenizer(tb, 4096) },
		"gemma": loadGemma,
	}
	for name, load := range toks {
		tok := load(b)
		text := countText(b, 50_000)
		b.Run(name+"/counter", func(b *testing.B) {
			c := tok.NewCounter()
			c.Count(text)
			i := 0
			for b.Loop() {
				i++
				c.Count(text + strings.Repeat("x", i%7))
			}
		})
		b.Run(name+"/encode", func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				_ = len(tok.EncodeLiteral(text + strings.Repeat("x", i%7)))
			}
		})
	}
}
