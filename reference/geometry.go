// Package reference is orchard's pure-Go runtime behind the coreml seam. It
// implements the Gemma 4 text decoder (stateful-3chunk doc §1) and executes the
// chunk contracts of every bundle family with the real tensor names, shapes
// and dtypes, so synthetic bundles behave like their Core ML counterparts.
package reference

import "fmt"

// Layer types as Hugging Face spells them.
const (
	Sliding = "sliding_attention"
	Full    = "full_attention"
)

// Geometry is the shape of a Gemma 4 text decoder.
type Geometry struct {
	Vocab         int      `json:"vocab_size"`
	Hidden        int      `json:"hidden_size"`
	Layers        int      `json:"num_hidden_layers"`
	Heads         int      `json:"num_attention_heads"`
	KVHeads       int      `json:"num_key_value_heads"`
	KVHeadsFull   int      `json:"num_global_key_value_heads,omitempty"` // 0 = KVHeads
	HeadDim       int      `json:"head_dim"`
	GlobalHeadDim int      `json:"global_head_dim"`
	LayerTypes    []string `json:"layer_types"`
	Intermediate  int      `json:"intermediate_size"`
	DoubleWideMLP bool     `json:"use_double_wide_mlp"`
	PLEDim        int      `json:"hidden_size_per_layer_input"`
	KVShared      int      `json:"num_kv_shared_layers"`
	SlidingWindow int      `json:"sliding_window"`
	Context       int      `json:"max_position_embeddings"`
	Eps           float64  `json:"rms_norm_eps"`
	Softcap       float64  `json:"final_logit_softcapping"`
	ThetaSliding  float64  `json:"rope_theta_sliding"`
	ThetaFull     float64  `json:"rope_theta_full"`
	PartialFull   float64  `json:"partial_rotary_factor_full"` // proportional RoPE on full layers (HF); 1 = all pairs rotate
}

// FirstShared is the first KV-shared layer; layers before it own a cache.
func (g *Geometry) FirstShared() int { return g.Layers - g.KVShared }

// IsFull reports whether layer l uses full attention.
func (g *Geometry) IsFull(l int) bool { return g.LayerTypes[l] == Full }

// HeadDimOf is the head dimension of layer l (sliding and full differ).
func (g *Geometry) HeadDimOf(l int) int {
	if g.IsFull(l) {
		return g.GlobalHeadDim
	}
	return g.HeadDim
}

// KVHeadsOf is the number of KV heads of layer l.
func (g *Geometry) KVHeadsOf(l int) int {
	if g.IsFull(l) && g.KVHeadsFull > 0 {
		return g.KVHeadsFull
	}
	return g.KVHeads
}

// FFNOf is the MLP width of layer l: double on KV-shared layers when configured.
func (g *Geometry) FFNOf(l int) int {
	if g.DoubleWideMLP && l >= g.FirstShared() {
		return 2 * g.Intermediate
	}
	return g.Intermediate
}

// Producer is the layer whose cache a KV-shared layer reads: the last own
// layer of the same type ("kv13"/"kv14" for E2B). Own layers return themselves.
func (g *Geometry) Producer(l int) int {
	fs := g.FirstShared()
	if l < fs {
		return l
	}
	for p := fs - 1; p >= 0; p-- {
		if g.LayerTypes[p] == g.LayerTypes[l] {
			return p
		}
	}
	return -1
}

// StoreLayer is the producer of the given layer type.
func (g *Geometry) StoreLayer(typ string) int {
	for p := g.FirstShared() - 1; p >= 0; p-- {
		if g.LayerTypes[p] == typ {
			return p
		}
	}
	return -1
}

// Validate checks internal consistency.
func (g *Geometry) Validate() error {
	switch {
	case g.Vocab <= 0 || g.Hidden <= 0 || g.Layers <= 0 || g.Heads <= 0 || g.KVHeads <= 0:
		return fmt.Errorf("geometry: vocab, hidden, layers, heads and kv heads must be positive")
	case g.HeadDim <= 0 || g.GlobalHeadDim <= 0 || g.HeadDim%2 != 0 || g.GlobalHeadDim%2 != 0:
		return fmt.Errorf("geometry: head dims must be positive and even")
	case len(g.LayerTypes) != g.Layers:
		return fmt.Errorf("geometry: %d layer types for %d layers", len(g.LayerTypes), g.Layers)
	case g.Heads%g.KVHeads != 0 || g.Heads%g.KVHeadsOfFull() != 0:
		return fmt.Errorf("geometry: %d heads not a multiple of the KV heads", g.Heads)
	case g.KVShared < 0 || g.KVShared >= g.Layers:
		return fmt.Errorf("geometry: %d KV-shared layers of %d", g.KVShared, g.Layers)
	case g.SlidingWindow <= 0 || g.Context <= 0:
		return fmt.Errorf("geometry: sliding window and context must be positive")
	}
	for l, t := range g.LayerTypes {
		if t != Sliding && t != Full {
			return fmt.Errorf("geometry: layer %d has type %q", l, t)
		}
		if g.Producer(l) < 0 {
			return fmt.Errorf("geometry: shared layer %d (%s) has no producer", l, t)
		}
	}
	return nil
}

// KVHeadsOfFull is the KV head count of full layers.
func (g *Geometry) KVHeadsOfFull() int {
	if g.KVHeadsFull > 0 {
		return g.KVHeadsFull
	}
	return g.KVHeads
}

// layerTypes builds a pattern where layer i is full iff (i+1)%period == 0.
func layerTypes(n, period int) []string {
	t := make([]string, n)
	for i := range t {
		t[i] = Sliding
		if (i+1)%period == 0 {
			t[i] = Full
		}
	}
	return t
}

// E2B is Gemma 4 E2B's text geometry (stateful-3chunk doc §1.1), ctx 2048.
func E2B() Geometry {
	return Geometry{Vocab: 262144, Hidden: 1536, Layers: 35, Heads: 8, KVHeads: 1, HeadDim: 256, GlobalHeadDim: 512,
		LayerTypes: layerTypes(35, 5), Intermediate: 6144, DoubleWideMLP: true, PLEDim: 256, KVShared: 20,
		SlidingWindow: 512, Context: 2048, Eps: 1e-6, Softcap: 30, ThetaSliding: 10000, ThetaFull: 1e6, PartialFull: 0.25}
}

// E4B is Gemma 4 E4B's text geometry, ctx 2048.
func E4B() Geometry {
	return Geometry{Vocab: 262144, Hidden: 2560, Layers: 42, Heads: 8, KVHeads: 2, HeadDim: 256, GlobalHeadDim: 512,
		LayerTypes: layerTypes(42, 6), Intermediate: 10240, PLEDim: 256, KVShared: 18,
		SlidingWindow: 512, Context: 2048, Eps: 1e-6, Softcap: 30, ThetaSliding: 10000, ThetaFull: 1e6, PartialFull: 0.25}
}

// Preset returns the geometry of a synthetic bundle: "tiny" keeps tests fast
// ("tiny-long": with 1,024 positions, for long conversations such as a tool loop),
// "small" is the demo size. E2B-shaped families (r1, stateful3) get one KV
// head, double-wide shared MLPs and a 4:1 layer pattern; v2 is E4B-shaped.
func Preset(name, family string) (Geometry, error) {
	e4b := family == "v2"
	var g Geometry
	switch name {
	case "tiny", "tiny-long":
		g = Geometry{Vocab: 512, Hidden: 32, Heads: 4, HeadDim: 8, GlobalHeadDim: 16, Intermediate: 64,
			PLEDim: 8, SlidingWindow: 16, Context: 128}
		if name == "tiny-long" { // tiny, with room for conversations of tool calls
			g.Context = 1024
		}
	case "small":
		g = Geometry{Vocab: 4096, Hidden: 256, Heads: 4, HeadDim: 64, GlobalHeadDim: 128, Intermediate: 512,
			PLEDim: 16, SlidingWindow: 512, Context: 2048}
	case "e2b", "e4b":
		// Real geometry with a small vocabulary, for shape checks and host
		// benchmarks with a null runtime (no weights are written).
		g = E2B()
		if name == "e4b" {
			g = E4B()
		}
		g.Vocab = 512
		return g, g.Validate()
	default:
		return Geometry{}, fmt.Errorf("unknown preset %q (want tiny, tiny-long or small)", name)
	}
	g.Eps, g.Softcap, g.ThetaSliding, g.ThetaFull, g.PartialFull = 1e-6, 30, 10000, 1e6, 0.25
	if e4b {
		g.Layers, g.KVHeads, g.KVShared = 12, 2, 6
		g.LayerTypes = layerTypes(12, 6)
	} else {
		g.Layers, g.KVHeads, g.KVShared, g.DoubleWideMLP = 15, 1, 5, true
		g.LayerTypes = layerTypes(15, 5)
	}
	return g, g.Validate()
}
