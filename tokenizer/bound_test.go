package tokenizer

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// boundTexts are texts that pack as many bytes into each token as a
// tokenizer allows: the longest tokens' own text repeated, runs of
// spaces and symbols, scripts outside the vocabulary, invalid bytes, and
// random runes.
func boundTexts(t *Tokenizer) []string {
	var longest []string
	for id := range t.VocabSize() {
		if s := t.Decode([]int{id}, false); len(s) > 0 {
			longest = append(longest, s)
		}
	}
	// The 20 longest decoded tokens.
	for i := range min(20, len(longest)) {
		for j := i + 1; j < len(longest); j++ {
			if len(longest[j]) > len(longest[i]) {
				longest[i], longest[j] = longest[j], longest[i]
			}
		}
	}
	texts := []string{
		strings.Repeat(" ", 5000), strings.Repeat("\n", 3000), strings.Repeat("=", 4000), strings.Repeat("ab", 3000),
		strings.Repeat("果", 2000), strings.Repeat("🍎", 1000), strings.Repeat("\xff", 1000), strings.Repeat("𝐀", 500),
		strings.Repeat("<start_of_turn>", 100), strings.Repeat("apples and pears ", 300),
	}
	for _, s := range longest[:min(20, len(longest))] {
		texts = append(texts, strings.Repeat(s, 50))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		var b strings.Builder
		for range 2000 {
			b.WriteRune(rune(rng.IntN(0x3000)))
		}
		texts = append(texts, b.String())
	}
	return texts
}

// TestMaxBytesPerToken: no text encodes to fewer tokens than its length
// divided by the bound, on the synthetic tokenizer and Gemma 3's.
func TestMaxBytesPerToken(t *testing.T) {
	synth, err := SynthesizeJSON(MinSynthVocab)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Parse(synth)
	if err != nil {
		t.Fatal(err)
	}
	toks := map[string]*Tokenizer{"synthetic": st}
	if _, err := gemma(); err == nil {
		toks["gemma3"] = loadGemma(t)
	}
	for name, tok := range toks {
		n, ok := tok.MaxBytesPerToken()
		if !ok || n < utf8.UTFMax {
			t.Fatalf("%s: bound %d %v", name, n, ok)
		}
		tight := 0.0
		for _, text := range boundTexts(tok) {
			for _, ids := range [][]int{tok.Encode(text), tok.EncodeLiteral(text)} {
				if len(text) > n*len(ids) {
					t.Errorf("%s: %d bytes in %d tokens: more than %d bytes a token (%.40q)", name, len(text), len(ids), n, text)
				}
				tight = max(tight, float64(len(text))/float64(len(ids)))
			}
		}
		t.Logf("%s: at most %d bytes a token; the densest text here had %.1f", name, n, tight)
	}
}

// TestMaxBytesPerTokenUnbounded: tokenizers that can make any text into
// few tokens give no bound.
func TestMaxBytesPerTokenUnbounded(t *testing.T) {
	synth, err := SynthesizeJSON(MinSynthVocab)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(doc map[string]any)
	}{
		{"a normalizer deleting text", func(doc map[string]any) {
			doc["normalizer"] = map[string]any{"type": "Replace", "pattern": map[string]any{"String": "x"}, "content": ""}
		}},
		{"a split removing its matches", func(doc map[string]any) {
			doc["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": map[string]any{"String": " "}, "behavior": "Removed", "invert": false}
		}},
		{"an added token that strips spaces", func(doc map[string]any) {
			added := doc["added_tokens"].([]any)
			added[0].(map[string]any)["lstrip"] = true
		}},
		{"unknown characters fused, no byte fallback", func(doc map[string]any) {
			doc["model"].(map[string]any)["byte_fallback"] = false
		}},
	} {
		var doc map[string]any
		if err := json.Unmarshal(synth, &doc); err != nil {
			t.Fatal(err)
		}
		tc.change(doc)
		raw, _ := json.Marshal(doc)
		tok, err := Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n, ok := tok.MaxBytesPerToken(); ok {
			t.Errorf("%s: bound %d, want none", tc.name, n)
		}
	}
}
