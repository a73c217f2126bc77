package tokenizer

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// BenchmarkEncodeGemma encodes the conformance corpus with the real Gemma
// tokenizer; oracle/bench.sh runs it beside the Rust library.
func BenchmarkEncodeGemma(b *testing.B) {
	tok := loadGemma(b)
	texts := corpusTexts(b, 0)
	benchEncode(b, tok, texts)
}

func BenchmarkEncodeSynth(b *testing.B) {
	benchEncode(b, synthTokenizer(b, 4096), corpusTexts(b, 0))
}

func benchEncode(b *testing.B, tok *Tokenizer, texts []string) {
	size := 0
	for _, s := range texts {
		size += len(s)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	tokens := 0
	for b.Loop() {
		for _, s := range texts {
			tokens += len(tok.Encode(s))
		}
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkStreamDecode pushes the corpus's ids through a Stream, one at
// a time, as a model would produce them.
func BenchmarkStreamDecode(b *testing.B) {
	tok := loadGemma(b)
	var ids []int
	for _, s := range corpusTexts(b, 0) {
		ids = append(ids, tok.Encode(s)...)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		s := NewStream(tok, true)
		for _, id := range ids {
			s.Push(id)
		}
		s.Flush()
		n += len(ids)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/token")
}

func BenchmarkDecodeGemma(b *testing.B) {
	tok := loadGemma(b)
	var lists [][]int
	for _, s := range corpusTexts(b, 0) {
		lists = append(lists, tok.Encode(s))
	}
	for b.Loop() {
		for _, ids := range lists {
			tok.Decode(ids, false)
		}
	}
}

func BenchmarkLoadGemma(b *testing.B) {
	requireOracle(b, gemmaPath)
	data, err := os.ReadFile(gemmaPath)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadBudget checks the memory budget for the 33 MB Gemma file: under
// 200 MB held. The time it takes is a benchmark's business
// (BenchmarkLoadGemma); it is logged here, never asserted, so a busy
// machine cannot fail the suite.
func TestLoadBudget(t *testing.T) {
	requireOracle(t, gemmaPath)
	if raceEnabled {
		t.Skip("the budget is for normal builds; the race detector multiplies time and memory")
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	tok, err := Load(gemmaPath)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	peak := after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&after)
	live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("load %v; allocated %d MB in all, %d MB live after GC", elapsed.Round(time.Millisecond), peak>>20, live>>20)
	if live > 200<<20 {
		t.Errorf("loaded tokenizer holds %d MB, budget 200 MB", live>>20)
	}
	runtime.KeepAlive(tok)
}

// BenchmarkCheckGemma is the bundle check of the real Gemma tokenizer,
// against BenchmarkLoadGemma's full parse.
func BenchmarkCheckGemma(b *testing.B) {
	data, err := os.ReadFile(gemmaPath)
	if err != nil {
		b.Skip("the Gemma tokenizer is not installed (oracle/install.sh)")
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Check(data); err != nil {
			b.Fatal(err)
		}
	}
}
