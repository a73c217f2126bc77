package reference

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// HF tensor name prefix of the Gemma 4 text model.
const prefix = "model.language_model."

// LayerWeights are one decoder layer's tensors, row-major [out, in] as in
// Hugging Face checkpoints, widened to float32.
type LayerWeights struct {
	Q, K, V, O                 []float32
	QNorm, KNorm               []float32
	Gate, Up, Down             []float32
	InputNorm, PostAttnNorm    []float32
	PreFFNorm, PostFFNorm      []float32
	Scalar                     float32
	PLGate, PLProj, PostPLNorm []float32
}

// Weights holds the tensors a model (or one chunk of it) needs. Layers not
// held by a chunk are nil.
type Weights struct {
	Embed       []float32 // [V, H] tied lm head (nil where unused)
	PLModelProj []float32 // [L·P, H]
	PLProjNorm  []float32 // [P]
	Norm        []float32 // [H]
	Layers      []*LayerWeights
}

// tensorSpec is one named tensor with its shape, for writing and loading.
type tensorSpec struct {
	name  string
	shape []int
	ptr   *[]float32
}

// layerTensors lists layer l's tensors with their HF names. KV-shared
// layers have no k/v projections or k_norm.
func (g *Geometry) layerTensors(l int, w *LayerWeights) []tensorSpec {
	H, d, nq, nkv, f, P := g.Hidden, g.HeadDimOf(l), g.Heads, g.KVHeadsOf(l), g.FFNOf(l), g.PLEDim
	p := fmt.Sprintf("%slayers.%d.", prefix, l)
	ts := []tensorSpec{
		{p + "self_attn.q_proj.weight", []int{nq * d, H}, &w.Q},
		{p + "self_attn.o_proj.weight", []int{H, nq * d}, &w.O},
		{p + "self_attn.q_norm.weight", []int{d}, &w.QNorm},
		{p + "mlp.gate_proj.weight", []int{f, H}, &w.Gate},
		{p + "mlp.up_proj.weight", []int{f, H}, &w.Up},
		{p + "mlp.down_proj.weight", []int{H, f}, &w.Down},
		{p + "input_layernorm.weight", []int{H}, &w.InputNorm},
		{p + "post_attention_layernorm.weight", []int{H}, &w.PostAttnNorm},
		{p + "pre_feedforward_layernorm.weight", []int{H}, &w.PreFFNorm},
		{p + "post_feedforward_layernorm.weight", []int{H}, &w.PostFFNorm},
		{p + "per_layer_input_gate.weight", []int{P, H}, &w.PLGate},
		{p + "per_layer_projection.weight", []int{H, P}, &w.PLProj},
		{p + "post_per_layer_input_norm.weight", []int{H}, &w.PostPLNorm},
	}
	if l < g.FirstShared() {
		ts = append(ts,
			tensorSpec{p + "self_attn.k_proj.weight", []int{nkv * d, H}, &w.K},
			tensorSpec{p + "self_attn.v_proj.weight", []int{nkv * d, H}, &w.V},
			tensorSpec{p + "self_attn.k_norm.weight", []int{d}, &w.KNorm})
	}
	return ts
}

// modelTensors lists the model-level tensors.
func (g *Geometry) modelTensors(w *Weights) []tensorSpec {
	H, P, L := g.Hidden, g.PLEDim, g.Layers
	return []tensorSpec{
		{prefix + "embed_tokens.weight", []int{g.Vocab, H}, &w.Embed},
		{prefix + "per_layer_model_projection.weight", []int{L * P, H}, &w.PLModelProj},
		{prefix + "per_layer_projection_norm.weight", []int{P}, &w.PLProjNorm},
		{prefix + "norm.weight", []int{H}, &w.Norm},
	}
}

// scalarName is layer l's learned residual scalar.
func scalarName(l int) string { return fmt.Sprintf("%slayers.%d.layer_scalar", prefix, l) }

// embedPerLayerName is the PLE table's HF name (held by the sidecars, not the chunks).
const embedPerLayerName = prefix + "embed_tokens_per_layer.weight"

// RandomWeights draws a deterministic model for a seed. Scales keep
// activations in a healthy range so greedy decoding is varied, not stuck.
// Values are rounded to bfloat16, the dtype they are stored in.
func RandomWeights(g *Geometry, seed uint64) (*Weights, []float32) {
	rng := rand.New(rand.NewPCG(seed, 0x6f72636861726421))
	normal := func(n int, std float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = roundBF16(float32(rng.NormFloat64() * std))
		}
		return v
	}
	around := func(n int, mean, spread float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = roundBF16(float32(mean + spread*(2*rng.Float64()-1)))
		}
		return v
	}
	w := &Weights{Layers: make([]*LayerWeights, g.Layers)}
	H := g.Hidden
	for l := range g.Layers {
		lw := &LayerWeights{}
		for _, t := range g.layerTensors(l, lw) {
			n := 1
			for _, d := range t.shape {
				n *= d
			}
			if len(t.shape) == 1 {
				*t.ptr = around(n, 1, 0.25)
			} else {
				*t.ptr = normal(n, 1/math.Sqrt(float64(t.shape[1])))
			}
		}
		lw.Scalar = roundBF16(float32(0.75 + 0.5*rng.Float64()))
		w.Layers[l] = lw
	}
	// A small embedding keeps the residual stream from being dominated by
	// x₀, whose own token would then win the tied head every step.
	w.Embed = normal(g.Vocab*H, 0.05)
	w.PLModelProj = normal(g.Layers*g.PLEDim*H, 1/math.Sqrt(float64(H)))
	w.PLProjNorm = around(g.PLEDim, 1, 0.25)
	w.Norm = around(H, 1, 0.25)
	ple := normal(g.Vocab*g.Layers*g.PLEDim, 1)
	return w, ple
}

// roundBF16 rounds to the nearest bfloat16 (ties to even).
func roundBF16(f float32) float32 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return math.Float32frombits(b & 0xffff0000)
}
