package reference

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/orchard-llm/orchard/regfile"
)

// TwinFormat marks a chunk folder written by orchard for the reference runtime.
const TwinFormat = "orchard-reference-v1"

// Model kinds a twin folder can hold.
const (
	KindR1Chunk  = "r1-chunk"
	KindR1Head   = "r1-lmhead"
	KindV2Chunk  = "v2-chunk"
	KindV2Head   = "v2-lmhead"
	KindS3Chunk1 = "stateful3-chunk1"
	KindS3Chunk2 = "stateful3-chunk2"
	KindS3Chunk3 = "stateful3-chunk3"
)

// Function roles.
const (
	RoleDecode = "decode" // r1 decode, T=1
	RolePlain  = "plain"  // r1 plain prefill at position 0, [N,N] masks
	RoleOffset = "offset" // r1 offset prefill / verify at any base
	RoleRows   = "rows"   // fixed T rows (stateful3 infer/prefill_b8, r1 heads)
	RoleRange  = "range"  // v2: S = 1…MaxS
)

// Function is one function of a twin: its role and row count.
type Function struct {
	Role string `json:"role"`
	N    int    `json:"n,omitempty"`
}

// Twin is reference.json, the contract of one chunk folder: which model
// kind it is, the layers it holds and its functions. It sits beside a
// Core ML style metadata.json and the weights (model.safetensors).
type Twin struct {
	Format          string              `json:"format"`
	Kind            string              `json:"kind"`
	Layers          [2]int              `json:"layers"`
	Geometry        Geometry            `json:"geometry"`
	Functions       map[string]Function `json:"functions"`
	DefaultFunction string              `json:"default_function"`
	MaxS            int                 `json:"max_s,omitempty"`       // v2 sequence range upper bound
	Logits          bool                `json:"logits,omitempty"`      // stateful3 chunk_3 emits logits (cardbud)
	LogitsF32       bool                `json:"logits_f32,omitempty"`  // those logits are fp32 (fp16 values widened)
	StateRank4      bool                `json:"state_rank4,omitempty"` // v2 states are [1, NKV, CTX, hd]
	Encoder         *EncoderSpec        `json:"encoder,omitempty"`     // vision and audio encoder twins
	Weights         string              `json:"weights"`

	// How the model declares itself and treats backings: the forms of a
	// real compiled model the engine must take (Form, declare.go).
	AllShapeless bool   `json:"all_shapeless,omitempty"` // no output declares a shape
	F32Inputs    bool   `json:"f32_inputs,omitempty"`    // host-fed inputs are declared fp32
	LogitsName   string `json:"logits_name,omitempty"`   // chunk_3's logits output is named so
	Backings     string `json:"backings,omitempty"`      // BackingsDecline or BackingsRefuse
}

// How a twin treats output backings (Twin.Backings).
const (
	BackingsDecline = "decline" // writes its own buffers, as Core ML may: the host copies
	BackingsRefuse  = "refuse"  // fails a prediction that offers one, as Core ML may
)

// TwinFile is the contract file name inside a chunk folder.
const TwinFile = "reference.json"

// ReadTwin reads dir/reference.json.
func ReadTwin(dir string) (*Twin, error) {
	data, err := regfile.ReadFile(filepath.Join(dir, TwinFile), 16<<20)
	if err != nil {
		return nil, fmt.Errorf("reference model %s: %w (not a synthetic bundle's chunk folder?)", dir, err)
	}
	var t Twin
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("reference model %s: %s: %w", dir, TwinFile, err)
	}
	if t.Format != TwinFormat {
		return nil, fmt.Errorf("reference model %s: format %q, want %q", dir, t.Format, TwinFormat)
	}
	if err := t.Geometry.Validate(); err != nil {
		return nil, fmt.Errorf("reference model %s: %w", dir, err)
	}
	return &t, nil
}

// FunctionNames lists the twin's functions, sorted.
func (t *Twin) FunctionNames() []string {
	var names []string
	for n := range t.Functions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
