package tokenizer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/fuzzing"
)

// FuzzParse: a tokenizer.json, however damaged or hostile, is parsed or
// refused with an error; never a panic, never memory out of proportion
// to the file (the make([]string, maxID+1) bomb), never an error that
// carries a huge value or a control character; an accepted one nests no
// deeper than MaxDepth, and encodes and decodes within its vocabulary.
func FuzzParse(f *testing.F) {
	seeds := map[string][]byte{"synth-300": synthJSON(f, MinSynthVocab)}
	for _, c := range hostileCases {
		seeds["probe-"+strings.ReplaceAll(c.what, " ", "-")] = []byte(c.json)
	}
	seeds["huge-token"] = []byte(`{"model":{"vocab":{"` + strings.Repeat("x", 4096) + `":"x"}}}`)
	// Nesting at the limit, where a mutation crosses it either way.
	seeds["deep-at-limit"] = append(append([]byte(`{"model":{"vocab":{"a":0}},"x":`), fuzzing.Nested("[", "", "]", MaxDepth-1)...), '}')
	seeds["deep-objects-at-limit"] = append(append([]byte(`{"model":{"vocab":{"a":0},"x":`), fuzzing.Nested(`{"a":`, "0", "}", MaxDepth-2)...), "}}"...)
	fuzzing.WriteSeeds(f, "FuzzParse", seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	// Depth and size past any small file, made here rather than kept in
	// testdata: the probe's nesting (2 MiB of it), and a valid tokenizer
	// of 2 MiB (a 120,000-token vocabulary) for mutations to work on.
	f.Add(append(append([]byte(`{"model":{"vocab":{"a":0}},"x":`), fuzzing.Nested("[", "", "]", 1<<20)...), '}'))
	big := []byte(`{"version":"1.0","model":{"type":"BPE","vocab":{`)
	for i := range 120_000 {
		if i > 0 {
			big = append(big, ',')
		}
		big = fmt.Appendf(big, `"t%d":%d`, i, i)
	}
	f.Add(append(big, `},"merges":[]}}`...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tok *Tokenizer
		var err error
		// Gemma's 33 MB file takes about 6× its size; 64× and a constant
		// for the tables every tokenizer has leave room without hiding a bomb.
		fuzzing.Alloc(t, 4<<20+64*uint64(len(data)), func() { tok, err = Parse(data) })
		size, cerr := Check(data)
		if err == nil && fuzzing.JSONDepth(data) > MaxDepth {
			t.Fatalf("accepted a document nested %d deep, past the limit of %d", fuzzing.JSONDepth(data), MaxDepth)
		}
		if cerr == nil && fuzzing.JSONDepth(data) > MaxDepth {
			t.Fatalf("Check accepted a document nested %d deep, past the limit of %d", fuzzing.JSONDepth(data), MaxDepth)
		}
		if err != nil {
			if msg := err.Error(); len(msg) > 2000 || strings.ContainsAny(msg, "\x1b\x07\x00") {
				t.Fatalf("error of %d bytes or with control characters: %.300q", len(msg), msg)
			}
			return
		}
		// What Parse builds, Check (the bundle's quick look) accepts, and
		// they agree on the size the embedding must have.
		if cerr != nil || size != tok.VocabSize() {
			t.Fatalf("Parse gives %d tokens, Check %d, %v", tok.VocabSize(), size, cerr)
		}
		for _, s := range []string{"hello world", "<bos>x", "日本"} {
			for _, id := range tok.Encode(s) {
				if id < 0 || id >= tok.VocabSize() {
					t.Fatalf("Encode(%q) gave id %d outside the vocabulary of %d", s, id, tok.VocabSize())
				}
			}
		}
		ids := make([]int, 0, 8)
		for id := range min(tok.VocabSize(), 8) {
			ids = append(ids, id)
		}
		tok.Decode(append(ids, -1, tok.VocabSize(), 1<<40), false)
		if bos, ok := tok.BOS(); ok && (bos < 0 || bos >= tok.VocabSize()) {
			t.Fatalf("BOS %d outside the vocabulary of %d", bos, tok.VocabSize())
		}
	})
}
