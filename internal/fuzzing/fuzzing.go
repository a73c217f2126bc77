// Package fuzzing holds what the fuzz targets of orchard's readers of
// hostile input share: the check that no input makes the reader allocate
// more than a small multiple of its size, and the writer of the seed
// corpus files kept in each package's testdata/fuzz.
package fuzzing

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// Alloc runs fn and fails t if fn allocated more than limit bytes in
// all (whatever it freed again): a reader that sizes a buffer from a
// number in its input, rather than from the input itself, is caught
// even when the machine has the memory. The count is process-wide, so a
// limit should leave a few hundred KiB for the fuzzing machinery.
func Alloc(t testing.TB, limit uint64, fn func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > limit {
		t.Fatalf("allocated %d bytes, more than the %d allowed for this input", n, limit)
	}
}

// SeedsEnv, set to "write", makes WriteSeeds (re)write the seed files.
const SeedsEnv = "ORCHARD_FUZZ_SEEDS"

// WriteSeeds writes each seed to testdata/fuzz/<target>/<name> in the
// format `go test` reads (one []byte value), when SeedsEnv is "write";
// otherwise it does nothing. The committed files are what every
// `go test` run replays, so the probe's cases stay in the normal suite.
func WriteSeeds(t testing.TB, target string, seeds map[string][]byte) {
	t.Helper()
	if os.Getenv(SeedsEnv) != "write" {
		return
	}
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(data)))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// JSONDepth is how deeply arrays and objects nest in data, read as JSON
// text without checking it (strings and their escapes are skipped), so a
// target can hold an accepted document to its reader's depth limit.
func JSONDepth(data []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// Nested is n levels of open, then inner, then n of close: the deep
// nesting seeds ("[[[…]]]", `{"a":{"a":…}}`) are made with it.
func Nested(open, inner, close string, n int) []byte {
	b := make([]byte, 0, n*(len(open)+len(close))+len(inner))
	for range n {
		b = append(b, open...)
	}
	b = append(b, inner...)
	for range n {
		b = append(b, close...)
	}
	return b
}
