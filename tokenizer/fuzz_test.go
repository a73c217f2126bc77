package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEncode checks that Encode never panics and that valid UTF-8 round
// trips. The synthetic tokenizer has Gemma's structure, under which the
// only lossy step is the normalizer turning spaces into ▁ (decoded as
// spaces), so a literal ▁ comes back as a space.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", "hello world", "  x\t\n", "<bos><|turn>user\n", "▁▁", "日本語 😀", "\xff\xfe", "<0x41>", "a\u0301"} {
		f.Add(s)
	}
	tok := synthTokenizer(f, 512)
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		lit := tok.EncodeLiteral(s)
		for _, id := range append(ids, lit...) {
			if id < 0 || id >= tok.VocabSize() {
				t.Fatalf("Encode(%q) produced id %d", s, id)
			}
		}
		if !utf8.ValidString(s) {
			return
		}
		want := strings.ReplaceAll(s, "▁", " ")
		if got := tok.Decode(ids, false); got != want {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
		if got := tok.Decode(lit, false); got != want {
			t.Fatalf("Decode(EncodeLiteral(%q)) = %q", s, got)
		}
		stream := NewStream(tok, false)
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(stream.Push(id))
		}
		b.WriteString(stream.Flush())
		if b.String() != want {
			t.Fatalf("stream of Encode(%q) = %q", s, b.String())
		}
	})
}
