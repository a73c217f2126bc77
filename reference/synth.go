package reference

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/sidecars"
	"github.com/orchard-llm/orchard/tokenizer"
)

// SynthVersion changes whenever Synthesize writes different weights or
// files for the same options, so caches of synthetic bundles (the demo)
// can tell a stale bundle from a current one.
const SynthVersion = 6

// SynthOptions selects what `orchard bundle synth` writes.
type SynthOptions struct {
	Family string // r1, v2, stateful3, stateful3-logits
	Preset string // tiny, small
	Seed   uint64
	Out    string
	// NoWeights writes configs, sidecars and contracts but no layer
	// weights: such a bundle only runs on a null runtime (benchmarks of the
	// host path at full E2B/E4B geometry).
	NoWeights bool
	// Form varies the bundle across the plausible forms of the published
	// ones; the zero value is the documented form.
	Form Form
}

// Form is one plausible shape of a published bundle that the reference
// docs leave open. orchard must open every form and give the same tokens.
type Form struct {
	// Metadata places the schemas in each chunk's metadata.json: "" or
	// MetaTop at the top (the default function's), MetaPerFunction inside
	// each function's entry, MetaNone writes no metadata.json at all.
	Metadata string
	// S3Default names stateful3's T=1 function: "infer" (default) or "main".
	S3Default string
	// S3Batch is stateful3's batched prefill rows: 0 means 8; -1 writes
	// single-function chunks (no prefill_b*).
	S3Batch int
	// LogitsF32 makes cardbud's chunk_3 return fp32 logits.
	LogitsF32 bool
	// V2StateRank4 declares v2 states (and the store caches passed on) as
	// [1, NKV, CTX, hd] instead of [NKV, CTX, hd].
	V2StateRank4 bool
	// V2NoStoreLayers leaves store_layers out of the v2 config.
	V2NoStoreLayers bool
	// R1UnnamedWidths leaves corellm.prefill.functions out of the r1
	// config: the widths' functions must be found among the chunks'.
	R1UnnamedWidths bool
	// R1MissingWidth adds a width to corellm.prefill.N that no chunk has.
	R1MissingWidth int
	// R1ExtraWidth gives the chunks an offset function prefill<N> that
	// corellm.prefill.N does not list.
	R1ExtraWidth int

	// How the chunks and heads declare themselves (Twin, declare.go):
	// AllShapeless declares no output shape at all; F32Inputs declares the
	// host-fed inputs fp32 (coremltools' default input type); LogitsOutput
	// names cardbud's logits output; Backings makes every model decline
	// (BackingsDecline) or refuse (BackingsRefuse) output backings.
	AllShapeless bool
	F32Inputs    bool
	LogitsOutput string
	Backings     string
}

// metadata.json forms.
const (
	MetaTop         = "top"
	MetaPerFunction = "functions"
	MetaNone        = "none"
)

// synth carries what every family writer needs.
type synth struct {
	o   SynthOptions
	g   Geometry
	w   *Weights
	ple []float32 // [V, L·P] per-layer embedding table (HF embed_tokens_per_layer)
	dir string    // where the bundle's files go (a subfolder for stateful3)
}

// Synthesize writes a complete synthetic bundle of a family: its real
// manifest/config files, int8 sidecars with scales, .npy RoPE tables where
// the family has them, a Gemma-4-like tokenizer.json, a Hugging Face
// config.json and one reference twin folder per chunk holding that
// chunk's Hugging Face–named weights. It is deterministic for a seed.
// It returns the bundle folder (for stateful3, a subfolder of Out, as the
// published repository lays it out).
func Synthesize(o SynthOptions) (string, error) {
	g, err := Preset(o.Preset, o.Family)
	if err != nil {
		return "", err
	}
	if (o.Preset == "e2b" || o.Preset == "e4b") && !o.NoWeights {
		return "", fmt.Errorf("synth: preset %s is geometry only; set NoWeights", o.Preset)
	}
	var w *Weights
	var ple []float32
	if o.NoWeights {
		w, ple = shapeOnlyWeights(&g)
	} else {
		w, ple = RandomWeights(&g, o.Seed)
	}
	s := &synth{o: o, g: g, w: w, ple: ple, dir: o.Out}
	if err := os.MkdirAll(o.Out, 0o700); err != nil {
		return "", fmt.Errorf("synth: %w", err)
	}
	switch o.Family {
	case "r1":
		err = s.r1()
	case "v2":
		err = s.v2()
	case "stateful3", "stateful3-logits":
		err = s.stateful3(o.Family == "stateful3-logits")
	default:
		return "", fmt.Errorf("synth: unknown family %q (want r1, v2, stateful3 or stateful3-logits)", o.Family)
	}
	if err != nil {
		return "", fmt.Errorf("synth %s: %w", o.Family, err)
	}
	return s.dir, nil
}

// shapeOnlyWeights gives the tables the sidecars are quantized from
// (embedding and PLE, small vocabulary) and nothing else.
func shapeOnlyWeights(g *Geometry) (*Weights, []float32) {
	w := &Weights{Layers: make([]*LayerWeights, g.Layers), PLProjNorm: make([]float32, g.PLEDim)}
	w.Embed = make([]float32, g.Vocab*g.Hidden)
	ple := make([]float32, g.Vocab*g.Layers*g.PLEDim)
	for i := range w.Embed {
		w.Embed[i] = float32(i%17-8) / 64
	}
	for i := range ple {
		ple[i] = float32(i%13-6) / 32
	}
	return w, ple
}

// Encoder folders as the published bundles name them, next to the
// manifest (multimodal doc §4).
const (
	VisionEncoderName = "vision_fp16"
	AudioEncoderName  = "audio_fp16"
)

// encoders writes the encoder twins a family ships: r1 (E2B) has vision
// and audio, v2 (E4B) vision only. The audio twin takes the real fixed
// 3,000 frames (30 s); the vision grid comes from the preset: the real
// 48×48 patches at E2B/E4B size, 24×24 in the demo, 12×12 in tiny bundles
// (16 soft rows) so tests stay fast.
func (s *synth) encoders(audio bool) error {
	grid, frames := 48, 3000
	switch s.o.Preset {
	case "tiny":
		grid = 12
	case "small":
		grid = 24
	}
	one := map[string]Function{"main": {Role: RoleRows, N: 1}}
	vision := Twin{Kind: KindVision, Functions: one, DefaultFunction: "main",
		Encoder: &EncoderSpec{Grid: grid, Pool: 3, Hidden: s.g.Hidden, Seed: s.o.Seed + 101}}
	if err := s.twin(VisionEncoderName+".mlmodelc", vision, nil); err != nil {
		return err
	}
	if !audio {
		return nil
	}
	aud := Twin{Kind: KindAudio, Functions: one, DefaultFunction: "main",
		Encoder: &EncoderSpec{Frames: frames, Hidden: s.g.Hidden, Seed: s.o.Seed + 202}}
	return s.twin(AudioEncoderName+".mlmodelc", aud, nil)
}

// writeJSON writes v indented, private to the user.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(data, '\n'))
}

// writeFile writes atomically, mode 0600 (package atomicfile).
func writeFile(path string, data []byte) error { return atomicfile.Write(path, data) }

// common writes the files every family shares: tokenizer and HF config.
func (s *synth) common(tokDir string) error {
	tok, err := tokenizer.SynthesizeJSON(s.g.Vocab)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(tokDir, "tokenizer.json"), tok); err != nil {
		return err
	}
	return writeJSON(filepath.Join(tokDir, "config.json"), s.hfConfig())
}

// hfConfig is config.json in the Hugging Face Gemma 4 form (text_config).
func (s *synth) hfConfig() map[string]any {
	g := &s.g
	return map[string]any{
		"architectures": []string{"Gemma4ForConditionalGeneration"},
		"model_type":    "gemma4",
		"text_config": map[string]any{
			"model_type": "gemma4_text", "vocab_size": g.Vocab, "hidden_size": g.Hidden,
			"intermediate_size": g.Intermediate, "num_hidden_layers": g.Layers,
			"num_attention_heads": g.Heads, "num_key_value_heads": g.KVHeads, "head_dim": g.HeadDim,
			"global_head_dim": g.GlobalHeadDim, "layer_types": g.LayerTypes, "sliding_window": g.SlidingWindow,
			"max_position_embeddings": g.Context, "rms_norm_eps": g.Eps, "final_logit_softcapping": g.Softcap,
			"hidden_size_per_layer_input": g.PLEDim, "vocab_size_per_layer_input": g.Vocab,
			"num_kv_shared_layers": g.KVShared, "use_double_wide_mlp": g.DoubleWideMLP,
			"tie_word_embeddings": true, "hidden_activation": "gelu_pytorch_tanh",
			"rope_parameters": map[string]any{
				"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": g.ThetaSliding},
				"full_attention": map[string]any{"rope_type": "proportional", "rope_theta": g.ThetaFull,
					"partial_rotary_factor": g.PartialFull},
			},
			"bos_token_id": 2, "eos_token_id": []int{1, 106}, "pad_token_id": 0,
		},
		"orchard_synthetic": map[string]any{"family": s.o.Family, "preset": s.o.Preset, "seed": s.o.Seed},
	}
}

// invFreq is the RoPE inverse frequencies of one layer type: θ^(−2j/d)
// for the rotating pairs, 0 (no rotation) past partial·d/2 pairs.
func invFreq(theta float64, d int, partial float64) []float64 {
	half := d / 2
	rot := half
	if partial > 0 && partial < 1 {
		rot = int(partial * float64(half))
	}
	inv := make([]float64, half)
	for j := range rot {
		inv[j] = math.Pow(theta, -2*float64(j)/float64(d))
	}
	return inv
}

// scaled returns a copy of rows×cols values times f (√H or √P baked in).
func scaled(v []float32, f float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * f)
	}
	return out
}

// int8Table quantizes a [rows, cols] table and writes data and scales.
func (s *synth) int8Table(data, scale string, vals []float32, cols int, st sidecars.ScaleType) error {
	rows := len(vals) / cols
	q, sc := sidecars.QuantizeInt8Scales(vals, rows, cols, st)
	return sidecars.WriteInt8(filepath.Join(s.dir, data), filepath.Join(s.dir, scale), q, sc, st)
}

// twin writes one chunk folder: reference.json, the weights of its layers
// plus the named model-level tensors, and a Core ML style metadata.json
// generated from the model's own description.
func (s *synth) twin(name string, t Twin, model []string) error {
	dir := filepath.Join(s.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	t.Format, t.Geometry, t.Weights = TwinFormat, s.g, "model.safetensors"
	if t.Encoder == nil {
		f := s.o.Form
		t.AllShapeless, t.F32Inputs, t.Backings = f.AllShapeless, f.F32Inputs, f.Backings
		if t.Logits {
			t.LogitsName = f.LogitsOutput
		}
	}
	if !s.o.NoWeights && t.Encoder == nil {
		meta := map[string]string{"format": "pt", "orchard": TwinFormat}
		if err := WriteWeights(filepath.Join(dir, t.Weights), &s.g, s.w, t.Layers[0], t.Layers[1], model, meta); err != nil {
			return err
		}
	}
	if err := writeJSON(filepath.Join(dir, TwinFile), t); err != nil {
		return err
	}
	if s.o.Form.Metadata == MetaNone {
		return nil
	}
	descs := map[string]coreml.Description{}
	for fn := range t.Functions {
		d, err := Describe(&t, fn)
		if err != nil {
			return err
		}
		descs[fn] = d
	}
	return writeJSON(filepath.Join(dir, "metadata.json"), coreMLMetadata(descs, &t, s.o.Form.Metadata == MetaPerFunction))
}
