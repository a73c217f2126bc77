package tokenizer

import (
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// AddedToken is an entry of tokenizer.json's added_tokens: a token matched
// in the text before the model runs, such as "<bos>" or "<|turn>".
type AddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// addedVocab finds added tokens in text. Tokens with normalized=false are
// matched in the raw text, the others in the normalized pieces between.
type addedVocab struct {
	byID      map[int]*AddedToken
	byContent map[string]int
	special   map[string]bool // by content, as Rust keys its special set
	decodeAs  map[int]string  // normalized form of normalized tokens

	raw, norm *matcher
}

// buildAddedVocab assigns ids the way Rust's add_tokens does: an existing
// vocabulary entry keeps its id, a new token gets the next id after the
// model's vocabulary.
func buildAddedVocab(tokens []AddedToken, model *bpe, n normalizer) *addedVocab {
	a := &addedVocab{
		byID:      make(map[int]*AddedToken),
		byContent: make(map[string]int),
		special:   make(map[string]bool),
		decodeAs:  make(map[int]string),
	}
	nextID := len(model.vocab)
	for i := range tokens {
		tok := tokens[i]
		if tok.Content == "" {
			continue
		}
		if id, ok := a.byContent[tok.Content]; ok && *a.byID[id] == withID(tok, id) {
			continue
		}
		id, ok := a.byContent[tok.Content]
		if !ok {
			if v, inVocab := model.vocab[tok.Content]; inVocab {
				id, ok = int(v), true
			}
		}
		if !ok {
			id = nextID
			nextID++
		}
		if tok.Normalized && n != nil {
			if form := n.normalize(tok.Content); form != tok.Content {
				a.decodeAs[id] = form
			}
		}
		a.byContent[tok.Content] = id
		if tok.Special {
			a.special[tok.Content] = true
		}
		tok.ID = id
		a.byID[id] = &tok
	}
	var raw, norm []matchPattern
	for id, tok := range a.byID {
		if tok.Normalized {
			text := tok.Content
			if form, ok := a.decodeAs[id]; ok {
				text = form
			}
			norm = append(norm, matchPattern{text, id})
		} else {
			raw = append(raw, matchPattern{tok.Content, id})
		}
	}
	a.raw = newMatcher(raw)
	a.norm = newMatcher(norm)
	return a
}

func withID(t AddedToken, id int) AddedToken {
	t.ID = id
	return t
}

func parseAddedTokens(raw json.RawMessage) ([]AddedToken, error) {
	if isNull(raw) {
		return nil, nil
	}
	var tokens []AddedToken
	if err := json.Unmarshal(raw, &tokens); err != nil {
		return nil, fmt.Errorf("added_tokens: %w", err)
	}
	return tokens, nil
}

// piece is a stretch of text between added tokens (id < 0) or one added
// token (text unused).
type piece struct {
	text string
	id   int
}

// split cuts text at the added tokens m finds, following Rust's
// find_matches: leftmost-longest matches, single_word and strip rules, and
// special tokens ignored when literal is set.
func (a *addedVocab) split(m *matcher, text string, literal bool, dst []piece) []piece {
	if m == nil {
		return append(dst, piece{text, -1})
	}
	startOffset := 0
	for from := 0; from < len(text); {
		start, stop, id := m.find(text, from)
		if id < 0 {
			break
		}
		from = stop // the search resumes at the raw match end in Rust too
		tok := a.byID[id]
		if literal && a.special[tok.Content] {
			continue
		}
		if tok.SingleWord {
			if (start > 0 && endsWithWord(text[:start])) || (stop < len(text) && startsWithWord(text[stop:])) {
				continue
			}
		}
		if tok.LStrip {
			start = max(trimRightSpace(text[:start]), startOffset)
		}
		if tok.RStrip {
			stop += len(text[stop:]) - len(trimLeftSpace(text[stop:]))
		}
		if startOffset < start {
			dst = append(dst, piece{text[startOffset:start], -1})
		}
		dst = append(dst, piece{id: id})
		startOffset = stop
	}
	if startOffset < len(text) {
		dst = append(dst, piece{text[startOffset:], -1})
	}
	return dst
}

// isWordRune matches Rust regex's Unicode \w.
func isWordRune(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.Nd, unicode.Nl, unicode.Pc, unicode.Other_Alphabetic) ||
		r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWordRune(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWordRune(r)
}

// trimRightSpace returns the offset where the trailing white space of s
// begins.
func trimRightSpace(s string) int {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if !unicode.IsSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return len(s)
}

func trimLeftSpace(s string) string {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if !unicode.IsSpace(r) {
			break
		}
		s = s[n:]
	}
	return s
}

type matchPattern struct {
	text string
	id   int
}

// matcher finds the leftmost-longest occurrence of any pattern with a byte
// trie. Each start position costs one table look-up unless its byte can
// begin a pattern, so plain text passes through quickly.
type matcher struct {
	first [256]bool
	edges map[uint32]int32 // node<<8 | byte → child node
	value []int32          // node → pattern id, -1 when none ends here
}

func newMatcher(patterns []matchPattern) *matcher {
	if len(patterns) == 0 {
		return nil
	}
	m := &matcher{edges: make(map[uint32]int32), value: []int32{-1}}
	for _, p := range patterns {
		node := int32(0)
		for i := 0; i < len(p.text); i++ {
			key := uint32(node)<<8 | uint32(p.text[i])
			child, ok := m.edges[key]
			if !ok {
				child = int32(len(m.value))
				m.value = append(m.value, -1)
				m.edges[key] = child
			}
			node = child
		}
		m.value[node] = int32(p.id)
		m.first[p.text[0]] = true
	}
	return m
}

// find returns the leftmost-longest match starting at or after from, or
// id -1.
func (m *matcher) find(text string, from int) (start, stop, id int) {
	for i := from; i < len(text); i++ {
		if !m.first[text[i]] {
			continue
		}
		node, best, bestEnd := int32(0), int32(-1), 0
		for j := i; j < len(text); j++ {
			child, ok := m.edges[uint32(node)<<8|uint32(text[j])]
			if !ok {
				break
			}
			node = child
			if v := m.value[node]; v >= 0 {
				best, bestEnd = v, j+1
			}
		}
		if best >= 0 {
			return i, bestEnd, int(best)
		}
	}
	return 0, 0, -1
}
