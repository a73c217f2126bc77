package bundle

import "encoding/json"

// V2ConfigFiles are the config names of the v2 family, first existing wins.
var v2ConfigFiles = []string{"convert_config_v2int4_int8.json", "convert_config_v2.json", "convert_config_v2int4.json", "convert_config_ladder.json"}

// V2ConfigFiles returns the candidate config names in preference order.
func V2ConfigFiles() []string { return append([]string(nil), v2ConfigFiles...) }

// V2Config is convert_config_v2*.json of coreml-stateful-chain-v2
// (okayuji doc §1.3): upper-case geometry keys, strict types.
type V2Config struct {
	H           int            `json:"H"`
	HD          int            `json:"HD"`
	GHD         int            `json:"GHD"`
	NH          int            `json:"NH"`
	NKV         int            `json:"NKV"`
	NLayers     int            `json:"NLAYERS"`
	Sliding     int            `json:"SLIDING"`
	Softcap     float64        `json:"SOFTCAP"`
	NEG         float64        `json:"NEG"`
	NKVFull     *int           `json:"NKV_FULL,omitempty"`
	CTX         *int           `json:"CTX,omitempty"`
	PLE         *int           `json:"PLE,omitempty"`
	SRange      V2Range        `json:"S_range"`
	ChunkBounds [][2]int       `json:"chunk_bounds"`
	LayerTypes  []string       `json:"layer_types"`
	StoreLayers map[string]int `json:"store_layers,omitempty"`
	Chunks      []string       `json:"chunks"`
	LMHead      string         `json:"lmhead"`
	HostIO      V2HostIO       `json:"hostio"`
	Sidecars    V2Sidecars     `json:"sidecars"`
	EOSIDs      []int          `json:"eos_ids"`
	NMax        *int           `json:"N_MAX,omitempty"`

	// Keys of the 12B ring/ladder builds of the same runtime; E4B has none
	// and orchard does not run those builds (loadV2 says so).
	Ctx32k          *bool             `json:"ctx32k,omitempty"`
	Kind            string            `json:"kind,omitempty"`
	Functions       map[string]string `json:"functions,omitempty"`
	DefaultFunction string            `json:"default_function,omitempty"`
	WSlide          *int              `json:"WSLIDE,omitempty"`
	Verify          *V2StaticVerify   `json:"verify,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

// V2StaticVerify is the static-verify function of hybrid (Qwen) builds.
type V2StaticVerify struct {
	Function string `json:"function"`
	S        int    `json:"S"`
	Mode     string `json:"mode,omitempty"`
}

// V2Range is the sequence-length range of the chunks.
type V2Range struct {
	Lower   int `json:"lower"`
	Upper   int `json:"upper"`
	Default int `json:"default"`
}

// V2HostIO holds the RoPE inverse frequencies.
type V2HostIO struct {
	InvSlide []float64 `json:"inv_slide"`
	InvFull  []float64 `json:"inv_full"`
}

// V2Sidecars names the embedding and optional PLE tables.
type V2Sidecars struct {
	Embed SidecarFile  `json:"embed"`
	PLE   *SidecarFile `json:"ple,omitempty"`
}

// Context is CTX, else N_MAX, else SLIDING (as ChainConfigV2 resolves it).
func (c *V2Config) Context() int {
	switch {
	case c.CTX != nil:
		return *c.CTX
	case c.NMax != nil:
		return *c.NMax
	}
	return c.Sliding
}

// KVHeadsFull is NKV_FULL or NKV.
func (c *V2Config) KVHeadsFull() int {
	if c.NKVFull != nil {
		return *c.NKVFull
	}
	return c.NKV
}

// PLEDim is PLE or 0.
func (c *V2Config) PLEDim() int {
	if c.PLE != nil {
		return *c.PLE
	}
	return 0
}

// StoreLayer is the store layer of a type: store_layers, else the last
// layer of that type before the first chunk of shared layers.
func (c *V2Config) StoreLayer(typ string, firstShared int) int {
	if l, ok := c.StoreLayers[typ]; ok {
		return l
	}
	for l := firstShared - 1; l >= 0; l-- {
		if l < len(c.LayerTypes) && c.LayerTypes[l] == typ {
			return l
		}
	}
	return -1
}
