package bundle

import (
	"encoding/json"
	"math"
	"slices"
)

// S3Config is model_config.json of the stateful 3-chunk bundles
// (stateful-3chunk doc §2). Every key has a default; the chunk
// descriptions, not this file, are the truth for shapes (gotcha G18).
type S3Config struct {
	ModelName                    string   `json:"model_name,omitempty"`
	Architecture                 string   `json:"architecture,omitempty"`
	HiddenSize                   *int     `json:"hidden_size,omitempty"`
	ContextLength                *int     `json:"context_length,omitempty"`
	VocabSize                    *int     `json:"vocab_size,omitempty"`
	BOSTokenID                   *int     `json:"bos_token_id,omitempty"`
	EOSTokenID                   IDList   `json:"eos_token_id,omitempty"`
	PerLayerDim                  *int     `json:"per_layer_dim,omitempty"`
	NumLayers                    *int     `json:"num_layers,omitempty"`
	NumHiddenLayers              *int     `json:"num_hidden_layers,omitempty"`
	SlidingWindow                *int     `json:"sliding_window,omitempty"`
	EmbedScale                   *float64 `json:"embed_scale,omitempty"`
	PerLayerEmbedScale           *float64 `json:"per_layer_embed_scale,omitempty"`
	PerLayerModelProjectionScale *float64 `json:"per_layer_model_projection_scale,omitempty"`
	PerLayerInputScale           *float64 `json:"per_layer_input_scale,omitempty"`
	LayerTypes                   []string `json:"layer_types,omitempty"`
	NumKVSharedLayers            *int     `json:"num_kv_shared_layers,omitempty"`
	NumAttentionHeads            *int     `json:"num_attention_heads,omitempty"`
	NumKeyValueHeads             *int     `json:"num_key_value_heads,omitempty"`
	HeadDim                      *int     `json:"head_dim,omitempty"`
	GlobalHeadDim                *int     `json:"global_head_dim,omitempty"`
	RMSNormEps                   *float64 `json:"rms_norm_eps,omitempty"`
	FinalLogitSoftcapping        *float64 `json:"final_logit_softcapping,omitempty"`
	Quantization                 string   `json:"quantization,omitempty"`
	ComputeUnits                 string   `json:"compute_units,omitempty"`
	TokenizerRepo                string   `json:"tokenizer_repo,omitempty"`
	// ChunkBounds is orchard's own optional key (synthetic bundles write it);
	// published bundles lack it and their own-layer bounds come from the states.
	ChunkBounds [][2]int `json:"chunk_bounds,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

func intOr(p *int, def int) int {
	if p != nil {
		return *p
	}
	return def
}

func floatOr(p *float64, def float64) float64 {
	if p != nil {
		return *p
	}
	return def
}

// Hidden is hidden_size (default 1536).
func (c *S3Config) Hidden() int { return intOr(c.HiddenSize, 1536) }

// Context is context_length (default 2048).
func (c *S3Config) Context() int { return intOr(c.ContextLength, 2048) }

// Vocab is vocab_size (default 262144).
func (c *S3Config) Vocab() int { return intOr(c.VocabSize, 262144) }

// PLEDim is per_layer_dim (default 256).
func (c *S3Config) PLEDim() int { return intOr(c.PerLayerDim, 256) }

// Layers is num_layers or num_hidden_layers (default 35).
func (c *S3Config) Layers() int {
	if c.NumLayers != nil {
		return *c.NumLayers
	}
	return intOr(c.NumHiddenLayers, 35)
}

// Window is sliding_window (default 512).
func (c *S3Config) Window() int { return intOr(c.SlidingWindow, 512) }

// EmbedMult is embed_scale (default √hidden).
func (c *S3Config) EmbedMult() float64 {
	return floatOr(c.EmbedScale, math.Sqrt(float64(c.Hidden())))
}

// PLEMult is per_layer_embed_scale (default √per_layer_dim = 16).
func (c *S3Config) PLEMult() float64 {
	return floatOr(c.PerLayerEmbedScale, math.Sqrt(float64(c.PLEDim())))
}

// EOS is eos_token_id as a set (default {1}).
func (c *S3Config) EOS() []int {
	if len(c.EOSTokenID) == 0 {
		return []int{1}
	}
	return slices.Clone(c.EOSTokenID)
}

// IDList is a token id or a list of them: Hugging Face configs write
// eos_token_id either way.
type IDList []int

func (l *IDList) UnmarshalJSON(b []byte) error {
	var one int
	if err := json.Unmarshal(b, &one); err == nil {
		*l = IDList{one}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*l = many
	return nil
}

// BOS is bos_token_id (default 2).
func (c *S3Config) BOS() int { return intOr(c.BOSTokenID, 2) }
