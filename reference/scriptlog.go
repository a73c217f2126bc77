package reference

import (
	"bytes"
	"hash/maphash"
)

// scriptLog is what a Scripted runtime knows of the ids in the cache, by
// position: the id fed (−1: a soft row or not known) and the witness row
// the cache held for it afterwards. Positions at or past top were fed for
// another continuation (a rejected draft, an older turn) and are not
// current.
type scriptLog struct {
	ids  []int32
	wit  []byte // ctx rows of wd bytes
	has  []bool // wit holds the position's row
	wd   int
	top  int
	seed maphash.Seed
	// memo maps (position, witness row) → id for everything fed in this
	// process, so a restored cache's ids are found again. Two generations
	// of at most memoCap entries each, maps reused: no allocation per token.
	memo    [2]map[memoKey]int32
	memoCap int
}

type memoKey struct {
	pos int32
	sum uint64
}

// init sizes the log for a context once (a Scripted serves one bundle).
func (l *scriptLog) init(ctx, wd int) {
	if l.ids != nil {
		return
	}
	l.ids, l.has, l.wd = make([]int32, ctx), make([]bool, ctx), wd
	for i := range l.ids {
		l.ids[i] = -1
	}
	l.wit = make([]byte, ctx*wd)
	l.seed = maphash.MakeSeed()
	l.memoCap = 4 * ctx
	l.memo = [2]map[memoKey]int32{make(map[memoKey]int32, l.memoCap), make(map[memoKey]int32, l.memoCap)}
}

// write records id at position q with the witness row the cache now holds
// there (nil: none to keep).
func (l *scriptLog) write(q int, id int32, row []byte) {
	if q < 0 || q >= len(l.ids) {
		return
	}
	l.ids[q] = id
	l.has[q] = len(row) == l.wd && l.wd > 0
	if !l.has[q] {
		return
	}
	copy(l.wit[q*l.wd:(q+1)*l.wd], row)
	if id < 0 {
		return
	}
	if len(l.memo[0]) >= l.memoCap {
		l.memo[0], l.memo[1] = l.memo[1], l.memo[0]
		clear(l.memo[0])
	}
	l.memo[0][l.key(q, row)] = id
}

func (l *scriptLog) key(q int, row []byte) memoKey {
	return memoKey{int32(q), maphash.Bytes(l.seed, row)}
}

// holds reports whether the log's current witness row at q is row.
func (l *scriptLog) holds(q int, row []byte) bool {
	return q < l.top && l.has[q] && bytes.Equal(l.wit[q*l.wd:(q+1)*l.wd], row)
}

// resync rebuilds positions [0, base) from the cache's witness rows:
// each id from the memo, unknown where the memo never saw that row.
func (l *scriptLog) resync(base int, rowAt func(q int) []byte) {
	for q := range min(base, len(l.ids)) {
		row := rowAt(q)
		l.ids[q], l.has[q] = -1, len(row) == l.wd
		if !l.has[q] {
			continue
		}
		copy(l.wit[q*l.wd:(q+1)*l.wd], row)
		k := l.key(q, row)
		for _, m := range l.memo {
			if id, ok := m[k]; ok {
				l.ids[q] = id
				break
			}
		}
	}
	l.top = base
}
