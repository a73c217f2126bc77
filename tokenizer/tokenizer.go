package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/orchard-llm/orchard/regfile"
	"github.com/orchard-llm/orchard/termsafe"
)

// Tokenizer encodes text to token ids and back.
type Tokenizer struct {
	model      *bpe
	added      *addedVocab
	normalizer normalizer
	pre        preTokenizer
	decoder    decoder

	idText    []string // id → token text as the decoder sees it
	idKind    []uint8  // id → kindNone, kindNormal or kindSpecial
	pieces    *pieces  // the streaming fast path (nil when the decoder chain does not allow it)
	bos       int      // -1 when the file names no BOS token
	scratches sync.Pool
}

const (
	kindNone uint8 = iota
	kindNormal
	kindSpecial
)

// encodeScratch holds the buffers one Encode call needs.
type encodeScratch struct {
	raw, norm []piece
	words     []string
	bpe       bpeScratch
}

// MaxFileBytes bounds a tokenizer.json (Gemma's is 33 MB).
const MaxFileBytes = 512 << 20

// ReadFile reads a tokenizer.json: a regular file of at most MaxFileBytes.
func ReadFile(path string) ([]byte, error) {
	data, err := regfile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return data, nil
}

// Load reads and parses a tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return t, nil
}

// Parse builds a Tokenizer from the contents of a tokenizer.json file. A
// component the package does not implement is an error naming it, never a
// silently different encoding.
func Parse(data []byte) (*Tokenizer, error) {
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return t, nil
}

func parse(data []byte) (*Tokenizer, error) {
	t := &Tokenizer{bos: -1}
	s := &scanner{data: data}
	members := make(map[string]json.RawMessage)
	err := s.object(func(key []byte) error {
		if string(key) == "model" {
			var err error
			t.model, err = parseBPE(s)
			return err
		}
		s.skipSpace()
		start := s.pos
		if err := s.skip(); err != nil {
			return err
		}
		members[string(key)] = s.data[start:s.pos]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("parse tokenizer.json: %w", err)
	}
	if s.peek() != 0 {
		return nil, fmt.Errorf("parse tokenizer.json: data after the top-level object")
	}
	if raw, ok := members["version"]; ok {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil || v != "1.0" {
			return nil, fmt.Errorf("unknown tokenizer.json version %s", termsafe.Quote(string(raw)))
		}
	}
	for _, k := range []string{"truncation", "padding"} {
		if raw, ok := members[k]; ok && !isNull(raw) {
			return nil, fmt.Errorf("%s is not implemented (it must be null)", k)
		}
	}
	if t.model == nil {
		return nil, fmt.Errorf("tokenizer.json has no model")
	}
	if t.normalizer, err = parseNormalizer(members["normalizer"], "normalizer"); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(members["pre_tokenizer"], "pre_tokenizer"); err != nil {
		return nil, err
	}
	if t.decoder, err = parseDecoder(members["decoder"], "decoder"); err != nil {
		return nil, err
	}
	tokens, err := parseAddedTokens(members["added_tokens"])
	if err != nil {
		return nil, err
	}
	t.added = buildAddedVocab(tokens, t.model, t.normalizer)
	t.buildIDTables()
	if t.bos, err = findBOS(members["post_processor"], t); err != nil {
		return nil, err
	}
	t.scratches.New = func() any { return new(encodeScratch) }
	return t, nil
}

func (t *Tokenizer) buildIDTables() {
	n := len(t.model.pieces)
	for id := range t.added.byID {
		n = max(n, id+1)
	}
	t.idText = make([]string, n)
	t.idKind = make([]uint8, n)
	for id, p := range t.model.pieces {
		if p != "" {
			t.idText[id], t.idKind[id] = p, kindNormal
		}
	}
	if _, ok := t.model.vocab[""]; ok {
		t.idKind[t.model.vocab[""]] = kindNormal
	}
	for id, tok := range t.added.byID {
		text := tok.Content
		if form, ok := t.added.decodeAs[id]; ok {
			text = form
		}
		t.idText[id], t.idKind[id] = text, kindNormal
	}
	// Rust decides "special" by the token's text, so a model token that
	// spells a special token is special too.
	for id := range t.idText {
		if t.idKind[id] != kindNone && t.added.special[t.idText[id]] {
			t.idKind[id] = kindSpecial
		}
	}
	t.pieces = newPieces(t)
}

// findBOS reads the BOS token from a TemplateProcessing post-processor, or
// else takes the added token "<bos>" or "<s>". Post-processing itself is
// never applied: Encode adds no special tokens; the chat template does.
func findBOS(raw json.RawMessage, t *Tokenizer) (int, error) {
	if !isNull(raw) {
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
		if err := json.Unmarshal(raw, &pp); err != nil {
			return -1, fmt.Errorf("post_processor: %w", err)
		}
		if pp.Type == "TemplateProcessing" && len(pp.Single) > 0 && pp.Single[0].SpecialToken != nil {
			if st, ok := pp.SpecialTokens[pp.Single[0].SpecialToken.ID]; ok && len(st.IDs) == 1 {
				if id := st.IDs[0]; id < 0 || id >= t.VocabSize() {
					return -1, fmt.Errorf("post_processor: BOS token id %d is outside the vocabulary (0…%d)", id, t.VocabSize()-1)
				}
				return st.IDs[0], nil
			}
		}
	}
	for _, name := range []string{"<bos>", "<s>"} {
		if id, ok := t.TokenID(name); ok {
			return id, nil
		}
	}
	return -1, nil
}

// Encode returns the token ids of text. No special tokens are added, but
// special-token text in the input ("<bos>", "<|turn>") becomes that token,
// as in Hugging Face's encode(text, add_special_tokens=False).
func (t *Tokenizer) Encode(text string) []int {
	return t.encode(text, false)
}

// EncodeLiteral is Encode with special tokens spelled out as ordinary text
// (Hugging Face's encode_special_tokens), so that user text cannot inject
// control tokens. Non-special added tokens still match.
func (t *Tokenizer) EncodeLiteral(text string) []int {
	return t.encode(text, true)
}

func (t *Tokenizer) encode(text string, literal bool) []int {
	sc := t.scratches.Get().(*encodeScratch)
	defer t.scratches.Put(sc)
	return t.appendEncoded(make([]int, 0, len(text)/3+2), text, literal, sc)
}

// appendEncoded runs the pipeline: added tokens in the raw text, the
// normalizer, added tokens in the normalized text, the pre-tokenizer, BPE.
func (t *Tokenizer) appendEncoded(out []int, text string, literal bool, sc *encodeScratch) []int {
	raw := t.added.split(t.added.raw, text, literal, sc.raw[:0])
	for _, p := range raw {
		if p.id >= 0 {
			out = append(out, p.id)
			continue
		}
		s := p.text
		if t.normalizer != nil {
			s = t.normalizer.normalize(s)
		}
		norm := t.added.split(t.added.norm, s, literal, sc.norm[:0])
		for _, q := range norm {
			if q.id >= 0 {
				out = append(out, q.id)
				continue
			}
			if t.pre == nil {
				out = t.model.encodeWord(q.text, &sc.bpe, out)
				continue
			}
			words := t.pre.split(q.text, sc.words[:0])
			for _, w := range words {
				out = t.model.encodeWord(w, &sc.bpe, out)
			}
			sc.words = words[:0]
		}
		sc.norm = norm[:0]
	}
	sc.raw = raw[:0]
	return out
}

// Decode turns ids back into text. Unknown ids are dropped, as in Rust;
// with skipSpecial, special tokens are too.
func (t *Tokenizer) Decode(ids []int, skipSpecial bool) string {
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		if id < 0 || id >= len(t.idKind) {
			continue
		}
		switch t.idKind[id] {
		case kindNone:
			continue
		case kindSpecial:
			if skipSpecial {
				continue
			}
		}
		tokens = append(tokens, t.idText[id])
	}
	if t.decoder == nil {
		return strings.Join(tokens, " ")
	}
	return strings.Join(t.decoder.decodeChain(tokens), "")
}

// TokenID returns the id of a token's exact text: an added token or a
// vocabulary entry such as "<0x0A>" or "▁the".
func (t *Tokenizer) TokenID(s string) (int, bool) {
	if id, ok := t.added.byContent[s]; ok {
		return id, true
	}
	if id, ok := t.model.vocab[s]; ok {
		return int(id), true
	}
	return 0, false
}

// Token returns the text of token id as stored in the file, or false for
// an id the tokenizer does not have.
func (t *Tokenizer) Token(id int) (string, bool) {
	if id < 0 || id >= len(t.idKind) || t.idKind[id] == kindNone {
		return "", false
	}
	return t.idText[id], true
}

// IsSpecial reports whether id is a special token, one that Decode skips
// when asked to.
func (t *Tokenizer) IsSpecial(id int) bool {
	return id >= 0 && id < len(t.idKind) && t.idKind[id] == kindSpecial
}

// VocabSize is one more than the largest id: the size of a model's
// embedding and output layers for this tokenizer.
func (t *Tokenizer) VocabSize() int { return len(t.idKind) }

// BOS returns the beginning-of-sequence token: the one the file's
// post-processor would add, else "<bos>" or "<s>".
func (t *Tokenizer) BOS() (int, bool) { return t.bos, t.bos >= 0 }

// AddedTokens returns the added tokens with the ids the tokenizer gives
// them, in id order.
func (t *Tokenizer) AddedTokens() []AddedToken {
	out := make([]AddedToken, 0, len(t.added.byID))
	for id := range t.idKind {
		if tok, ok := t.added.byID[id]; ok {
			out = append(out, *tok)
		}
	}
	return out
}
