package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/fuzzing"
)

// maxTOMLAlloc is what reading a config file of n bytes may allocate: go-toml's
// parser keeps a node of about 60 bytes for every value, and a file is
// parsed twice (scanKeys, then the decoder), so a file of one-byte values
// ("[{},{},…]", "[1,1,…]") costs up to about 200 bytes a byte.
func maxTOMLAlloc(n int) uint64 { return 1<<20 + 256*uint64(n) }

// FuzzConfigTOML: a config file, however damaged, is applied or refused
// with errors that each name the file (and line, when there is one);
// never a panic, never memory out of proportion to the file, never an
// error with a control character or a value longer than a line.
func FuzzConfigTOML(f *testing.F) {
	seeds := map[string][]byte{
		"template": Template(func(string) string { return "" }),
		"full":     []byte("[model]\npath = \"~/m\"\nsearch_dirs = [\"a\", \"b\"]\n[sampling]\ntop_k = 40\nseed = 7\n[keys]\nquit = [\"ctrl+q\"]\n"),
	}
	for _, c := range hostileTOML {
		seeds["probe-"+strings.ReplaceAll(c.name, " ", "-")] = []byte(c.file)
	}
	seeds["probe-bom"] = []byte("\ufeff[chat]\nthinking = true\n")
	// At the key limit and at go-toml's nesting limit, where a mutation
	// crosses either way.
	seeds["keys-at-limit"] = []byte(strings.Repeat("a.", MaxKeys-1) + "a = 1\n")
	seeds["arrays-at-nesting-limit"] = append(append([]byte("a = "), fuzzing.Nested("[", "", "]", 10000)...), '\n')
	fuzzing.WriteSeeds(f, "FuzzConfigTOML", seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	// The probe's files and others up to MaxFileBytes, made here rather
	// than kept in testdata: each shape of TestConfigReaderLinear.
	for _, c := range bigTOML {
		f.Add(c.make(MaxFileBytes - 64))
	}
	env := func(k string) string {
		if k == "HOME" {
			return "/home/u"
		}
		return ""
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > MaxFileBytes {
			return // readFile refuses it unread
		}
		c := defaults(env)
		var errs []error
		fuzzing.Alloc(t, maxTOMLAlloc(len(data)), func() {
			errs = c.applyTOML(data, "/c/config.toml", pathCtx{home: "/home/u", base: "/c"}, []string{"quit", "help"})
		})
		for _, err := range errs {
			var ce *Error
			if !errors.As(err, &ce) || ce.Source.Name != "/c/config.toml" {
				t.Fatalf("error %q does not name the file", err)
			}
			if msg := err.Error(); len(msg) > 600 || strings.ContainsAny(msg, "\x1b\x07\x00\r\n") {
				t.Fatalf("error of %d bytes or with control characters: %.300q", len(msg), msg)
			}
		}
	})
}
