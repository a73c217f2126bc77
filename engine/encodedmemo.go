package engine

// DefaultKeepEncoded is the bytes of soft rows kept by sha256 for files
// sent again: about a hundred E2B pictures.
const DefaultKeepEncoded = 128 << 20

// KeepEncoded sets the bytes of soft rows kept for files sent again (0:
// DefaultKeepEncoded; negative: none); the least recently used go first.
func (e *Encoders) KeepEncoded(bytes int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keepBytes = bytes
	e.memo.trim(e.memoBudget())
	e.count(func(st *MediaStats) { st.Kept, st.KeptBytes = len(e.memo.m), e.memo.bytes })
}

func (e *Encoders) memoBudget() int64 {
	switch {
	case e.keepBytes == 0:
		return DefaultKeepEncoded
	case e.keepBytes < 0:
		return 0
	}
	return e.keepBytes
}

// encodedMemo keeps encoded files by kind and sha256, least recently
// used out first past a byte budget.
type encodedMemo struct {
	m     map[string]*memoEntry
	bytes int64
	clock uint64
}

type memoEntry struct {
	enc  *Encoded
	size int64
	used uint64
}

func (m *encodedMemo) get(kind, sha string) *Encoded {
	ent := m.m[kind+":"+sha]
	if ent == nil {
		return nil
	}
	m.clock++
	ent.used = m.clock
	return ent.enc
}

func (m *encodedMemo) put(kind string, enc *Encoded, budget int64) {
	var size int64
	for _, r := range enc.Rows {
		size += int64(2 * len(r))
	}
	if size > budget {
		return
	}
	if m.m == nil {
		m.m = map[string]*memoEntry{}
	}
	key := kind + ":" + enc.Attachment.SHA256
	if old := m.m[key]; old != nil {
		m.bytes -= old.size
	}
	m.clock++
	kept := &Encoded{Attachment: enc.Attachment, Rows: enc.Rows}
	m.m[key] = &memoEntry{enc: kept, size: size, used: m.clock}
	m.bytes += size
	m.trim(budget)
}

// trim drops the least recently used entries until the rows fit budget.
func (m *encodedMemo) trim(budget int64) {
	for m.bytes > budget && len(m.m) > 0 {
		var oldest string
		var at uint64
		for k, ent := range m.m {
			if oldest == "" || ent.used < at {
				oldest, at = k, ent.used
			}
		}
		m.bytes -= m.m[oldest].size
		delete(m.m, oldest)
	}
}
