package tokenizer

import (
	"encoding/json"
	"strings"
	"testing"
)

// variant edits a synthetic tokenizer.json decoded as generic JSON.
type variant struct {
	name string
	edit func(doc map[string]any)
}

func lit(s string) map[string]any { return map[string]any{"String": s} }

func addedToken(id int, content string, special, singleWord, lstrip, rstrip, normalized bool) map[string]any {
	return map[string]any{
		"id": id, "content": content, "special": special, "single_word": singleWord,
		"lstrip": lstrip, "rstrip": rstrip, "normalized": normalized,
	}
}

func model(doc map[string]any) map[string]any { return doc["model"].(map[string]any) }

// variants exercise what Gemma's file does not use but other
// SentencePiece-style files do.
var variants = []variant{
	{"llama-style prepend and strip", func(doc map[string]any) {
		doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Prepend", "prepend": "▁"},
			map[string]any{"type": "Replace", "pattern": lit(" "), "content": "▁"},
		}}
		doc["pre_tokenizer"] = nil
		doc["decoder"] = map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": lit("▁"), "content": " "},
			map[string]any{"type": "ByteFallback"},
			map[string]any{"type": "Fuse"},
			map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0},
		}}
	}},
	{"NFKC then replace", func(doc map[string]any) {
		doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "NFKC"},
			map[string]any{"type": "Replace", "pattern": lit(" "), "content": "▁"},
		}}
	}},
	{"NFC", func(doc map[string]any) {
		doc["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "NFC"},
			map[string]any{"type": "Replace", "pattern": lit(" "), "content": "▁"},
		}}
	}},
	{"NFD without sequence", func(doc map[string]any) {
		doc["normalizer"] = map[string]any{"type": "NFD"}
	}},
	{"split isolated", splitOn("▁", "Isolated", false)},
	{"split removed", splitOn("▁", "Removed", false)},
	{"split merged with next", splitOn("▁", "MergedWithNext", false)},
	{"split merged with previous", splitOn("▁", "MergedWithPrevious", false)},
	{"split contiguous", splitOn("▁", "Contiguous", false)},
	{"split inverted", splitOn("e", "Isolated", true)},
	{"split sequence", func(doc map[string]any) {
		doc["pre_tokenizer"] = map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": lit("▁"), "behavior": "MergedWithNext", "invert": false},
			map[string]any{"type": "Split", "pattern": lit("."), "behavior": "Isolated", "invert": false},
		}}
	}},
	{"added token flags", func(doc map[string]any) {
		n := len(model(doc)["vocab"].(map[string]any))
		doc["added_tokens"] = append(doc["added_tokens"].([]any),
			addedToken(n, "<tool>", true, false, true, true, false),
			addedToken(n+1, "fox", false, true, false, false, false),
			addedToken(n+2, "hello world", false, false, false, false, true),
			addedToken(n+3, "<em>", false, false, false, true, false),
			addedToken(n+4, "the", true, true, true, false, true),
			addedToken(n+5, "<|turn>user", true, false, false, false, false),
		)
	}},
	{"no byte fallback, fused unk", func(doc map[string]any) {
		model(doc)["byte_fallback"] = false
	}},
	{"no byte fallback, unfused unk", func(doc map[string]any) {
		model(doc)["byte_fallback"] = false
		model(doc)["fuse_unk"] = false
	}},
	{"ignore merges", func(doc map[string]any) {
		model(doc)["ignore_merges"] = true
	}},
	{"legacy merges", func(doc map[string]any) {
		var out []any
		for _, m := range model(doc)["merges"].([]any) {
			pair := m.([]any)
			a, b := pair[0].(string), pair[1].(string)
			if strings.Contains(a, " ") || strings.Contains(b, " ") {
				continue
			}
			out = append(out, a+" "+b)
		}
		model(doc)["merges"] = out
	}},
	{"no normalizer or decoder", func(doc map[string]any) {
		doc["normalizer"] = nil
		doc["pre_tokenizer"] = nil
		doc["decoder"] = nil
	}},
}

func splitOn(pattern, behavior string, invert bool) func(map[string]any) {
	return func(doc map[string]any) {
		doc["pre_tokenizer"] = map[string]any{"type": "Split", "pattern": lit(pattern), "behavior": behavior, "invert": invert}
	}
}

func editSynth(t testing.TB, edit func(map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(synthJSON(t, 512), &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// variantTexts adds the cases the variants are about to part of the corpus.
func variantTexts(t testing.TB) []string {
	texts := corpusTexts(t, 400)
	return append(texts,
		"the fox", "thefox", "the  fox ", "a fox_", "fox", "foxes", " fox ", "über fox",
		"hello world", "Hello world", "hello  world", "say hello world!",
		"a <tool> b", "a   <tool>   b", "<tool><tool>", "x<em>  y", "<em>\n\nz",
		"the", " the ", "then the", "<|turn>user\nhi", "<|turn>users", "<|turn>model",
		"\u00c5ngstr\u00f6m", "A\u030angstro\u0308m", "ﬁve ① ｆｕｌｌ", "e.g. a.b.c...", "eee e ee",
		"漢字 and ©®™", "zzz\U0001F600zzz", "",
	)
}

// TestVariantsOracle compares orchard with the Rust library on tokenizer
// files that use the components Gemma's file does not.
func TestVariantsOracle(t *testing.T) {
	texts := variantTexts(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			data := editSynth(t, v.edit)
			tok, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			compareRecords(t, tok, liveOracle(t, data, texts))
		})
	}
}

// TestUnsupportedComponents checks that what is not implemented is a load
// error naming the component.
func TestUnsupportedComponents(t *testing.T) {
	tests := []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"normalizer", func(d map[string]any) { d["normalizer"] = map[string]any{"type": "Lowercase"} }, `normalizer "Lowercase"`},
		{"nested normalizer", func(d map[string]any) {
			d["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "NFC"}, map[string]any{"type": "Strip"}}}
		}, `normalizer "Strip"`},
		{"regex replace", func(d map[string]any) {
			d["normalizer"] = map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " +"}, "content": "▁"}
		}, "Regex pattern"},
		{"pre-tokenizer", func(d map[string]any) { d["pre_tokenizer"] = map[string]any{"type": "ByteLevel"} }, `pre-tokenizer "ByteLevel"`},
		{"split behavior", splitOn(" ", "Sideways", false), `behavior "Sideways"`},
		{"decoder", func(d map[string]any) { d["decoder"] = map[string]any{"type": "Metaspace"} }, `decoder "Metaspace"`},
		{"model", func(d map[string]any) { model(d)["type"] = "WordPiece" }, `model type "WordPiece"`},
		{"dropout", func(d map[string]any) { model(d)["dropout"] = 0.1 }, "dropout"},
		{"prefix", func(d map[string]any) { model(d)["continuing_subword_prefix"] = "##" }, "continuing_subword_prefix"},
		{"truncation", func(d map[string]any) { d["truncation"] = map[string]any{"max_length": 10} }, "truncation"},
		{"version", func(d map[string]any) { d["version"] = "2.0" }, "version"},
		{"merge out of vocab", func(d map[string]any) {
			model(d)["merges"] = append(model(d)["merges"].([]any), []any{"zq", "xj"})
		}, `"zq" is not in the vocabulary`},
		{"unk out of vocab", func(d map[string]any) { model(d)["unk_token"] = "<nope>" }, "unk_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(editSynth(t, tt.edit))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to mention %s", err, tt.want)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	for _, in := range []string{"", "{", "[]", `{"model": {"vocab": {"a": -1}}}`, `{"model": {"vocab": {"a": 1.5}}}`,
		`{"model": {"type": "BPE"}}`, `{"model": {"vocab": {"a": 0}, "merges": [["a"]]}}`, `{"model": {"vocab": {"a": 0, "b": 0}}}`,
		`{"model": {"vocab": {"a\u00": 0}}}`, `{"added_tokens": 5, "model": {"vocab": {}}}`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
}
