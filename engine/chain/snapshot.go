package chain

import (
	"fmt"
	"maps"
	"slices"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// CacheState is a chain's cache at a position, holding only the parts that
// carry data: r1's host KV prefixes (exactly corellm-chat's k_<i>.bin
// layout), and for MLState families the used prefix of each state buffer
// along its slot axis. Checkpoints store it; Restore puts it back.
type CacheState struct {
	Family   bundle.Family
	Position int
	Buffers  []Buffer
}

// Buffer is one stored cache tensor. Shape is as stored: r1 k_<i>/v_<i>
// are [rows, hd]; state buffers keep their rank with the slot axis cut to
// the used rows.
type Buffer struct {
	Name  string // r1: k_<layer>, v_<layer>; states: <chunk>/<state name>
	Shape []int
	DType coreml.DType
	Data  []byte
}

// Bytes is the total payload.
func (c *CacheState) Bytes() int64 {
	var n int64
	for _, b := range c.Buffers {
		n += int64(len(b.Data))
	}
	return n
}

// cacheAxis is the slot axis of a state buffer: the one axis as long as the
// context ([NKV, CTX, hd], [1, NKV, CTX, hd], …). -1 when no axis or several
// are: the buffer is then stored whole.
func cacheAxis(shape []int, ctx int) int {
	axis := -1
	for i, d := range shape {
		if d == ctx {
			if axis >= 0 {
				return -1
			}
			axis = i
		}
	}
	return axis
}

// wholeBuffer copies a tensor as it is.
func wholeBuffer(t *coreml.Tensor) Buffer {
	return Buffer{Shape: slices.Clone(t.Shape), DType: t.DType, Data: slices.Clone(t.Data)}
}

// prefixAlong copies the first rows of axis `axis` of a C-order tensor; an
// axis or a row count the tensor does not have is an error.
func prefixAlong(t *coreml.Tensor, axis, rows int) (Buffer, error) {
	if axis < 0 || axis >= len(t.Shape) || rows < 0 || rows > t.Shape[axis] {
		return Buffer{}, fmt.Errorf("cannot take %d rows of axis %d of a %v buffer", rows, axis, t.Shape)
	}
	if len(t.Data) != t.Len()*t.DType.Size() {
		return Buffer{}, fmt.Errorf("a %v %s buffer of %d bytes", t.Shape, t.DType, len(t.Data))
	}
	shape := slices.Clone(t.Shape)
	outer, inner := 1, t.DType.Size()
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	full := shape[axis]
	shape[axis] = rows
	data := make([]byte, 0, outer*rows*inner)
	for o := range outer {
		base := o * full * inner
		data = append(data, t.Data[base:base+rows*inner]...)
	}
	return Buffer{Shape: shape, DType: t.DType, Data: data}, nil
}

// expandAlong writes a stored prefix back into a full tensor (zeros past
// it). A buffer stored whole is copied as it is.
func expandAlong(dst *coreml.Tensor, b Buffer, axis int) error {
	if len(b.Shape) != len(dst.Shape) || b.DType != dst.DType {
		return fmt.Errorf("buffer %s: shape %v %s does not fit %v %s", b.Name, b.Shape, b.DType, dst.Shape, dst.DType)
	}
	if slices.Equal(b.Shape, dst.Shape) {
		if len(b.Data) != len(dst.Data) {
			return fmt.Errorf("buffer %s: %d bytes for shape %v", b.Name, len(b.Data), b.Shape)
		}
		copy(dst.Data, b.Data)
		return nil
	}
	if axis < 0 || axis >= len(dst.Shape) {
		return fmt.Errorf("buffer %s: shape %v is not a prefix of %v along a context axis", b.Name, b.Shape, dst.Shape)
	}
	for i := range b.Shape {
		if i != axis && b.Shape[i] != dst.Shape[i] || i == axis && b.Shape[i] > dst.Shape[i] {
			return fmt.Errorf("buffer %s: shape %v does not fit %v", b.Name, b.Shape, dst.Shape)
		}
	}
	if len(b.Data) != coreml.NumElements(b.Shape)*b.DType.Size() {
		return fmt.Errorf("buffer %s: %d bytes for shape %v", b.Name, len(b.Data), b.Shape)
	}
	outer, inner := 1, dst.DType.Size()
	for _, d := range dst.Shape[:axis] {
		outer *= d
	}
	for _, d := range dst.Shape[axis+1:] {
		inner *= d
	}
	full, rows := dst.Shape[axis], b.Shape[axis]
	clear(dst.Data)
	for o := range outer {
		copy(dst.Data[o*full*inner:], b.Data[o*rows*inner:(o+1)*rows*inner])
	}
	return nil
}

func checkState(c *CacheState, fam bundle.Family, ctx int) error {
	if !bundle.SameCache(c.Family, fam) {
		return fmt.Errorf("cache state of family %s cannot be restored into a %s chain", c.Family, fam)
	}
	if c.Position < 0 || c.Position > ctx {
		return fmt.Errorf("cache state position %d outside the context of %d", c.Position, ctx)
	}
	return nil
}

// Snapshot copies the committed prefix of every own layer's host cache.
func (c *r1Chain) Snapshot() (*CacheState, error) {
	s := &CacheState{Family: bundle.R1, Position: c.pos}
	for l := range c.fs {
		for _, kv := range []struct {
			n string
			t *coreml.Tensor
		}{{"k", c.k[l]}, {"v", c.v[l]}} {
			b, err := prefixAlong(kv.t, 1, c.pos)
			if err != nil {
				return nil, fmt.Errorf("%s_%d: %w", kv.n, l, err)
			}
			b.Name = fmt.Sprintf("%s_%d", kv.n, l)
			b.Shape = []int{c.pos, c.headDim(l)} // corellm-chat's [rows, hd]
			s.Buffers = append(s.Buffers, b)
		}
	}
	return s, nil
}

// Restore resets the chain and copies the prefixes back in.
func (c *r1Chain) Restore(s *CacheState) error {
	if err := checkState(s, bundle.R1, c.ctx); err != nil {
		return err
	}
	want := map[string]Buffer{}
	for _, b := range s.Buffers {
		want[b.Name] = b
	}
	for l := range c.fs {
		for _, n := range []string{"k", "v"} {
			name := fmt.Sprintf("%s_%d", n, l)
			b, ok := want[name]
			if !ok {
				return fmt.Errorf("cache state lacks %s", name)
			}
			if len(b.Shape) != 2 || b.Shape[0] != s.Position || b.Shape[1] != c.headDim(l) {
				return fmt.Errorf("cache state %s: shape %v, want [%d %d]", name, b.Shape, s.Position, c.headDim(l))
			}
		}
	}
	c.Reset()
	for l := range c.fs {
		for _, kv := range []struct {
			n string
			t *coreml.Tensor
		}{{"k", c.k[l]}, {"v", c.v[l]}} {
			b := want[fmt.Sprintf("%s_%d", kv.n, l)]
			copy(kv.t.Data, b.Data)
		}
	}
	c.pos = s.Position
	return nil
}

// Snapshot reads every state's used prefix along its context axis (found
// from the shape: [NKV, CTX, hd] or [1, NKV, CTX, hd]), or the whole buffer
// when no single axis is the context.
func (c *v2Chain) Snapshot() (*CacheState, error) {
	s := &CacheState{Family: bundle.V2, Position: c.pos}
	for i, st := range c.states {
		if st == nil {
			continue
		}
		for _, name := range sortedStates(c.chunks[i].desc) {
			t, err := st.Read(name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.chunks[i].name, err)
			}
			b := wholeBuffer(t)
			if axis := cacheAxis(t.Shape, c.ctx); axis >= 0 {
				if b, err = prefixAlong(t, axis, c.pos); err != nil {
					return nil, fmt.Errorf("%s state %s: %w", c.chunks[i].name, name, err)
				}
			}
			b.Name = c.b.Chunks[i].Name + "/" + name
			s.Buffers = append(s.Buffers, b)
		}
	}
	return s, nil
}

func (c *v2Chain) Restore(s *CacheState) error {
	if err := checkState(s, bundle.V2, c.ctx); err != nil {
		return err
	}
	ws, err := prepareStates(s, c.stateful, c.chunks, c.b.Chunks, func(shape []int) int { return cacheAxis(shape, c.ctx) })
	if err != nil {
		return err
	}
	if err := c.Reset(); err != nil {
		return err
	}
	if err := writeStates(ws, c.states); err != nil {
		c.Reset()
		return err
	}
	c.pos = s.Position
	return nil
}

// Snapshot reads both MLStates: the ring's used slots (all W once it has
// wrapped) and the full cache's used prefix.
func (c *s3Chain) Snapshot() (*CacheState, error) {
	s := &CacheState{Family: c.b.Family, Position: c.pos}
	for i, st := range []coreml.State{c.s1, c.s2} {
		for _, name := range sortedStates(c.infer[i].desc) {
			t, err := st.Read(name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.infer[i].name, err)
			}
			b := wholeBuffer(t)
			if len(t.Shape) == 4 { // (2·n, HKV, slots, maxhd): slots are the ring's or positions
				if b, err = prefixAlong(t, 2, min(c.pos, t.Shape[2])); err != nil {
					return nil, fmt.Errorf("%s state %s: %w", c.infer[i].name, name, err)
				}
			}
			b.Name = c.b.Chunks[i].Name + "/" + name
			s.Buffers = append(s.Buffers, b)
		}
	}
	return s, nil
}

func (c *s3Chain) Restore(s *CacheState) error {
	if err := checkState(s, c.b.Family, c.ctx); err != nil {
		return err
	}
	ws, err := prepareStates(s, []bool{true, true, false}, c.infer[:], c.b.Chunks, func(shape []int) int {
		if len(shape) == 4 {
			return 2
		}
		return -1
	})
	if err != nil {
		return err
	}
	if err := c.Reset(); err != nil {
		return err
	}
	if err := writeStates(ws, []coreml.State{c.s1, c.s2}); err != nil {
		c.Reset()
		return err
	}
	c.pos = s.Position
	return nil
}

// stateWrite is one state buffer ready to be written back.
type stateWrite struct {
	state int
	name  string
	t     *coreml.Tensor
}

// prepareStates checks every stored buffer against the chunks' declared
// states and expands it to a full tensor, before anything is touched, so a
// refused restore leaves the chain as it was. Every declared state buffer
// must be present and nothing else.
func prepareStates(s *CacheState, stateful []bool, graphs []*graph, chunks []bundle.Chunk, axisOf func(shape []int) int) ([]stateWrite, error) {
	have := map[string]Buffer{}
	for _, b := range s.Buffers {
		have[b.Name] = b
	}
	var out []stateWrite
	for i, ok := range stateful {
		if !ok {
			continue
		}
		for _, name := range sortedStates(graphs[i].desc) {
			key := chunks[i].Name + "/" + name
			b, ok := have[key]
			if !ok {
				return nil, fmt.Errorf("cache state lacks %s", key)
			}
			spec := graphs[i].desc.States[name]
			full := coreml.NewTensor(spec.Shape, spec.DType)
			b.Name = key
			if err := expandAlong(full, b, axisOf(spec.Shape)); err != nil {
				return nil, err
			}
			out = append(out, stateWrite{i, name, full})
		}
	}
	if len(out) != len(s.Buffers) {
		return nil, fmt.Errorf("cache state holds %d buffers, the chain has %d", len(s.Buffers), len(out))
	}
	return out, nil
}

// writeStates writes prepared buffers into fresh states.
func writeStates(ws []stateWrite, states []coreml.State) error {
	for _, w := range ws {
		if err := states[w.state].Write(w.name, w.t); err != nil {
			return fmt.Errorf("state %s: %w", w.name, err)
		}
	}
	return nil
}

// sortedStates names a graph's states in a fixed order, so a snapshot's
// buffers always come in the same order.
func sortedStates(d coreml.Description) []string {
	return slices.Sorted(maps.Keys(d.States))
}
