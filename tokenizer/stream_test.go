package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// streamAll pushes ids one at a time and checks that no chunk splits a
// character.
func streamAll(t *testing.T, tok *Tokenizer, ids []int, skipSpecial bool) string {
	t.Helper()
	s := NewStream(tok, skipSpecial)
	var b strings.Builder
	for _, id := range ids {
		chunk := s.Push(id)
		if !utf8.ValidString(chunk) {
			t.Fatalf("Push(%d) returned invalid UTF-8 %q", id, chunk)
		}
		b.WriteString(chunk)
	}
	b.WriteString(s.Flush())
	return b.String()
}

func TestStreamMatchesDecode(t *testing.T) {
	tok := synthTokenizer(t, 512)
	for _, text := range corpusTexts(t, 600) {
		if !utf8.ValidString(text) {
			continue
		}
		ids := tok.Encode(text)
		for _, skip := range []bool{false, true} {
			want := tok.Decode(ids, skip)
			if got := streamAll(t, tok, ids, skip); got != want {
				t.Fatalf("stream of Encode(%.60q), skip=%v:\n got %q\nwant %q", text, skip, got, want)
			}
		}
	}
}

func TestStreamGemma(t *testing.T) {
	tok := loadGemma(t)
	for _, text := range corpusTexts(t, 300) {
		ids := tok.Encode(text)
		if got, want := streamAll(t, tok, ids, false), tok.Decode(ids, false); got != want {
			t.Fatalf("stream of Encode(%.60q):\n got %q\nwant %q", text, got, want)
		}
	}
}

func TestStreamByteFallback(t *testing.T) {
	tok := synthTokenizer(t, 512)
	b := func(x byte) int { return int(tok.model.bytes[x]) }
	a, _ := tok.TokenID("a")
	eos, _ := tok.TokenID("<eos>")
	tests := []struct {
		name   string
		ids    []int
		skip   bool
		chunks []string // what each Push returns, then Flush
	}{
		{"three-byte char waits for its last byte", []int{b(0xE6), b(0x97), b(0xA5), a},
			false, []string{"", "", "日", "a", ""}},
		{"four-byte emoji", []int{a, b(0xF0), b(0x9F), b(0x98), b(0x80)},
			false, []string{"a", "", "", "", "😀", ""}},
		{"incomplete char at the end is flushed", []int{a, b(0xE6), b(0x97)},
			false, []string{"a", "", "", "��"}},
		{"invalid byte after a valid char", []int{b(0xC3), b(0xA9), b(0xFF), a},
			false, []string{"", "é", "", "�a", ""}},
		{"skipped special token", []int{a, eos, a},
			true, []string{"a", "", "a", ""}},
		{"special token kept", []int{a, eos, a},
			false, []string{"a", "<eos>", "a", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStream(tok, tt.skip)
			var got []string
			for _, id := range tt.ids {
				got = append(got, s.Push(id))
			}
			got = append(got, s.Flush())
			if strings.Join(got, "|") != strings.Join(tt.chunks, "|") {
				t.Errorf("chunks = %q, want %q", got, tt.chunks)
			}
		})
	}
}

// TestStreamBoundedWindow checks the constant-work promise: the window
// never grows past maxPending pending ids plus the last emitted group,
// whatever the ids are.
func TestStreamBoundedWindow(t *testing.T) {
	tok := synthTokenizer(t, 512)
	eos, _ := tok.TokenID("<eos>")
	s := NewStream(tok, true)
	var out strings.Builder
	for i := 0; i < 10000; i++ {
		id := int(tok.model.bytes[0xFF]) // never valid UTF-8
		if i%3 == 0 {
			id = eos
		}
		out.WriteString(s.Push(id))
		if len(s.ids) > 2*maxPending {
			t.Fatalf("after %d ids the window holds %d", i+1, len(s.ids))
		}
	}
	out.WriteString(s.Flush())
	if !strings.Contains(out.String(), "\uFFFD") {
		t.Errorf("invalid bytes produced no U+FFFD")
	}
}

// TestStreamRandomIDs: random id sequences (any token, spaces and
// specials included) stream to exactly what Decode gives whenever the ids
// spell valid text — the fast path and the window path agree.
func TestStreamRandomIDs(t *testing.T) {
	tok := synthTokenizer(t, 512)
	rng := rand.New(rand.NewPCG(4, 2))
	space, _ := tok.TokenID("▁")
	for range 3000 {
		n := 1 + rng.IntN(24)
		ids := make([]int, n)
		for i := range ids {
			switch rng.IntN(5) {
			case 0:
				ids[i] = space
			default:
				ids[i] = rng.IntN(tok.VocabSize())
			}
		}
		for _, skip := range []bool{false, true} {
			want := tok.Decode(ids, skip)
			if strings.ContainsRune(want, utf8.RuneError) {
				continue
			}
			if got := streamAll(t, tok, ids, skip); got != want {
				t.Fatalf("ids %v skip=%v:\n got %q\nwant %q", ids, skip, got, want)
			}
		}
	}
}

// TestStreamFastPathAllocatesNothing: once text has been emitted, a plain
// token costs no allocation.
func TestStreamFastPathAllocatesNothing(t *testing.T) {
	tok := synthTokenizer(t, 512)
	ids := tok.Encode("the orchard had apples and pears and plums")
	s := NewStream(tok, false)
	s.Push(ids[0])
	s.Push(ids[1])
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		s.Push(ids[2+i%(len(ids)-2)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per token", allocs)
	}
}
