//go:build hftokenizers

package tokenizer

import (
	"fmt"
	"math"

	hf "github.com/daulet/tokenizers"
)

// HF encodes and decodes with the Rust tokenizers library through
// github.com/daulet/tokenizers. Building it needs cgo and that library's
// static libtokenizers.a on the linker path. The pure-Go Tokenizer read
// from the same file answers the vocabulary questions the binding does not
// expose (TokenID, IsSpecial) and serves NewStream and the chat template.
type HF struct {
	rust *hf.Tokenizer
	meta *Tokenizer
}

var _ Codec = (*HF)(nil)

func open(path string) (Codec, error) { return LoadHF(path) }

// LoadHF loads a tokenizer.json into the Rust library.
func LoadHF(path string) (*HF, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	meta, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	rust, err := hf.FromBytes(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: rust backend: %w (in %s)", err, path)
	}
	return &HF{rust: rust, meta: meta}, nil
}

// Encode returns the ids of text without adding special tokens.
func (h *HF) Encode(text string) []int {
	ids, _ := h.rust.Encode(text, false)
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

// Decode turns ids back into text; ids outside uint32 are dropped.
func (h *HF) Decode(ids []int, skipSpecial bool) string {
	in := make([]uint32, 0, len(ids))
	for _, id := range ids {
		if id >= 0 && uint64(id) <= math.MaxUint32 {
			in = append(in, uint32(id))
		}
	}
	return h.rust.Decode(in, skipSpecial)
}

// TokenID returns the id of a token's exact text.
func (h *HF) TokenID(s string) (int, bool) { return h.meta.TokenID(s) }

// IsSpecial reports whether id is a special token.
func (h *HF) IsSpecial(id int) bool { return h.meta.IsSpecial(id) }

// VocabSize is one more than the largest id.
func (h *HF) VocabSize() int { return h.meta.VocabSize() }

// Tokenizer returns the pure-Go tokenizer read from the same file, for
// NewStream and NewTemplate.
func (h *HF) Tokenizer() *Tokenizer { return h.meta }

// Close frees the Rust tokenizer.
func (h *HF) Close() error { return h.rust.Close() }
