package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/orchard-llm/orchard/termsafe"
)

// bpe is the byte-pair-encoding model of a tokenizer.json. Its merge loop
// reproduces the Rust implementation step for step (a rank-ordered heap
// with lazily discarded entries), so that even unusual merge tables give
// the same ids.
type bpe struct {
	pieces []string         // id → token text; "" for ids the vocab skips
	vocab  map[string]int32 // token text → id
	ascii  [128]int32       // single ASCII byte tokens, -1 when absent
	runes  map[rune]int32   // single non-ASCII rune tokens
	bytes  [256]int32       // "<0xXX>" tokens, -1 when absent
	merges map[uint64]uint64

	unk          int32 // -1 when the model has no unknown token
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
}

// bpeOptions are the scalar members of the "model" object.
type bpeOptions struct {
	Type                    string   `json:"type"`
	Dropout                 *float64 `json:"dropout"`
	UnkToken                *string  `json:"unk_token"`
	ContinuingSubwordPrefix *string  `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string  `json:"end_of_word_suffix"`
	FuseUnk                 bool     `json:"fuse_unk"`
	ByteFallback            bool     `json:"byte_fallback"`
	IgnoreMerges            bool     `json:"ignore_merges"`
}

// parseBPE reads the "model" object at the scanner's position. The vocab
// and merges are read in place, without a separate pass to find them.
func parseBPE(s *scanner) (*bpe, error) {
	m := &bpe{unk: -1, runes: make(map[rune]int32)}
	var (
		opts        bpeOptions
		haveVocab   bool
		mergesSpan  []byte // merges seen before the vocab, read afterwards
		mergesDepth int    // the nesting around them
	)
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "vocab":
			if err := m.readVocab(s); err != nil {
				return fmt.Errorf("vocab: %w", err)
			}
			haveVocab = true
		case "merges":
			if !haveVocab {
				s.skipSpace()
				start := s.pos
				if err := s.skip(); err != nil {
					return fmt.Errorf("merges: %w", err)
				}
				mergesSpan, mergesDepth = s.data[start:s.pos], s.depth
				return nil
			}
			if err := m.readMerges(s); err != nil {
				return fmt.Errorf("merges: %w", err)
			}
		default:
			s.skipSpace()
			start := s.pos
			if err := s.skip(); err != nil {
				return err
			}
			member := fmt.Appendf(nil, "{%q:%s}", key, s.data[start:s.pos])
			if err := json.Unmarshal(member, &opts); err != nil {
				return fmt.Errorf("%s: %w", termsafe.Quote(string(key)), err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("model.%w", err)
	}
	if opts.Type != "" && opts.Type != "BPE" {
		return nil, fmt.Errorf("model type %s is not implemented (only BPE)", termsafe.Quote(opts.Type))
	}
	if !haveVocab {
		return nil, fmt.Errorf("model: missing vocab")
	}
	if mergesSpan != nil {
		if err := m.readMerges(&scanner{data: mergesSpan, depth: mergesDepth}); err != nil {
			return nil, fmt.Errorf("model.merges: %w", err)
		}
	}
	if opts.Dropout != nil && *opts.Dropout != 0 {
		return nil, fmt.Errorf("model: BPE dropout %v is not implemented", *opts.Dropout)
	}
	if opts.ContinuingSubwordPrefix != nil && *opts.ContinuingSubwordPrefix != "" {
		return nil, fmt.Errorf("model: BPE continuing_subword_prefix is not implemented")
	}
	if opts.EndOfWordSuffix != nil && *opts.EndOfWordSuffix != "" {
		return nil, fmt.Errorf("model: BPE end_of_word_suffix is not implemented")
	}
	m.fuseUnk, m.byteFallback, m.ignoreMerges = opts.FuseUnk, opts.ByteFallback, opts.IgnoreMerges
	if opts.UnkToken != nil {
		id, ok := m.vocab[*opts.UnkToken]
		if !ok {
			return nil, fmt.Errorf("model: unk_token %s is not in the vocabulary", termsafe.Quote(*opts.UnkToken))
		}
		m.unk = id
	}
	return m, nil
}

func (m *bpe) readVocab(s *scanner) error {
	type entry struct{ off, end, id int32 }
	var (
		arena   []byte
		entries []entry
		maxID   = -1
	)
	err := s.object(func(key []byte) error {
		id, err := s.integer()
		if err != nil {
			return fmt.Errorf("%s: %w", termsafe.Quote(string(key)), err)
		}
		off := len(arena)
		arena = append(arena, key...)
		entries = append(entries, entry{int32(off), int32(len(arena)), int32(id)})
		maxID = max(maxID, id)
		return nil
	})
	if err != nil {
		return err
	}
	// Ids index the token table, so one past the vocabulary would make a
	// file of a few bytes allocate gigabytes: every id must be below the
	// number of entries.
	if maxID >= len(entries) {
		tok := ""
		for _, e := range entries {
			if int(e.id) == maxID {
				tok = string(arena[e.off:e.end])
			}
		}
		return fmt.Errorf("token %s has id %d, beyond the vocabulary of %d entries (ids 0…%d)",
			termsafe.Quote(tok), maxID, len(entries), len(entries)-1)
	}
	// One string holds all token text; pieces and map keys slice into it.
	text := string(arena)
	m.pieces = make([]string, maxID+1)
	m.vocab = make(map[string]int32, len(entries))
	for i := range m.ascii {
		m.ascii[i] = -1
	}
	for i := range m.bytes {
		m.bytes[i] = -1
	}
	for _, e := range entries {
		tok := text[e.off:e.end]
		if _, dup := m.vocab[tok]; dup {
			return fmt.Errorf("token %s is listed twice", termsafe.Quote(tok))
		}
		if m.pieces[e.id] != "" {
			return fmt.Errorf("id %d is given to both %s and %s", e.id, termsafe.Quote(m.pieces[e.id]), termsafe.Quote(tok))
		}
		m.pieces[e.id] = tok
		m.vocab[tok] = e.id
		if r, n := utf8.DecodeRuneInString(tok); n == len(tok) && n > 0 && (r != utf8.RuneError || n > 1) {
			if r < utf8.RuneSelf {
				m.ascii[r] = e.id
			} else {
				m.runes[r] = e.id
			}
		}
		// Encoding looks byte tokens up by their exact spelling, "<0x0A>";
		// only decoding is lenient about the form (see byteToken).
		if b, ok := byteToken(tok); ok && tok == byteTokenText[b] {
			m.bytes[b] = e.id
		}
	}
	return nil
}

// byteTokenText holds the spellings "<0x00>"…"<0xFF>" byte fallback uses.
var byteTokenText = func() (t [256]string) {
	for b := range t {
		t[b] = fmt.Sprintf("<0x%02X>", b)
	}
	return t
}()

// byteToken reports whether tok is a byte-fallback token "<0xXX>". Upper
// and lower case hex are accepted, as by the Rust decoder.
func byteToken(tok string) (byte, bool) {
	if len(tok) != 6 || !strings.HasPrefix(tok, "<0x") || tok[5] != '>' {
		return 0, false
	}
	hi, ok1 := hexVal(tok[3])
	lo, ok2 := hexVal(tok[4])
	if ok1 && ok2 {
		return hi<<4 | lo, true
	}
	// Rust's u8::from_str_radix also takes a sign: "<0x+F>" is byte 15.
	if tok[3] == '+' && ok2 {
		return lo, true
	}
	return 0, false
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// readMerges reads the merges array in two steps: one pass finds each
// merge's two strings, then goroutines look up their ids. The look-ups,
// three random probes into a 262k-entry map per merge, are most of the
// cost of loading Gemma's file.
func (m *bpe) readMerges(s *scanner) error {
	var (
		spans []mergeSpans
		arena []byte // decoded text of strings with escapes
		buf   []byte
	)
	// span records a string: its place in the input when it had no escapes
	// (off >= 0), else in the arena (off = -1 - arena offset).
	span := func(b []byte, off int) textSpan {
		if off >= 0 {
			return textSpan{int32(off), int32(len(b))}
		}
		at := len(arena)
		arena = append(arena, b...)
		return textSpan{int32(-1 - at), int32(len(b))}
	}
	err := s.array(func() error {
		rank := len(spans)
		switch s.peek() {
		case '"': // legacy form "a b"
			b, off, err := s.rawString(&buf)
			if err != nil {
				return err
			}
			i := bytes.IndexByte(b, ' ')
			if i < 0 || bytes.IndexByte(b[i+1:], ' ') >= 0 {
				return fmt.Errorf("merge %d: %s is not two tokens separated by one space", rank, termsafe.Quote(string(b)))
			}
			offB := off
			if off >= 0 {
				offB = off + i + 1
			}
			spans = append(spans, mergeSpans{span(b[:i], off), span(b[i+1:], offB)})
		case '[':
			var pair mergeSpans
			n := 0
			err := s.array(func() error {
				if n >= 2 {
					return fmt.Errorf("merge %d has more than two tokens", rank)
				}
				b, off, err := s.rawString(&buf)
				if err != nil {
					return err
				}
				if n == 0 {
					pair.a = span(b, off)
				} else {
					pair.b = span(b, off)
				}
				n++
				return nil
			})
			if err != nil {
				return err
			}
			if n != 2 {
				return fmt.Errorf("merge %d does not have two tokens", rank)
			}
			spans = append(spans, pair)
		default:
			return s.errorf("merge %d: expected a string or an array", rank)
		}
		return nil
	})
	if err != nil {
		return err
	}
	text := func(t textSpan) []byte {
		if t.off >= 0 {
			return s.data[t.off : t.off+t.n : t.off+t.n]
		}
		off := -1 - t.off
		return arena[off : off+t.n : off+t.n]
	}

	keys := make([]uint64, len(spans))
	vals := make([]uint64, len(spans))
	workers := max(1, min(runtime.GOMAXPROCS(0), 4, len(spans)/50000))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(spans)/workers, (w+1)*len(spans)/workers
		wg.Go(func() {
			var ab []byte
			for i := lo; i < hi; i++ {
				a, b := text(spans[i].a), text(spans[i].b)
				ida, ok := m.vocab[string(a)]
				if !ok {
					errs[w] = fmt.Errorf("merge %d: token %s is not in the vocabulary", i, termsafe.Quote(string(a)))
					return
				}
				idb, ok := m.vocab[string(b)]
				if !ok {
					errs[w] = fmt.Errorf("merge %d: token %s is not in the vocabulary", i, termsafe.Quote(string(b)))
					return
				}
				ab = append(append(ab[:0], a...), b...)
				idab, ok := m.vocab[string(ab)]
				if !ok {
					errs[w] = fmt.Errorf("merge %d: result %s is not in the vocabulary", i, termsafe.Quote(string(ab)))
					return
				}
				keys[i] = pairKey(ida, idb)
				vals[i] = uint64(i)<<32 | uint64(uint32(idab))
			}
		})
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil {
			return errs[w] // the earliest chunk's error is the first bad merge
		}
	}
	m.merges = make(map[uint64]uint64, len(spans))
	for i, k := range keys {
		// A repeated pair keeps its last rank, as in the Rust map.
		m.merges[k] = vals[i]
	}
	return nil
}

// textSpan locates a merge string; see readMerges.
type textSpan struct{ off, n int32 }

type mergeSpans struct{ a, b textSpan }

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// symbol is one node of the doubly linked list a word is merged in.
type symbol struct {
	id         int32
	prev, next int32
	dead       bool
}

// mergeItem is a heap entry: key orders by rank, then position.
type mergeItem struct {
	key uint64 // rank<<32 | pos
	id  int32  // the token the merge produces
}

// bpeScratch holds the per-call buffers of encodeWord so that steady-state
// encoding does not allocate.
type bpeScratch struct {
	syms []symbol
	heap []mergeItem
}

// encodeWord appends the ids of one pre-tokenized word to out.
func (m *bpe) encodeWord(w string, sc *bpeScratch, out []int) []int {
	if w == "" {
		return out
	}
	if m.ignoreMerges {
		if id, ok := m.vocab[w]; ok {
			return append(out, int(id))
		}
	}
	syms := sc.syms[:0]
	add := func(id int32) {
		n := int32(len(syms))
		syms = append(syms, symbol{id: id, prev: n - 1, next: n + 1})
	}
	pendingUnk := false
	for i := 0; i < len(w); {
		var id int32 = -1
		c := w[i]
		n := 1
		if c < utf8.RuneSelf {
			id = m.ascii[c]
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(w[i:])
			// An invalid byte (n == 1) has no token of its own and goes to
			// byte fallback below.
			if r != utf8.RuneError || n > 1 {
				if v, ok := m.runes[r]; ok {
					id = v
				}
			}
		}
		if id >= 0 {
			if pendingUnk {
				add(m.unk)
				pendingUnk = false
			}
			add(id)
			i += n
			continue
		}
		if m.byteFallback && m.hasBytes(w[i:i+n]) {
			if pendingUnk {
				add(m.unk)
				pendingUnk = false
			}
			for j := i; j < i+n; j++ {
				add(m.bytes[w[j]])
			}
			i += n
			continue
		}
		if m.unk >= 0 {
			if pendingUnk && !m.fuseUnk {
				add(m.unk)
			}
			pendingUnk = true
		}
		i += n
	}
	if pendingUnk {
		add(m.unk)
	}
	if len(syms) == 0 {
		sc.syms = syms
		return out
	}
	syms[len(syms)-1].next = -1
	if len(syms) > 1 && len(m.merges) > 0 {
		sc.heap = m.mergeAll(syms, sc.heap[:0])
	}
	for i := int32(0); i >= 0; i = syms[i].next {
		out = append(out, int(syms[i].id))
	}
	sc.syms = syms
	return out
}

func (m *bpe) hasBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if m.bytes[s[i]] < 0 {
			return false
		}
	}
	return true
}

// mergeAll applies merges in rank order, leftmost first among equal ranks.
func (m *bpe) mergeAll(syms []symbol, h []mergeItem) []mergeItem {
	for i := 0; i+1 < len(syms); i++ {
		if v, ok := m.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			h = append(h, mergeItem{key: v&^0xFFFFFFFF | uint64(i), id: int32(uint32(v))})
		}
	}
	heapify(h)
	for len(h) > 0 {
		top := h[0]
		h = heapPop(h)
		pos := int32(uint32(top.key))
		cur := &syms[pos]
		if cur.dead || cur.next < 0 {
			continue
		}
		nextPos := cur.next
		right := syms[nextPos]
		// Skip entries made stale by earlier merges, as Rust does: only the
		// produced id is compared, not the rank.
		v, ok := m.merges[pairKey(cur.id, right.id)]
		if !ok || int32(uint32(v)) != top.id {
			continue
		}
		cur.id = top.id
		cur.next = right.next
		syms[nextPos].dead = true
		if right.next >= 0 {
			syms[right.next].prev = pos
		}
		if cur.prev >= 0 {
			if v, ok := m.merges[pairKey(syms[cur.prev].id, cur.id)]; ok {
				h = heapPush(h, mergeItem{key: v&^0xFFFFFFFF | uint64(cur.prev), id: int32(uint32(v))})
			}
		}
		if cur.next >= 0 {
			if v, ok := m.merges[pairKey(cur.id, syms[cur.next].id)]; ok {
				h = heapPush(h, mergeItem{key: v&^0xFFFFFFFF | uint64(pos), id: int32(uint32(v))})
			}
		}
	}
	return h
}

// A hand-written binary min-heap: container/heap's interface calls cost
// about a third of the encode time.
func heapify(h []mergeItem) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

func heapPush(h []mergeItem, it mergeItem) []mergeItem {
	h = append(h, it)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].key <= it.key {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = it
	return h
}

func heapPop(h []mergeItem) []mergeItem {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	if n > 1 {
		siftDown(h, 0)
	}
	return h
}

func siftDown(h []mergeItem, i int) {
	it := h[i]
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].key < h[c].key {
			c++
		}
		if it.key <= h[c].key {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = it
}
