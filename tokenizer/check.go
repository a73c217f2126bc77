package tokenizer

import (
	"encoding/json"
	"fmt"

	"github.com/orchard-llm/orchard/termsafe"
)

// Check vouches for a tokenizer.json without building the tokenizer:
// Gemma's takes most of a second to build, and a bundle is checked on
// every `orchard models` and `bundle inspect`. It requires what Parse
// requires of the document's shape — one well-formed JSON object, a BPE
// model whose vocabulary ids are below its size and given once, added
// tokens, normalizer, pre-tokenizer and decoder Parse can build, a BOS id
// within the vocabulary — and leaves the merges' contents to Parse. It
// returns the vocabulary size Parse would give (VocabSize).
func Check(data []byte) (size int, err error) {
	size, _, err = check(data, -1)
	if err != nil {
		return 0, fmt.Errorf("tokenizer: %w", err)
	}
	return size, nil
}

// TokenText returns the text of token id in a document Check accepted,
// for messages; "" if there is none.
func TokenText(data []byte, id int) string {
	_, text, _ := check(data, id)
	return text
}

// check is Check, also returning the text of token want (if want >= 0).
func check(data []byte, want int) (int, string, error) {
	s := &scanner{data: data}
	members := make(map[string]json.RawMessage)
	err := s.object(func(key []byte) error {
		s.skipSpace()
		start := s.pos
		if err := s.skip(); err != nil {
			return err
		}
		members[string(key)] = s.data[start:s.pos]
		return nil
	})
	if err != nil {
		return 0, "", fmt.Errorf("parse tokenizer.json: %w", err)
	}
	if s.peek() != 0 {
		return 0, "", fmt.Errorf("parse tokenizer.json: data after the top-level object")
	}
	if raw, ok := members["version"]; ok {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil || v != "1.0" {
			return 0, "", fmt.Errorf("unknown tokenizer.json version %s", termsafe.Quote(string(raw)))
		}
	}
	model, ok := members["model"]
	if !ok {
		return 0, "", fmt.Errorf("tokenizer.json has no model")
	}
	if _, err := parseNormalizer(members["normalizer"], "normalizer"); err != nil {
		return 0, "", err
	}
	if _, err := parsePreTokenizer(members["pre_tokenizer"], "pre_tokenizer"); err != nil {
		return 0, "", err
	}
	if _, err := parseDecoder(members["decoder"], "decoder"); err != nil {
		return 0, "", err
	}
	tokens, err := parseAddedTokens(members["added_tokens"])
	if err != nil {
		return 0, "", err
	}
	added := map[string]bool{}
	for _, t := range tokens {
		if t.Content != "" {
			added[t.Content] = false // true once found in the vocabulary
		}
	}
	entries, text, err := checkVocab(model, added, want)
	if err != nil {
		return 0, "", fmt.Errorf("model.%w", err)
	}
	// Added tokens missing from the vocabulary get the next ids, in order.
	size := entries
	seen := map[string]bool{}
	for _, t := range tokens {
		if inVocab, ok := added[t.Content]; ok && !inVocab && !seen[t.Content] {
			seen[t.Content] = true
			if size == want {
				text = t.Content
			}
			size++
		}
	}
	if bos, ok := bosID(members["post_processor"]); ok && (bos < 0 || bos >= size) {
		return 0, "", fmt.Errorf("post_processor: BOS token id %d is outside the vocabulary (0…%d)", bos, size-1)
	}
	return size, text, nil
}

// checkVocab scans the model object: its type, and every vocabulary id
// below the number of entries and given once. It marks the added tokens
// it meets and returns the entry count and the text of token want.
func checkVocab(model []byte, added map[string]bool, want int) (int, string, error) {
	s := &scanner{data: model, depth: 1} // the model member of the top-level object
	entries, maxID, maxAt, text := 0, -1, -1, ""
	var ids []int32
	var buf []byte
	haveVocab := false
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "vocab":
			haveVocab = true
			return s.object(func(tok []byte) error {
				id, err := s.integer()
				if err != nil {
					return fmt.Errorf("vocab: %s: %w", termsafe.Quote(string(tok)), err)
				}
				entries++
				ids = append(ids, int32(id))
				if id > maxID {
					maxID, maxAt = id, entries-1
				}
				if id == want {
					text = string(tok)
				}
				if _, ok := added[string(tok)]; ok {
					added[string(tok)] = true
				}
				return nil
			})
		case "type":
			b, _, err := s.rawString(&buf)
			if err != nil {
				return fmt.Errorf("type: %w", err)
			}
			if t := string(b); t != "" && t != "BPE" {
				return fmt.Errorf("type %s is not implemented (only BPE)", termsafe.Quote(t))
			}
			return nil
		}
		return s.skip()
	})
	if err != nil {
		return 0, "", err
	}
	if !haveVocab {
		return 0, "", fmt.Errorf("vocab: missing")
	}
	if maxID >= entries {
		return 0, "", fmt.Errorf("vocab: token %s has id %d, beyond the vocabulary of %d entries (ids 0…%d)",
			termsafe.Quote(nthKey(model, maxAt)), maxID, entries, entries-1)
	}
	given := make([]bool, entries)
	for _, id := range ids {
		if given[id] {
			return 0, "", fmt.Errorf("vocab: id %d is given twice", id)
		}
		given[id] = true
	}
	return entries, text, nil
}

// nthKey is the text of the n-th vocabulary entry of a model object that
// scanned cleanly (for a message).
func nthKey(model []byte, n int) string {
	s := &scanner{data: model, depth: 1} // the model member of the top-level object
	text, i := "", 0
	s.object(func(key []byte) error {
		if string(key) != "vocab" {
			return s.skip()
		}
		return s.object(func(tok []byte) error {
			if i == n {
				text = string(tok)
			}
			i++
			_, err := s.integer()
			return err
		})
	})
	return text
}

// bosID reads the BOS id a TemplateProcessing post-processor names.
func bosID(raw json.RawMessage) (int, bool) {
	if isNull(raw) {
		return 0, false
	}
	var pp struct {
		Type   string `json:"type"`
		Single []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
		} `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int `json:"ids"`
		} `json:"special_tokens"`
	}
	if json.Unmarshal(raw, &pp) != nil || pp.Type != "TemplateProcessing" || len(pp.Single) == 0 || pp.Single[0].SpecialToken == nil {
		return 0, false
	}
	st, ok := pp.SpecialTokens[pp.Single[0].SpecialToken.ID]
	if !ok || len(st.IDs) != 1 {
		return 0, false
	}
	return st.IDs[0], true
}
