package reference

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
)

// Encoder twins stand in for the bundles' vision and audio encoders
// (multimodal doc §1.1, §2.1): the same input and output names, ranks and
// shapes, computed by a small deterministic network, so that everything
// around an encoder — preprocessing, the soft rows, the prompt spans, KV
// reuse — runs for real on synthetic bundles.
const (
	KindVision = "vision-encoder"
	KindAudio  = "audio-encoder"
)

// EncoderSpec is an encoder twin's geometry (reference.json "encoder").
type EncoderSpec struct {
	Grid   int    `json:"grid,omitempty"`   // vision: patches per side (the input holds grid² patches of 16×16×3)
	Pool   int    `json:"pool,omitempty"`   // vision: patches pooled per side into one soft row (3 in Gemma 4)
	Frames int    `json:"frames,omitempty"` // audio: mel frames of the fixed input (3000 = 30 s)
	Hidden int    `json:"hidden"`           // width of a soft row (the text model's hidden size)
	Seed   uint64 `json:"seed"`
}

// VisionRows is the soft-row count of a grid: (grid/pool)².
func (e EncoderSpec) VisionRows() int { return (e.Grid / e.Pool) * (e.Grid / e.Pool) }

// AudioTokens is the encoder's output rows for its fixed input: two
// stride-2 subsamplings, t → (t−1)/2+1 (multimodal doc §2.5).
func (e EncoderSpec) AudioTokens() int {
	t := e.Frames
	for range 2 {
		t = (t-1)/2 + 1
	}
	return t
}

const (
	patchDim = 16 * 16 * 3
	melBins  = 128
)

// encoderDescription is an encoder twin's contract.
func encoderDescription(kind string, e EncoderSpec) coreml.Description {
	f16 := coreml.Float16
	if kind == KindVision {
		return coreml.Description{
			Inputs:  map[string]coreml.TensorSpec{"patches": spec(f16, 1, e.Grid*e.Grid, patchDim)},
			Outputs: map[string]coreml.TensorSpec{"soft_tokens": spec(f16, e.VisionRows(), e.Hidden)},
		}
	}
	return coreml.Description{
		Inputs:  map[string]coreml.TensorSpec{"mel": spec(f16, 1, e.Frames, melBins), "mask": spec(f16, 1, e.Frames)},
		Outputs: map[string]coreml.TensorSpec{"soft_tokens": spec(f16, 1, e.AudioTokens(), e.Hidden)},
	}
}

// encoder computes an encoder twin: pool its input (patch blocks, or runs
// of four mel frames weighted by the mask), project it with a fixed random
// matrix and squash it into the range text embeddings have.
type encoder struct {
	stateless
	kind string
	e    EncoderSpec
	desc coreml.Description
	w    []float32 // [in, hidden]
	out  outputs
}

func newEncoder(t *Twin) (*encoder, error) {
	e := t.Encoder
	if e == nil || e.Hidden <= 0 {
		return nil, fmt.Errorf("encoder twin without a geometry")
	}
	in := melBins
	if t.Kind == KindVision {
		if e.Grid <= 0 || e.Pool <= 0 || e.Grid%e.Pool != 0 {
			return nil, fmt.Errorf("vision twin: grid %d is not a multiple of pool %d", e.Grid, e.Pool)
		}
		in = patchDim
	} else if e.Frames < 8 {
		return nil, fmt.Errorf("audio twin: %d frames", e.Frames)
	}
	rng := rand.New(rand.NewPCG(e.Seed, 0x656e636f646572))
	w := make([]float32, in*e.Hidden)
	std := 2 / math.Sqrt(float64(in))
	for i := range w {
		w[i] = float32(rng.NormFloat64() * std)
	}
	return &encoder{kind: t.Kind, e: *e, desc: encoderDescription(t.Kind, *e), w: w, out: outputs{}}, nil
}

func (c *encoder) Description() coreml.Description { return c.desc }

func (c *encoder) predict(in coreml.Features, _ coreml.State, _ coreml.Features) (coreml.Features, error) {
	if err := c.desc.CheckInputs(in); err != nil {
		return nil, fmt.Errorf("%s: %w", c.kind, err)
	}
	H := c.e.Hidden
	project := func(dst []uint16, x []float32) {
		for j := range H {
			var s float64
			for i, v := range x {
				s += float64(v) * float64(c.w[i*H+j])
			}
			dst[j] = f16.FromF32(float32(math.Tanh(s)))
		}
	}
	if c.kind == KindVision {
		g, p := c.e.Grid, c.e.Pool
		side := g / p
		patches := f16s(in["patches"])
		out := c.out.get("soft_tokens", coreml.Float16, c.e.VisionRows(), H)
		x := make([]float32, patchDim)
		for r := range side {
			for q := range side {
				clear(x)
				for dy := range p {
					for dx := range p {
						row := (r*p+dy)*g + q*p + dx
						for i, h := range patches[row*patchDim : (row+1)*patchDim] {
							x[i] += f16.ToF32(h) / float32(p*p)
						}
					}
				}
				project(f16s(out)[(r*side+q)*H:(r*side+q+1)*H], x)
			}
		}
		return coreml.Features{"soft_tokens": out}, nil
	}
	mel, mask := f16s(in["mel"]), f16s(in["mask"])
	T := c.e.AudioTokens()
	out := c.out.get("soft_tokens", coreml.Float16, 1, T, H)
	x := make([]float32, melBins)
	for t := range T {
		clear(x)
		var n float32
		for f := 4 * t; f < min(4*t+4, c.e.Frames); f++ {
			m := f16.ToF32(mask[f])
			for i := range melBins {
				x[i] += m * f16.ToF32(mel[f*melBins+i])
			}
			n += m
		}
		for i := range x {
			x[i] /= max(n, 1)
		}
		project(f16s(out)[t*H:(t+1)*H], x)
	}
	return coreml.Features{"soft_tokens": out}, nil
}
