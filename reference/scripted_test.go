package reference

import (
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
)

// fakeModel computes nothing and allocates nothing: it hands back the same
// outputs every call, after step (the first chunk's cache write).
type fakeModel struct {
	out  coreml.Features
	step func(st coreml.State)
}

func (f *fakeModel) Description() coreml.Description { return coreml.Description{} }
func (f *fakeModel) NewState() (coreml.State, error) { return nil, nil }
func (f *fakeModel) Close() error                    { return nil }
func (f *fakeModel) Predict(_ coreml.Features, st coreml.State, _ *coreml.Outputs) (coreml.Features, error) {
	if f.step != nil {
		f.step(st)
	}
	return f.out, nil
}

// TestScriptedAllocatesNothingPerToken: inside a scripted reply, a decode
// step through the wrapped first chunk (id lookup, witness check, log,
// memo) and the wrapped head (reading the turn, answering) allocates
// nothing — with r1's host cache and an argmax head, and with an MLState
// cache and a logits head. The inner models here allocate nothing either,
// so the count is the wrapper's own.
func TestScriptedAllocatesNothingPerToken(t *testing.T) {
	tok := synthTokenizer(t)
	sc, err := ParseScript([]byte(`{"replies":[{"match":"^hello$","reply":"one two three, one two three, one two three."}]}`), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	const ctx, hidden, vocab, d = 128, 4, 512, 2
	for _, kind := range []string{KindR1Chunk, KindV2Chunk} {
		t.Run(kind, func(t *testing.T) {
			s, err := NewScripted(New(), ScriptedOptions{Script: sc, Tokenizer: tok, Vocab: vocab, Hidden: hidden,
				Embed: func(id int, dst []uint16) error { clear(dst); dst[0] = uint16(id + 1); return nil }})
			if err != nil {
				t.Fatal(err)
			}
			s.log.init(ctx, 2*d)
			emb := coreml.NewTensor([]int{hidden}, coreml.Float16)
			onehot := coreml.NewTensor([]int{ctx}, coreml.Float16)
			cache := coreml.NewTensor([]int{1, ctx, d}, coreml.Float16)
			st := newState(map[string]coreml.TensorSpec{"k_cache_0": spec(coreml.Float16, 1, ctx, d)})
			q := 0
			first := &scriptedModel{s: s, first: true, kind: kind, fn: Function{Role: RoleDecode}, hidden: hidden, ctx: ctx, emb: "inputs_embeds"}
			var head *scriptedModel
			var answer func() int32
			if kind == KindR1Chunk {
				first.w = witness{d: d, full: true, in: "k_0_in", out: "k_0_out"}
				first.Model = &fakeModel{out: coreml.Features{"k_0_out": cache}, step: func(coreml.State) {
					// A K row depends on the id fed (and, really, on all before it).
					cache.U16()[q*d], cache.U16()[q*d+1] = emb.U16()[0], uint16(q)
				}}
				tokOut := coreml.NewTensor([]int{1}, coreml.Int32)
				head = &scriptedModel{Model: &fakeModel{out: coreml.Features{"token": tokOut}}, s: s, out: "token"}
				answer = func() int32 { return tokOut.I32(0) }
			} else {
				first.w = witness{d: d, full: true, state: "k_cache_0", stride: d}
				k := st.bufs["k_cache_0"].U16()
				first.Model = &fakeModel{step: func(coreml.State) { k[q*d], k[q*d+1] = emb.U16()[0], uint16(q) }}
				logits := coreml.NewTensor([]int{1, 1, vocab}, coreml.Float16)
				head = &scriptedModel{Model: &fakeModel{out: coreml.Features{"logits": logits}}, s: s, out: "logits", logits: true}
				answer = func() int32 {
					u := logits.U16()
					best := 0
					for i, h := range u {
						if f16.ToF32(h) > f16.ToF32(u[best]) {
							best = i
						}
					}
					return int32(best)
				}
			}
			in := coreml.Features{"inputs_embeds": emb, "onehot": onehot, "k_0_in": cache}
			feed := func(id int32) int32 {
				clear(emb.Data)
				emb.U16()[0] = uint16(id + 1)
				clear(onehot.Data)
				onehot.U16()[q] = 0x3c00
				if _, err := first.Predict(in, st, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := head.Predict(nil, nil, nil); err != nil {
					t.Fatal(err)
				}
				q++
				return answer()
			}
			var next int32
			for _, id := range tok.Encode("<bos><|turn>user\nhello<turn|>\n<|turn>model\n") {
				next = feed(int32(id))
			}
			var seen [32]int32
			n := 0
			seen[n], n = next, n+1
			next = feed(next) // the turn is read here, once
			seen[n], n = next, n+1
			for range 8 { // one step at a time: no allocation hides in an average
				if allocs := testing.AllocsPerRun(1, func() {
					next = feed(next)
					seen[n], n = next, n+1
				}); allocs != 0 {
					t.Fatalf("%v allocations in a step, want 0", allocs)
				}
			}
			want := tok.Encode(sc.Replies[0].Reply)[:n]
			if !slices.Equal(toInts(seen[:n]), want) {
				t.Fatalf("the steps were not scripted: %v, want %v", seen[:n], want)
			}
		})
	}
}

func toInts(v []int32) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}
