package tokenizer

import (
	"slices"
	"sync"
	"testing"
)

func TestTokenLookups(t *testing.T) {
	tok := synthTokenizer(t, 512)
	tests := []struct {
		text    string
		id      int
		special bool
	}{
		{"<bos>", 2, true},
		{"<|turn>", 105, true},
		{"\n", 107, false},
		{"<0x41>", int(tok.model.bytes['A']), false},
	}
	for _, tt := range tests {
		id, ok := tok.TokenID(tt.text)
		if !ok || id != tt.id {
			t.Errorf("TokenID(%q) = %d, %v; want %d", tt.text, id, ok, tt.id)
		}
		if got := tok.IsSpecial(id); got != tt.special {
			t.Errorf("IsSpecial(%d) = %v, want %v", id, got, tt.special)
		}
		if got, ok := tok.Token(id); !ok || got != tt.text {
			t.Errorf("Token(%d) = %q, %v; want %q", id, got, ok, tt.text)
		}
	}
	if _, ok := tok.TokenID("no such token"); ok {
		t.Error("TokenID found a token that does not exist")
	}
	for _, id := range []int{-1, tok.VocabSize(), 1 << 40} {
		if _, ok := tok.Token(id); ok || tok.IsSpecial(id) {
			t.Errorf("id %d is out of range but was found", id)
		}
	}
	if got := tok.Decode([]int{-5, 2, 1 << 40, 105}, false); got != "<bos><|turn>" {
		t.Errorf("Decode with out-of-range ids = %q", got)
	}
	added := tok.AddedTokens()
	if len(added) != len(synthSpecials)+len(gemmaMedia)+len(synthToolSpellings) || added[0].Content != "<pad>" || added[len(synthSpecials)-1].ID != 107 || added[len(added)-1].Content != "<audio|>" {
		t.Errorf("AddedTokens = %+v", added)
	}
}

func TestEncodeLiteral(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	text := "a <bos> b\nc"
	if ids := tok.Encode(text); !slices.Contains(ids, 2) {
		t.Errorf("Encode(%q) = %v: want the BOS token", text, ids)
	}
	lit := tok.EncodeLiteral(text)
	if slices.Contains(lit, 2) {
		t.Errorf("EncodeLiteral(%q) = %v: special text became a token", text, lit)
	}
	if !slices.Contains(lit, 107) {
		t.Errorf("EncodeLiteral(%q) = %v: the non-special \\n token should still match", text, lit)
	}
	if got := tok.Decode(lit, true); got != text {
		t.Errorf("Decode(EncodeLiteral(%q), skip) = %q", text, got)
	}
}

// TestConcurrentEncode runs Encode from several goroutines; run with -race.
func TestConcurrentEncode(t *testing.T) {
	tok := synthTokenizer(t, 4096)
	texts := corpusTexts(t, 200)
	want := make([][]int, len(texts))
	for i, s := range texts {
		want[i] = tok.Encode(s)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i, s := range texts {
				if got := tok.Encode(s); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent Encode(%.40q) differs", s)
					return
				}
			}
		})
	}
	wg.Wait()
}
