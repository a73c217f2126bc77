package tokenizer

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
)

var synth = sync.OnceValues(func() (map[int][]byte, error) {
	out := make(map[int][]byte)
	for _, n := range []int{MinSynthVocab, 512, 4096} {
		b, err := SynthesizeJSON(n)
		if err != nil {
			return nil, err
		}
		out[n] = b
	}
	return out, nil
})

func synthJSON(t testing.TB, n int) []byte {
	t.Helper()
	all, err := synth()
	if err != nil {
		t.Fatal(err)
	}
	return all[n]
}

func synthTokenizer(t testing.TB, n int) *Tokenizer {
	t.Helper()
	tok, err := Parse(synthJSON(t, n))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSynthesizeJSON(t *testing.T) {
	for _, n := range []int{MinSynthVocab, 512, 4096} {
		data := synthJSON(t, n)
		again, err := SynthesizeJSON(n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, again) {
			t.Errorf("SynthesizeJSON(%d) is not deterministic", n)
		}
		tok := synthTokenizer(t, n)
		if got := tok.VocabSize(); got != n {
			t.Errorf("SynthesizeJSON(%d): VocabSize = %d", n, got)
		}
		want := map[string]int{
			"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3, "<mask>": 4,
			"<|turn>": 105, "<turn|>": 106, "\n": 107,
			"<|think|>": synthThinkID, "<|channel>": synthChannelID, "<channel|>": synthChannelEndID,
		}
		for _, tl := range synthTools(n) {
			want[tl.content] = tl.id
		}
		for s, id := range want {
			got, ok := tok.TokenID(s)
			if !ok || got != id {
				t.Errorf("SynthesizeJSON(%d): TokenID(%q) = %d, %v; want %d", n, s, got, ok, id)
			}
			if special := s != "\n"; tok.IsSpecial(id) != special {
				t.Errorf("SynthesizeJSON(%d): IsSpecial(%d) = %v", n, id, !special)
			}
		}
		for b := 0; b < 256; b++ {
			if tok.model.bytes[b] < 0 {
				t.Fatalf("SynthesizeJSON(%d): no byte token for %#x", n, b)
			}
		}
		if bos, ok := tok.BOS(); !ok || bos != 2 {
			t.Errorf("SynthesizeJSON(%d): BOS = %d, %v", n, bos, ok)
		}
		var doc struct {
			Model struct{ Merges [][2]string }
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		t.Logf("vocab %d: %d merges, %d bytes of JSON", n, len(doc.Model.Merges), len(data))
		if n >= 512 && len(doc.Model.Merges) < n/4 {
			t.Errorf("SynthesizeJSON(%d) learned only %d merges", n, len(doc.Model.Merges))
		}
		// Merges make common words short.
		text := "The tokenizer reads the model and the merges."
		ids := tok.Encode(text)
		if got := tok.Decode(ids, false); got != text {
			t.Errorf("SynthesizeJSON(%d): round trip %q", n, got)
		}
		if n == 4096 && len(ids) > len(text)/3 {
			t.Errorf("SynthesizeJSON(4096): %q takes %d tokens", text, len(ids))
		}
	}
}

func TestSynthesizeJSONTooSmall(t *testing.T) {
	for _, n := range []int{-1, 0, 100, MinSynthVocab - 1} {
		if _, err := SynthesizeJSON(n); err == nil {
			t.Errorf("SynthesizeJSON(%d) succeeded", n)
		}
	}
}

// TestSynthOracle checks that the Rust library loads the synthetic files
// and encodes the conformance corpus exactly as orchard does.
func TestSynthOracle(t *testing.T) {
	texts := corpusTexts(t, 0)
	for _, n := range []int{512, 4096} {
		recs := liveOracle(t, synthJSON(t, n), texts)
		compareRecords(t, synthTokenizer(t, n), recs)
	}
}

// corpusTexts returns the texts of the committed oracle corpus, at most
// limit of them (all with 0), skipping the 10 kB lines when limited.
func corpusTexts(t testing.TB, limit int) []string {
	t.Helper()
	var out []string
	for _, r := range readRecords(t, "testdata/gemma3.jsonl.gz") {
		if r.Text == nil || (limit > 0 && len(*r.Text) > 2000) {
			continue
		}
		out = append(out, *r.Text)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

func TestSynthCorpusHasNoControlText(t *testing.T) {
	// The corpus may mention control tokens, but merges must never
	// produce their text (learnMerges skips such pairs).
	tok := synthTokenizer(t, 4096)
	for _, s := range []string{"<0x41>", "<|turn>", "<turn|>"} {
		ids := tok.EncodeLiteral(s)
		if len(ids) < 2 && strings.HasPrefix(s, "<0x") {
			t.Errorf("EncodeLiteral(%q) = %v: plain text became a byte token", s, ids)
		}
	}
}

// TestSynthToolMarkup: a synthetic tokenizer reads Gemma 4's tool markup
// as the real one does, each marker one special id, and user text that
// spells the markers stays text.
func TestSynthToolMarkup(t *testing.T) {
	tok := synthTokenizer(t, MinSynthVocab)
	const call = `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|><|tool_response>`
	ids := tok.Encode(call)
	var specials []int
	for _, id := range ids {
		if tok.IsSpecial(id) {
			specials = append(specials, id)
		}
	}
	id := map[string]int{}
	for _, tl := range synthTools(MinSynthVocab) {
		id[tl.content] = tl.id
	}
	if want := []int{id["<|tool_call>"], id[`<|"|>`], id[`<|"|>`], id["<tool_call|>"], id["<|tool_response>"]}; !slices.Equal(specials, want) {
		t.Errorf("special ids of %q = %v, want %v (all ids %v)", call, specials, want, ids)
	}
	if got := tok.Decode(ids, false); got != call {
		t.Errorf("Decode(Encode(call)) = %q", got)
	}
	for _, id := range tok.EncodeLiteral(call) {
		if tok.IsSpecial(id) {
			t.Fatalf("EncodeLiteral(%q) holds the special id %d", call, id)
		}
	}
}
