// Package tokenizer reads Hugging Face tokenizer.json files and encodes and
// decodes text exactly as the Rust tokenizers library does, for the
// SentencePiece-style BPE files Gemma ships: byte fallback, ▁ for spaces,
// and thousands of added tokens. It also renders the Gemma 4 chat format
// (Template) and turns token ids back into text as a model streams them
// (Stream).
//
// Implemented components: the BPE model (merge ranks, byte_fallback,
// ignore_merges, unk_token and fuse_unk); added tokens with their special,
// single_word, lstrip, rstrip and normalized flags; the normalizers
// Sequence, Replace, Prepend, NFC, NFKC, NFD and NFKD; the pre-tokenizers
// Sequence and Split; the decoders Sequence, Replace, ByteFallback, Fuse and
// Strip. Replace and Split take literal String patterns only. Anything
// else a file declares is a load error that names it.
//
// Encode never adds special tokens; the chat template adds the one BOS.
// The post-processor is read only to learn which token is BOS.
//
// Conformance is tested against the Rust library on the real Gemma 3
// tokenizer.json; see oracle/README.md. With the build tag hftokenizers,
// Open uses the Rust library itself through github.com/daulet/tokenizers.
//
// A Tokenizer is safe for concurrent use.
package tokenizer
