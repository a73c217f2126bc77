package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	for _, c := range []struct{ in, line, text string }{
		{"plain café 😀", "plain café 😀", "plain café 😀"},
		{"", "", ""},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"\x1b[2J", `\x1b[2J`, `\x1b[2J`},
		{"\x1b]52;c;aGk=\x1b\\", `\x1b]52;c;aGk=\x1b\`, `\x1b]52;c;aGk=\x1b\`},
		{"a\nb\tc\rd", `a\nb\tc\rd`, "a\nb\tc\\rd"},
		{"del\x7f", `del\x7f`, `del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`, `c1 \u009b31m`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`, `evil\u202egnp.exe`},
		{"iso \u2066x\u2069 \u200f", `iso \u2066x\u2069 \u200f`, `iso \u2066x\u2069 \u200f`},
		{"sep\u2028x", `sep\u2028x`, `sep\u2028x`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
		{"nul\x00", `nul\x00`, `nul\x00`},
		{"zwj 👩\u200d💻 kept", "zwj 👩\u200d💻 kept", "zwj 👩\u200d💻 kept"},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := Safe(c.in); got != (c.in == c.text) {
			t.Errorf("Safe(%q) = %v", c.in, got)
		}
		if got := SafeLine(c.in); got != (c.in == c.line) {
			t.Errorf("SafeLine(%q) = %v", c.in, got)
		}
	}
}

// TestNothingEscapes: whatever the input, the output holds no byte a
// terminal acts on (no C0 but newline and tab, no DEL, no C1, no bidi).
func TestNothingEscapes(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	all.WriteString("\xff\xc2\xe2\x80")
	for _, out := range []string{Line(all.String()), Text(all.String())} {
		for _, r := range out {
			if unsafe(r) && r != '\n' && r != '\t' || r == utf8.RuneError {
				t.Fatalf("%U got through", r)
			}
		}
	}
	if strings.ContainsAny(Line(all.String()), "\n\t") {
		t.Fatal("Line kept a newline or tab")
	}
}

func TestSafeFastPathDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("a plain line of text ", 20)
	if n := testing.AllocsPerRun(100, func() { _ = Text(s); _ = Line(s) }); n != 0 {
		t.Fatalf("%v allocations for safe text", n)
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("ok\x1b"); got != `"ok\x1b"` {
		t.Errorf("Quote = %s", got)
	}
	long := strings.Repeat("é", 10_000_000) // 20 MB
	got := Quote(long)
	if len(got) > MaxQuote+40 || !strings.HasSuffix(got, "… (20000000 bytes)") || !utf8.ValidString(got) {
		t.Errorf("Quote of 20 MB = %.200s (%d bytes)", got, len(got))
	}
	if got := Quote("\u202e"); got != `"\u202e"` {
		t.Errorf("Quote(bidi) = %s", got)
	}
}

func TestJSON(t *testing.T) {
	v := map[string]any{"name": "a\x1b]0;x\x07\x7f\u009b\u202e\u2028b", "list": []string{"\n", "ok"}}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(raw)
	for _, r := range string(out) {
		if unsafe(r) && r != '\n' {
			t.Fatalf("%U left raw in %s", r, out)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("escaped JSON does not parse: %v\n%s", err, out)
	}
	if back["name"] != v["name"] {
		t.Fatalf("value changed: %q", back["name"])
	}
	if !bytes.Contains(out, []byte("\n  ")) {
		t.Fatal("indentation lost")
	}
	plain := []byte(`{"a": 1}`)
	if got := JSON(plain); &got[0] != &plain[0] {
		t.Error("safe JSON was copied")
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	n, err := w.Write([]byte("error: \x1b[2Jbad\nnext\tline"))
	if err != nil || n != len("error: \x1b[2Jbad\nnext\tline") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := b.String(); got != "error: \\x1b[2Jbad\nnext\tline" {
		t.Fatalf("wrote %q", got)
	}
}
