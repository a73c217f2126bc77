package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileCases are tokenizer.json files a probe used to break the
// reader, with what the error must say. They seed FuzzParse too.
var hostileCases = []struct {
	what, json, want string
}{
	{"id past the vocabulary", `{"model":{"type":"BPE","vocab":{"a":0,"b":2000000000},"merges":[]}}`,
		`model.vocab: token "b" has id 2000000000, beyond the vocabulary of 2 entries (ids 0…1)`},
	{"id at the int32 limit", `{"model":{"vocab":{"a":2147483647}}}`, `token "a" has id 2147483647, beyond the vocabulary of 1 entries`},
	{"id past the int32 limit", `{"model":{"vocab":{"a":2147483648}}}`, `integer out of range`},
	{"id past the integer limit", `{"model":{"vocab":{"a":99999999999}}}`, `integer out of range`},
	{"negative id", `{"model":{"vocab":{"a":-1}}}`, `expected a non-negative integer`},
	{"empty", ``, `unexpected end of JSON`},
	{"truncated", `{"model":{"type":"BPE","vocab":{"a":0,"b":1},"mer`, `unexpected end of JSON`},
	{"garbage", "\x00\xff garbage", `expected '{'`},
	{"not an object", `[1,2,3]`, `expected '{'`},
	{"no model", `{"version":"1.0"}`, `has no model`},
	{"trailing data", `{"model":{"vocab":{"a":0}}} {}`, `data after the top-level object`},
	{"bos past the vocabulary", `{"model":{"vocab":{"<bos>":0,"a":1}},"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<bos>"}}],"special_tokens":{"<bos>":{"ids":[70000]}}}}`,
		`BOS token id 70000 is outside the vocabulary (0…1)`},
	{"deep nesting", `{"model":{"vocab":{"a":0}},"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
		`nested deeper than the limit of 128 levels`},
	{"deep nesting in the model", `{"model":{"vocab":{"a":0},"x":` + strings.Repeat(`{"a":`, 200) + `0` + strings.Repeat("}", 200) + `}}`,
		`nested deeper than the limit of 128 levels`},
	{"escape in a type", "{\"model\":{\"type\":\"\\u001b]0;x\\u0007\",\"vocab\":{}}}", `model type "\x1b]0;x\a" is not implemented`},
}

func TestHostileTokenizerFiles(t *testing.T) {
	for _, c := range hostileCases {
		t.Run(c.what, func(t *testing.T) {
			_, err := Parse([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse: %v, want %q", err, c.want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\x07") {
				t.Errorf("the error carries control characters: %q", err)
			}
		})
	}
}

// A huge token in an error is quoted in a hundred bytes, not whole.
func TestErrorsCutLongValues(t *testing.T) {
	huge := strings.Repeat("x", 8<<20) // the probe used 50 MB; any size past the cut shows it
	for _, doc := range []string{
		`{"model":{"vocab":{"` + huge + `":"not a number"}}}`,
		`{"model":{"vocab":{"a":0},"merges":["a ` + huge + `"]}}`,
		`{"model":{"type":"` + huge + `","vocab":{}}}`,
	} {
		_, err := Parse([]byte(doc))
		if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "bytes)") {
			t.Errorf("error of %d bytes: %.300v", len(err.Error()), err)
		}
	}
}

// Arrays and objects nest at most MaxDepth levels, as serde_json allows:
// the probe's 16 MB file of 8,000,000 levels overflowed the stack of
// `bundle inspect`, `orchard models` and the picker (a crash no recover
// catches). Check, Parse and Load refuse it, Load naming the file; the
// limit itself is exact.
func TestDeepNesting(t *testing.T) {
	const n = 8_000_000
	deep := []byte(`{"model":{"vocab":{"a":0}},"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, deep, 0o600); err != nil {
		t.Fatal(err)
	}
	_, perr := Parse(deep)
	_, cerr := Check(deep)
	_, lerr := Load(path)
	for _, err := range []error{perr, cerr, lerr} {
		if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "nested deeper than the limit of 128 levels") {
			t.Errorf("%v, want ErrTooDeep", err)
		}
	}
	if lerr == nil || !strings.Contains(lerr.Error(), path) {
		t.Errorf("Load's error does not name the file: %v", lerr)
	}
	// The top-level object is the first level: 127 arrays inside it are
	// the most a member can hold, wherever it is (merges after the vocab
	// are read as strings or pairs, which nest no further).
	nest := func(k int) string { return strings.Repeat("[", k) + strings.Repeat("]", k) }
	for _, c := range []struct {
		doc  func(k int) string
		deep int // levels inside the top-level object at the limit
	}{
		{func(k int) string { return `{"model":{"vocab":{"a":0}},"x":` + nest(k) + `}` }, MaxDepth - 1},
		{func(k int) string { return `{"model":{"vocab":{"a":0},"x":` + nest(k) + `}}` }, MaxDepth - 2},
		{func(k int) string { return `{"model":{"merges":[` + nest(k) + `],"vocab":{"a":0}}}` }, MaxDepth - 3},
	} {
		at, past := c.doc(c.deep), c.doc(c.deep+1)
		for _, f := range []func([]byte) error{
			func(b []byte) error { _, err := Parse(b); return err },
			func(b []byte) error { _, err := Check(b); return err },
		} {
			if err := f([]byte(at)); errors.Is(err, ErrTooDeep) {
				t.Errorf("%.60s…: %v at the limit", at, err)
			}
			if err := f([]byte(past)); !errors.Is(err, ErrTooDeep) {
				t.Errorf("%.60s…: %v past the limit", past, err)
			}
		}
	}
}

// A bogus id costs memory in proportion to the file, not to the id.
func TestLargeIdAllocatesNothing(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	Parse([]byte(`{"model":{"vocab":{"a":0,"b":2000000000}}}`))
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("parsing a 40-byte file allocated %d bytes", grew)
	}
}

// Load reads regular files only and never blocks on a FIFO.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "tokenizer.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("Load(fifo): %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load(/dev/zero): %v", err)
	}
	os.Remove(fifo)
}

// Check refuses what Parse refuses about a document's shape and ids, and
// agrees with Parse on the vocabulary size.
func TestCheckAgreesWithParse(t *testing.T) {
	for _, c := range hostileCases {
		if _, err := Check([]byte(c.json)); err == nil {
			t.Errorf("%s: Check accepted what Parse refuses (%s)", c.what, c.want)
		}
	}
	for _, n := range []int{MinSynthVocab, 512, 4096} {
		data := synthJSON(t, n)
		tok, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		size, err := Check(data)
		if err != nil || size != tok.VocabSize() {
			t.Errorf("synth %d: Check = %d, %v; Parse = %d", n, size, err, tok.VocabSize())
		}
		last, _ := tok.Token(size - 1)
		if got := TokenText(data, size-1); got != last {
			t.Errorf("synth %d: TokenText = %q, want %q", n, got, last)
		}
	}
	if data, err := os.ReadFile(gemmaPath); err == nil {
		tok, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if size, err := Check(data); err != nil || size != tok.VocabSize() {
			t.Errorf("Gemma: Check = %d, %v; Parse = %d", size, err, tok.VocabSize())
		}
	}
	if _, err := Check([]byte(`{"model":{"vocab":{"a":0,"a":1}}}`)); err != nil {
		t.Log("(Check leaves duplicate keys to Parse)")
	}
	if _, err := Parse([]byte(`{"model":{"vocab":{"a":0,"a":1}}}`)); err == nil || !strings.Contains(err.Error(), `token "a" is listed twice`) {
		t.Errorf("Parse of a duplicate token: %v", err)
	}
}
