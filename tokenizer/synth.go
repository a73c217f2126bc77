package tokenizer

import (
	"bytes"
	"container/heap"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// synthCorpus is a small English, markdown and code text written for this
// package. Merges learned from it resemble those of a real tokenizer, so a
// synthetic bundle exercises the same code paths as a real one.
//
//go:embed synth_corpus.txt
var synthCorpus string

// Fixed ids of the synthetic tokenizer. The first block mirrors Gemma 4;
// the thinking markers sit in Gemma's reserved 5–104 range.
const (
	synthThinkID      = 98
	synthChannelID    = 100
	synthChannelEndID = 101
	synthNewlineID    = 107

	// MinSynthVocab is the smallest vocabulary SynthesizeJSON accepts: the
	// control block, the 256 byte tokens and room for a basic alphabet.
	MinSynthVocab = 384
)

// synthSpecials are the added tokens of a synthetic tokenizer, in id order.
var synthSpecials = []struct {
	id      int
	content string
	special bool
}{
	{0, "<pad>", true},
	{1, "<eos>", true},
	{2, "<bos>", true},
	{3, "<unk>", true},
	{4, "<mask>", true},
	{synthThinkID, "<|think|>", true},
	{synthChannelID, "<|channel>", true},
	{synthChannelEndID, "<channel|>", true},
	{105, "<|turn>", true},
	{106, "<turn|>", true},
	{synthNewlineID, "\n", false},
}

// Gemma 4's image and audio tokens: span openers and closers and the
// placeholder that stands at every soft-token position (multimodal doc
// §3.1), at Gemma 4's ids when the vocabulary reaches them, else at the top
// of a small one. Code looks them up by name.
var gemmaMedia = []struct {
	id      int
	content string
}{
	{255999, "<|image>"}, {256000, "<|audio>"}, {258880, "<|image|>"},
	{258881, "<|audio|>"}, {258882, "<image|>"}, {258883, "<audio|>"},
}

func synthMedia(vocabSize int) []struct {
	id      int
	content string
} {
	out := slices.Clone(gemmaMedia)
	if vocabSize > gemmaMedia[len(gemmaMedia)-1].id {
		return out
	}
	for i := range out {
		out[i].id = vocabSize - len(out) + i
	}
	return out
}

// synthToolSpellings are Gemma 4's function-calling tokens (package tools
// looks them up by name), special like the real ones.
var synthToolSpellings = []string{"<|tool>", "<tool|>", "<|tool_call>", "<tool_call|>", "<|tool_response>", "<tool_response|>", `<|"|>`}

// synthTools places the tool tokens just below the lowest media token.
// The real tokenizer has them at 46–52; here they take ids a vocabulary
// leaves unused (or, in the smallest ones, its last merges), so that
// adding them moved no other token: every synthetic bundle written before
// reads text as it did.
func synthTools(vocabSize int) []struct {
	id      int
	content string
} {
	low := vocabSize
	for _, m := range synthMedia(vocabSize) {
		low = min(low, m.id)
	}
	out := make([]struct {
		id      int
		content string
	}, len(synthToolSpellings))
	for i, s := range synthToolSpellings {
		out[i].id, out[i].content = low-len(synthToolSpellings)+i, s
	}
	return out
}

// SynthesizeJSON builds a small Gemma-4-like tokenizer.json with exactly
// vocabSize entries. The result depends only on vocabSize: it has Gemma's
// control tokens at Gemma's ids, "\n" at 107, the 256 byte-fallback tokens,
// Gemma's normalizer, pre-tokenizer and decoder, and BPE merges learned from
// an embedded corpus until the vocabulary is full. Ids left over when the
// corpus runs out of pairs become "<unusedN>" added tokens, as in Gemma.
func SynthesizeJSON(vocabSize int) ([]byte, error) {
	if vocabSize < MinSynthVocab {
		return nil, fmt.Errorf("tokenizer: synthesize: vocab size %d is below the minimum %d", vocabSize, MinSynthVocab)
	}
	v := newSynthVocab(vocabSize)
	for _, s := range synthSpecials {
		v.set(s.id, s.content)
	}
	for _, m := range append(synthMedia(vocabSize), synthTools(vocabSize)...) {
		v.set(m.id, m.content)
	}
	for b := 0; b < 256; b++ {
		v.add(byteTokenText[b])
	}
	words, alphabet := synthWords(synthCorpus)
	for _, r := range alphabet {
		if v.full() {
			break
		}
		v.add(string(r))
	}
	merges := learnMerges(v, words)
	var unused []int
	for id := range v.pieces {
		if v.pieces[id] == "" {
			v.pieces[id] = fmt.Sprintf("<unused%d>", len(unused))
			unused = append(unused, id)
		}
	}
	return encodeSynth(v, merges, unused)
}

// synthVocab assigns ids: fixed ones first, then the lowest free id.
type synthVocab struct {
	pieces []string
	ids    map[string]int
	next   int
}

func newSynthVocab(n int) *synthVocab {
	return &synthVocab{pieces: make([]string, n), ids: make(map[string]int, n)}
}

func (v *synthVocab) set(id int, s string) {
	v.pieces[id] = s
	v.ids[s] = id
}

func (v *synthVocab) full() bool {
	for v.next < len(v.pieces) && v.pieces[v.next] != "" {
		v.next++
	}
	return v.next >= len(v.pieces)
}

// add gives s the lowest free id, or reports false when none is left.
func (v *synthVocab) add(s string) (int, bool) {
	if id, ok := v.ids[s]; ok {
		return id, true
	}
	if v.full() {
		return 0, false
	}
	v.set(v.next, s)
	return v.next, true
}

// synthWords normalizes the corpus as Gemma does (spaces become ▁) and cuts
// it into training words: a run of ▁ followed by the non-▁ text after it,
// with "\n" (an added token) as a hard boundary. It also returns the
// alphabet, most frequent rune first.
func synthWords(corpus string) (map[string]int, []rune) {
	words := make(map[string]int)
	runeFreq := make(map[rune]int)
	for _, line := range strings.Split(corpus, "\n") {
		line = strings.ReplaceAll(line, " ", "▁")
		for _, r := range line {
			runeFreq[r]++
		}
		start := 0
		for i := 0; i < len(line); {
			r, n := utf8.DecodeRuneInString(line[i:])
			// A word ends where ▁ follows something that is not ▁.
			if r == '▁' && i > 0 && !strings.HasSuffix(line[:i], "▁") {
				words[line[start:i]]++
				start = i
			}
			i += n
		}
		if start < len(line) {
			words[line[start:]]++
		}
	}
	alphabet := make([]rune, 0, len(runeFreq))
	for r := range runeFreq {
		alphabet = append(alphabet, r)
	}
	sort.Slice(alphabet, func(i, j int) bool {
		a, b := alphabet[i], alphabet[j]
		if runeFreq[a] != runeFreq[b] {
			return runeFreq[a] > runeFreq[b]
		}
		return a < b
	})
	return words, alphabet
}

// synthWord is one distinct training word as a list of vocabulary ids.
type synthWord struct {
	syms []int
	freq int
}

type synthPair struct{ a, b int }

// pairQueue is a max-heap of pair counts with lazy deletion: an entry whose
// count no longer matches the live count is skipped when popped.
type pairQueue struct {
	items  []pairItem
	pieces []string
}

type pairItem struct {
	p     synthPair
	count int
}

func (q *pairQueue) Len() int { return len(q.items) }
func (q *pairQueue) Less(i, j int) bool {
	x, y := q.items[i], q.items[j]
	if x.count != y.count {
		return x.count > y.count
	}
	// Ties go to the lexically smaller pair, which keeps training deterministic.
	if q.pieces[x.p.a] != q.pieces[y.p.a] {
		return q.pieces[x.p.a] < q.pieces[y.p.a]
	}
	return q.pieces[x.p.b] < q.pieces[y.p.b]
}
func (q *pairQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *pairQueue) Push(x any)    { q.items = append(q.items, x.(pairItem)) }
func (q *pairQueue) Pop() any {
	it := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return it
}

// learnMerges runs plain BPE training: merge the most frequent adjacent pair
// until the vocabulary is full or no pair is left. Characters outside the
// vocabulary split words, since BPE never merges byte-fallback pieces.
func learnMerges(v *synthVocab, words map[string]int) [][2]string {
	reserved := make(map[int]bool)
	for id, p := range v.pieces {
		if p != "" && utf8.RuneCountInString(p) > 1 {
			reserved[id] = true
		}
	}
	keys := make([]string, 0, len(words))
	for w := range words {
		keys = append(keys, w)
	}
	sort.Strings(keys)
	var corpus []synthWord
	for _, w := range keys {
		var syms []int
		flush := func() {
			if len(syms) > 1 {
				corpus = append(corpus, synthWord{syms: syms, freq: words[w]})
			}
			syms = nil
		}
		for _, r := range w {
			id, ok := v.ids[string(r)]
			if !ok {
				flush()
				continue
			}
			syms = append(syms, id)
		}
		flush()
	}

	counts := make(map[synthPair]int)
	for _, w := range corpus {
		for i := 0; i+1 < len(w.syms); i++ {
			counts[synthPair{w.syms[i], w.syms[i+1]}] += w.freq
		}
	}
	q := &pairQueue{pieces: v.pieces}
	for p, c := range counts {
		q.items = append(q.items, pairItem{p, c})
	}
	heap.Init(q)

	var merges [][2]string
	for q.Len() > 0 && !v.full() {
		it := heap.Pop(q).(pairItem)
		if it.count <= 0 || counts[it.p] != it.count {
			continue
		}
		merged := v.pieces[it.p.a] + v.pieces[it.p.b]
		if id, ok := v.ids[merged]; ok && reserved[id] {
			// The corpus spells out a control or byte token; merging into it
			// would make plain text decode as something else.
			delete(counts, it.p)
			continue
		}
		newID, ok := v.add(merged)
		if !ok {
			break
		}
		merges = append(merges, [2]string{v.pieces[it.p.a], v.pieces[it.p.b]})
		touched := make(map[synthPair]bool)
		for wi := range corpus {
			w := &corpus[wi]
			if !containsPair(w.syms, it.p) {
				continue
			}
			for i := 0; i+1 < len(w.syms); i++ {
				p := synthPair{w.syms[i], w.syms[i+1]}
				counts[p] -= w.freq
				touched[p] = true
			}
			out := w.syms[:0]
			for i := 0; i < len(w.syms); i++ {
				if i+1 < len(w.syms) && w.syms[i] == it.p.a && w.syms[i+1] == it.p.b {
					out = append(out, newID)
					i++
					continue
				}
				out = append(out, w.syms[i])
			}
			w.syms = out
			for i := 0; i+1 < len(w.syms); i++ {
				p := synthPair{w.syms[i], w.syms[i+1]}
				counts[p] += w.freq
				touched[p] = true
			}
		}
		delete(counts, it.p)
		for p := range touched {
			if c := counts[p]; c > 0 {
				heap.Push(q, pairItem{p, c})
			} else {
				delete(counts, p)
			}
		}
	}
	return merges
}

func containsPair(syms []int, p synthPair) bool {
	for i := 0; i+1 < len(syms); i++ {
		if syms[i] == p.a && syms[i+1] == p.b {
			return true
		}
	}
	return false
}

// encodeSynth writes the tokenizer.json document. Field order follows the
// files Hugging Face writes, which keeps the output readable and stable.
func encodeSynth(v *synthVocab, merges [][2]string, unused []int) ([]byte, error) {
	type added struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	}
	var addedTokens []added
	for _, s := range synthSpecials {
		addedTokens = append(addedTokens, added{ID: s.id, Content: s.content, Special: s.special})
	}
	for _, m := range append(synthMedia(len(v.pieces)), synthTools(len(v.pieces))...) {
		addedTokens = append(addedTokens, added{ID: m.id, Content: m.content, Special: true})
	}
	for _, id := range unused {
		addedTokens = append(addedTokens, added{ID: id, Content: v.pieces[id]})
	}
	sort.Slice(addedTokens, func(i, j int) bool { return addedTokens[i].ID < addedTokens[j].ID })

	vocab := make(map[string]int, len(v.pieces))
	for id, p := range v.pieces {
		vocab[p] = id
	}
	str := func(s string) map[string]string { return map[string]string{"String": s} }
	special := func(typeID int) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": "<bos>", "type_id": typeID}}
	}
	seq := func(id string, typeID int) map[string]any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": typeID}}
	}
	doc := struct {
		Version       string         `json:"version"`
		Truncation    any            `json:"truncation"`
		Padding       any            `json:"padding"`
		AddedTokens   []added        `json:"added_tokens"`
		Normalizer    map[string]any `json:"normalizer"`
		PreTokenizer  map[string]any `json:"pre_tokenizer"`
		PostProcessor map[string]any `json:"post_processor"`
		Decoder       map[string]any `json:"decoder"`
		Model         map[string]any `json:"model"`
	}{
		Version:     "1.0",
		AddedTokens: addedTokens,
		Normalizer:  map[string]any{"type": "Replace", "pattern": str(" "), "content": "▁"},
		PreTokenizer: map[string]any{
			"type": "Split", "pattern": str(" "), "behavior": "MergedWithPrevious", "invert": false,
		},
		PostProcessor: map[string]any{
			"type":   "TemplateProcessing",
			"single": []any{special(0), seq("A", 0)},
			"pair":   []any{special(0), seq("A", 0), special(1), seq("B", 1)},
			"special_tokens": map[string]any{
				"<bos>": map[string]any{"id": "<bos>", "ids": []int{2}, "tokens": []string{"<bos>"}},
			},
		},
		Decoder: map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": str("▁"), "content": " "},
			map[string]any{"type": "ByteFallback"},
			map[string]any{"type": "Fuse"},
		}},
		Model: map[string]any{
			"type":                      "BPE",
			"dropout":                   nil,
			"unk_token":                 "<unk>",
			"continuing_subword_prefix": nil,
			"end_of_word_suffix":        nil,
			"fuse_unk":                  true,
			"byte_fallback":             true,
			"ignore_merges":             false,
			"vocab":                     vocab,
			"merges":                    merges,
		},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("tokenizer: synthesize: %w", err)
	}
	return buf.Bytes(), nil
}
