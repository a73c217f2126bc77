package reference

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/termsafe"
	"github.com/orchard-llm/orchard/tokenizer"
)

// Gemma 4's turn and tool-result markers, looked up by name in the
// bundle's tokenizer (a tokenizer without the tool markers simply has no
// tool-result trigger).
const (
	turnOpenToken     = "<|turn>"
	turnCloseToken    = "<turn|>"
	toolResponseOpen  = "<|tool_response>"
	toolResponseClose = "<tool_response|>"
)

// Scripted is a coreml.Runtime over a reference Runtime that plays a
// Script: the bundle's head emits the scripted reply's tokens one by one,
// through the real chain (template, tokenizer, KV cache, speculation,
// checkpoints); the engine cannot tell. It serves one bundle.
//
// The chunks of every family take embedding rows, not token ids, so the
// first chunk's wrapper recovers each row's id by exact lookup in the
// bundle's embedding table (an encoder's soft row matches none and stands
// as unknown) and writes it into a log indexed by position: a rewind, a
// verify call and batched prefill are then overwrites. The head's wrapper
// maps each row it answers to a position of the first chunk's last call,
// reads the turn from the log and, inside a model turn whose user message
// (or last tool result) matched, replaces the argmax id — or, for a logits
// head, the whole row, so that greedy decoding and sampling at any usable
// temperature pick the scripted token. Anything else is the weights'.
//
// A restore writes a cache the log never saw. So that the log is never
// trusted beyond what the cache holds, each position also keeps a witness:
// the first chunk's K row of one layer, which depends on the ids up to
// that position (all of them for a full-attention layer). Before every
// call of the first chunk the cache's witness rows below the call are
// compared with the log's; on a difference the log is rebuilt from a memo
// of (position, witness) → id of everything fed in this process, and
// positions never seen stay unknown (the weights answer there).
type Scripted struct {
	inner   *Runtime
	tok     *tokenizer.Tokenizer
	replies []compiledReply
	rows    map[string]int32 // an embedding row's bytes → its id; −1 when ids share it
	vocab   int
	hidden  int
	// Marker ids, −1 when the tokenizer lacks one.
	tOpen, tClose, toolOpen, toolClose, newline int32

	mu   sync.Mutex
	dir  string // the bundle folder, from the first model loaded
	log  scriptLog
	call lastCall
	turn turnCache
}

// ScriptedOptions are what a Scripted runtime needs of its bundle.
type ScriptedOptions struct {
	Script    *Script
	Tokenizer *tokenizer.Tokenizer
	// Vocab and Hidden are the embedding table's shape; Embed writes an
	// id's row exactly as the host feeds it to the first chunk
	// (chain.Inputs.Embed), so the lookup is exact.
	Vocab, Hidden int
	Embed         func(id int, dst []uint16) error
}

// NewScripted wraps inner with a script. It tokenizes the replies and
// indexes the embedding table once.
func NewScripted(inner *Runtime, o ScriptedOptions) (*Scripted, error) {
	if o.Script == nil || o.Tokenizer == nil || o.Embed == nil || o.Vocab <= 0 || o.Hidden <= 0 {
		return nil, fmt.Errorf("scripted runtime: script, tokenizer, embedding and its shape are required")
	}
	name := termsafe.Line(o.Script.Name)
	s := &Scripted{inner: inner, tok: o.Tokenizer, vocab: o.Vocab, hidden: o.Hidden, rows: make(map[string]int32, o.Vocab)}
	id := func(name string) int32 {
		if v, ok := o.Tokenizer.TokenID(name); ok {
			return int32(v)
		}
		return -1
	}
	s.tOpen, s.tClose, s.newline = id(turnOpenToken), id(turnCloseToken), id("\n")
	s.toolOpen, s.toolClose = id(toolResponseOpen), id(toolResponseClose)
	if s.tOpen < 0 || s.tClose < 0 || s.newline < 0 {
		return nil, fmt.Errorf("script %s: the tokenizer lacks %s, %s or \"\\n\": a script needs Gemma 4's turns", name, turnOpenToken, turnCloseToken)
	}
	replies, err := o.Script.compile(o.Tokenizer, int(s.tClose))
	if err != nil {
		return nil, err
	}
	s.replies = replies
	row := make([]uint16, o.Hidden)
	key := make([]byte, 2*o.Hidden)
	keyOf := func(id int) (string, error) {
		if err := o.Embed(id, row); err != nil {
			return "", fmt.Errorf("script %s: embedding row %d: %w", name, id, err)
		}
		for i, h := range row {
			binary.LittleEndian.PutUint16(key[2*i:], h)
		}
		return string(key), nil
	}
	for id := range o.Vocab {
		k, err := keyOf(id)
		if err != nil {
			return nil, err
		}
		if _, dup := s.rows[k]; dup {
			s.rows[k] = -1
			continue
		}
		s.rows[k] = int32(id)
	}
	for i, r := range replies {
		for _, id := range r.ids {
			if int(id) >= o.Vocab {
				return nil, fmt.Errorf("script %s: replies[%d] has token %d, past the embedding's %d rows", name, i, id, o.Vocab)
			}
			if k, err := keyOf(int(id)); err != nil {
				return nil, err
			} else if s.rows[k] != id {
				return nil, fmt.Errorf("script %s: replies[%d] has token %d, whose embedding row another token shares: it cannot be told apart", name, i, id)
			}
		}
	}
	return s, nil
}

// Alloc, CopiedBytes and Functions are the inner runtime's.
func (s *Scripted) Alloc(shape []int, dt coreml.DType) *coreml.Tensor {
	return s.inner.Alloc(shape, dt)
}
func (s *Scripted) CopiedBytes() int64                      { return s.inner.CopiedBytes() }
func (s *Scripted) Functions(path string) ([]string, error) { return s.inner.Functions(path) }

// Load wraps the first chunk (it learns the ids fed) and the head (it
// answers for the script); every other model is the inner runtime's own.
func (s *Scripted) Load(path string, o coreml.LoadOptions) (coreml.Model, error) {
	m, err := s.inner.Load(path, o)
	if err != nil {
		return nil, err
	}
	t, err := ReadTwin(path)
	if err != nil {
		m.Close()
		return nil, err
	}
	first := (t.Kind == KindR1Chunk || t.Kind == KindV2Chunk || t.Kind == KindS3Chunk1) && t.Layers[0] == 0
	head := t.Kind == KindR1Head || t.Kind == KindV2Head || t.Kind == KindS3Chunk3
	if !first && !head {
		return m, nil
	}
	g := &t.Geometry
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Dir(filepath.Clean(path))
	switch {
	case s.dir == "":
		s.dir = dir
	case s.dir != dir:
		m.Close()
		return nil, fmt.Errorf("scripted runtime: it serves the bundle in %s, not %s", s.dir, dir)
	}
	if g.Vocab != s.vocab || g.Hidden != s.hidden {
		m.Close()
		return nil, fmt.Errorf("scripted runtime: %s has vocabulary %d and width %d; the script's embedding table is %d×%d", path, g.Vocab, g.Hidden, s.vocab, s.hidden)
	}
	fn := t.Functions[o.Function]
	if o.Function == "" {
		fn = t.Functions[t.DefaultFunction]
	}
	sm := &scriptedModel{Model: m, s: s, first: first, kind: t.Kind, fn: fn, hidden: g.Hidden, ctx: g.Context}
	if head {
		sm.out = "token"
		switch {
		case t.Kind == KindS3Chunk3 && t.Logits:
			sm.out, sm.logits = "logits", true
		case t.Kind == KindS3Chunk3:
			sm.out = "token_id"
		}
		return sm, nil
	}
	sm.emb = "inputs_embeds"
	if t.Kind == KindS3Chunk1 {
		sm.emb = "hidden_states"
	}
	sm.w = witnessOf(t)
	s.log.init(g.Context, 2*sm.w.d)
	return sm, nil
}

// lastCall is the rows of the first chunk's last call: positions
// [base, base+valid) in its rows 0…valid−1 (later rows are padding).
type lastCall struct {
	base, rows, valid int
}

// position is the position head row r of R answers for: a one-row head
// reads the last real row, a head as wide as the call reads row for row.
func (c lastCall) position(r, R int) (int, bool) {
	switch {
	case c.valid == 0:
		return 0, false
	case R == 1:
		return c.base + c.valid - 1, true
	case R == c.rows && r < c.valid:
		return c.base + r, true
	}
	return 0, false
}

// witness says where the first chunk keeps the K rows of its witness
// layer: the first full-attention layer it owns (one row vouches for every
// position up to it), else its last layer, whose row at q depends on the
// ids in [q−step, q].
type witness struct {
	d       int // fp16 values per row; 0: no witness (the log is trusted)
	full    bool
	step    int
	in, out string // r1: k_<w>_in, k_<w>_out
	state   string // v2: k_cache_<w>; stateful3: kv_cache_full
	off     int    // stateful3: first value of the layer's K, head 0
	stride  int    // values between positions in the state
}

func witnessOf(t *Twin) witness {
	g := &t.Geometry
	a, b := t.Layers[0], min(t.Layers[1], g.FirstShared())
	l, fulls := -1, 0
	for i := a; i < b && l < 0; i++ {
		if g.IsFull(i) {
			l = i
		}
	}
	w := witness{full: l >= 0}
	if !w.full {
		l = b - 1
		w.step = max(1, l*(g.SlidingWindow-1))
	}
	for i := a; i < l; i++ {
		if g.IsFull(i) {
			fulls++
		}
	}
	switch t.Kind {
	case KindR1Chunk:
		w.d = g.HeadDimOf(l)
		w.in, w.out = fmt.Sprintf("k_%d_in", l), fmt.Sprintf("k_%d_out", l)
	case KindV2Chunk:
		w.d, w.stride = g.HeadDimOf(l), g.HeadDimOf(l)
		w.state = fmt.Sprintf("k_cache_%d", l)
	case KindS3Chunk1:
		if !w.full {
			return witness{} // the sliding ring forgets; no full layer to vouch
		}
		maxhd := max(g.HeadDim, g.GlobalHeadDim)
		w.d, w.stride, w.state = g.GlobalHeadDim, maxhd, "kv_cache_full"
		w.off = 2 * fulls * g.KVHeads * g.Context * maxhd
	}
	return w
}

// scriptedModel is a loaded function of the first chunk or of the head.
type scriptedModel struct {
	coreml.Model
	s      *Scripted
	first  bool
	kind   string
	fn     Function
	hidden int
	ctx    int
	emb    string  // first chunk: the embedding rows' input
	w      witness // first chunk
	out    string  // head: the output it answers in
	logits bool    // head: that output is logits
}

func (m *scriptedModel) Predict(in coreml.Features, st coreml.State, o *coreml.Outputs) (coreml.Features, error) {
	if !m.first {
		return m.predictHead(in, st, o)
	}
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	emb := in[m.emb]
	if emb == nil || emb.InBackend() || emb.Len()%m.hidden != 0 {
		s.call = lastCall{}
		return m.Model.Predict(in, st, o)
	}
	c := m.rowsOf(in, emb)
	if c.valid > 0 && c.base > 0 && m.w.d > 0 {
		m.check(in, st, c.base)
	}
	out, err := m.Model.Predict(in, st, o)
	if err != nil {
		s.call = lastCall{}
		return nil, err
	}
	rowBytes := 2 * m.hidden
	for t := range c.valid {
		q := c.base + t
		id, ok := s.rows[string(emb.Data[t*rowBytes:(t+1)*rowBytes])]
		if !ok {
			id = -1 // a soft row (picture, audio): a placeholder
		}
		s.fed(q, id, m.row(in, out, st, q, t, true))
	}
	if c.valid > 0 {
		s.log.top = c.base + c.valid
	}
	s.call = c
	return out, nil
}

// rowsOf finds the positions of a first-chunk call's rows.
func (m *scriptedModel) rowsOf(in coreml.Features, emb *coreml.Tensor) lastCall {
	rows := emb.Len() / m.hidden
	c := lastCall{rows: rows}
	switch {
	case m.kind == KindS3Chunk1:
		if p := in["current_pos"]; p != nil && !p.InBackend() {
			c.base, c.valid = int(p.I32(0)), rows
		}
	case m.kind == KindR1Chunk && m.fn.Role == RolePlain:
		// The block at position 0; padding rows are all zero.
		for c.valid < rows && !zeroRow(emb.Data[c.valid*2*m.hidden:(c.valid+1)*2*m.hidden]) {
			c.valid++
		}
	default: // a one-hot row per position; padding rows have none
		oh := in["onehot"]
		if oh == nil || oh.InBackend() || oh.Len() != rows*m.ctx {
			return lastCall{}
		}
		if c.base = oneHotSlot(oh, 0, m.ctx); c.base < 0 {
			return lastCall{}
		}
		u := oh.U16()
		for c.valid < rows && c.base+c.valid < m.ctx && u[c.valid*m.ctx+c.base+c.valid] == 0x3c00 {
			c.valid++
		}
	}
	if c.base < 0 || c.base+c.valid > m.ctx {
		return lastCall{}
	}
	return c
}

func zeroRow(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// check compares the cache's witness rows below base with the log's and
// rebuilds the log when they differ (a restore, or a conversation switch).
func (m *scriptedModel) check(in coreml.Features, st coreml.State, base int) {
	s := m.s
	for q := base - 1; q >= 0; q -= max(m.w.step, 1) {
		row := m.row(in, nil, st, q, 0, false)
		if row == nil {
			return // this call shows no cache (r1's block at 0)
		}
		if !s.log.holds(q, row) {
			s.log.resync(base, func(q int) []byte { return m.row(in, nil, st, q, 0, false) })
			s.turn.valid = false
			return
		}
		if m.w.full {
			return
		}
	}
}

// row returns the witness row of position q: in the cache the call reads
// (after=false) or as the call wrote it (row t of a block's output).
func (m *scriptedModel) row(in, out coreml.Features, st coreml.State, q, t int, after bool) []byte {
	w := &m.w
	if w.d == 0 {
		return nil
	}
	switch m.kind {
	case KindR1Chunk:
		if !after {
			return rowBytes(in[w.in], q*w.d, w.d)
		}
		if m.fn.Role == RoleDecode { // the whole updated cache
			return rowBytes(out[w.out], q*w.d, w.d)
		}
		return rowBytes(out[w.out], t*w.d, w.d)
	case KindV2Chunk, KindS3Chunk1:
		if s, ok := st.(*state); ok && s != nil {
			return rowBytes(s.bufs[w.state], w.off+q*w.stride, w.d)
		}
	}
	return nil
}

// rowBytes is values [at, at+n) of an fp16 tensor, nil when not there.
func rowBytes(t *coreml.Tensor, at, n int) []byte {
	if t == nil || t.InBackend() || at < 0 || 2*(at+n) > len(t.Data) {
		return nil
	}
	return t.Data[2*at : 2*(at+n)]
}

// predictHead runs the head, then answers for the script where it speaks.
func (m *scriptedModel) predictHead(in coreml.Features, st coreml.State, o *coreml.Outputs) (coreml.Features, error) {
	out, err := m.Model.Predict(in, st, o)
	if err != nil {
		return nil, err
	}
	t := out[m.out]
	if t == nil || t.InBackend() {
		return out, nil
	}
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	R := 1
	if !m.logits {
		R = t.Len()
	}
	for r := range R {
		q, ok := s.call.position(r, R)
		if !ok {
			continue
		}
		if id := s.next(q); id >= 0 {
			emit(t, r, id, m.logits)
		}
	}
	return out, nil
}

// Logit values of a scripted logits row: every other token gets fp16's
// lowest finite value, so the argmax is the scripted token, and at a
// temperature T the sampler weighs each other token by exp(−65534/T): 0
// in float64 below T≈88, under 10⁻²⁸ up to T=1000 — far below what a
// draw can pick. Penalties only push the others lower.
const (
	scriptedLogit = 30     // the soft-cap's bound
	otherLogit    = -65504 // fp16's lowest finite value
	scriptedF16   = 0x4f80 // 30 in fp16
	otherF16      = 0xfbff // −65504 in fp16
)

// emit writes id as row r's answer.
func emit(t *coreml.Tensor, r int, id int32, logits bool) {
	switch {
	case logits && t.DType == coreml.Float16:
		u := t.U16()
		for i := range u {
			u[i] = otherF16
		}
		u[id] = scriptedF16
	case logits && t.DType == coreml.Float32:
		for i := range t.Len() {
			t.SetF32(i, otherLogit)
		}
		t.SetF32(int(id), scriptedLogit)
	case t.DType == coreml.Int32:
		t.SetI32(r, id)
	case t.DType == coreml.Float32: // a float id (exact below 2²⁴)
		t.SetF32(r, float32(id))
	}
}

// fed records id at position q: a write below the turn's reply, or of a
// marker, means the turn must be read again.
func (s *Scripted) fed(q int, id int32, row []byte) {
	s.log.write(q, id, row)
	if q < s.turn.start || s.structural(id) {
		s.turn.valid = false
	}
}

// structural reports the ids that open or close a turn or a tool result.
func (s *Scripted) structural(id int32) bool {
	return id >= 0 && (id == s.tOpen || id == s.tClose || id == s.toolOpen || id == s.toolClose)
}
