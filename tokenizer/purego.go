//go:build !hftokenizers

package tokenizer

func open(path string) (Codec, error) { return Load(path) }
