package tokenizer

// Codec is what the engine needs from a tokenizer. *Tokenizer implements
// it in pure Go; with the build tag hftokenizers, *HF implements it over
// the Rust library.
type Codec interface {
	Encode(text string) []int
	Decode(ids []int, skipSpecial bool) string
	TokenID(s string) (int, bool)
	IsSpecial(id int) bool
	VocabSize() int
}

var _ Codec = (*Tokenizer)(nil)

// Open loads a tokenizer.json with the backend the binary was built with:
// the pure-Go Tokenizer by default, the Rust library under hftokenizers.
func Open(path string) (Codec, error) { return open(path) }
