package bundle

import "encoding/json"

// R1Config is convert_config.json of the coreml-corellm-r1 family
// (okayuji doc §1.2), snake_case with corellm and hostio blocks.
type R1Config struct {
	NumLayers   int            `json:"num_layers"`
	Hidden      int            `json:"hidden"`
	PLEDim      int            `json:"ple_dim"`
	FirstShared int            `json:"first_shared"`
	StoreLayers map[string]int `json:"store_layers"`
	ChunkBounds [][2]int       `json:"chunk_bounds"`
	EOSTokenIDs []int          `json:"eos_token_ids,omitempty"`
	HostIO      R1HostIO       `json:"hostio"`
	CoreLLM     R1CoreLLM      `json:"corellm"`

	Extra map[string]json.RawMessage `json:"-"`
}

// R1HostIO is the hostio block: host-side tensor geometry and RoPE.
type R1HostIO struct {
	CTX        int       `json:"CTX"`
	HD         int       `json:"HD"`
	GHD        int       `json:"GHD"`
	SLIDING    int       `json:"SLIDING"`
	NEG        float64   `json:"NEG"`
	LayerTypes []string  `json:"layer_types"`
	InvSlide   []float64 `json:"inv_slide"`
	InvFull    []float64 `json:"inv_full"`
}

// R1CoreLLM is the corellm block: packages, functions and sidecars.
type R1CoreLLM struct {
	Chunks         []string   `json:"chunks"`
	LMHead         string     `json:"lmhead"`
	DecodeFunction string     `json:"decode_function,omitempty"`
	Prefill        R1Prefill  `json:"prefill"`
	Verify         *R1Verify  `json:"verify,omitempty"`
	Sidecars       R1Sidecars `json:"sidecars"`
}

// R1Prefill lists the prefill widths and their function names.
type R1Prefill struct {
	N         []int             `json:"N"`
	Functions map[string]string `json:"functions,omitempty"`
	PlainN    int               `json:"plain_N,omitempty"`
}

// R1Verify describes the width-4 verify function and batched head.
type R1Verify struct {
	Widths        []int             `json:"widths,omitempty"`
	Functions     map[string]string `json:"functions,omitempty"`
	LMHeadBatched map[string]string `json:"lmhead_batched,omitempty"`
}

// R1Sidecars names the embedding and PLE tables of each stage.
type R1Sidecars struct {
	DefaultStage string        `json:"default_stage,omitempty"`
	FP16         *SidecarStage `json:"fp16,omitempty"`
	Int8         *SidecarStage `json:"int8,omitempty"`
}

// SidecarStage is one stage's pair of tables.
type SidecarStage struct {
	Embed SidecarFile  `json:"embed"`
	PLE   *SidecarFile `json:"ple,omitempty"`
}

// SidecarFile is one table: its file, shape and (int8) scale file. v2
// marks int8 with dtype; r1 int8 tables carry runtime_scale_sqrt.
type SidecarFile struct {
	File             string   `json:"file"`
	Shape            []int    `json:"shape"`
	DType            string   `json:"dtype,omitempty"`
	Scale            string   `json:"scale,omitempty"`
	RuntimeScaleSqrt *float64 `json:"runtime_scale_sqrt,omitempty"`
}

// DecodeFunctionName is decode_function or its default "decode".
func (c *R1CoreLLM) DecodeFunctionName() string {
	if c.DecodeFunction == "" {
		return "decode"
	}
	return c.DecodeFunction
}

// PlainWidth is plain_N or its default 512.
func (p *R1Prefill) PlainWidth() int {
	if p.PlainN == 0 {
		return 512
	}
	return p.PlainN
}

// Stage returns the sidecar stage's tables and its name (the manifest's
// sidecarStage wins over default_stage, which defaults to fp16).
func (c *R1Config) Stage(manifestStage string) (string, *SidecarStage) {
	name := manifestStage
	if name == "" {
		name = c.CoreLLM.Sidecars.DefaultStage
	}
	if name == "" {
		name = "fp16"
	}
	switch name {
	case "int8":
		return name, c.CoreLLM.Sidecars.Int8
	case "fp16":
		return name, c.CoreLLM.Sidecars.FP16
	}
	return name, nil
}

// VerifySupported reports whether the width-4 verify function and batched
// head are both declared (bundleSupportsVerify).
func (c *R1Config) VerifySupported() bool {
	v := c.CoreLLM.Verify
	return v != nil && v.Functions["4"] != "" && v.LMHeadBatched["4"] != ""
}
