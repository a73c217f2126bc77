package bundle

import "encoding/json"

// Manifest is manifest.json of the okayuji bundles (okayuji doc §1.1).
// Optional strings are pointers: an absent prompt prefix differs from an
// empty one.
type Manifest struct {
	Name                  string  `json:"name"`
	Architecture          string  `json:"architecture"`
	ContextLength         int     `json:"contextLength"`
	Format                string  `json:"format,omitempty"`
	ModelRelativePath     string  `json:"modelRelativePath"`
	TokenizerRelativePath string  `json:"tokenizerRelativePath"`
	DrafterRelativePath   *string `json:"drafterRelativePath,omitempty"`
	PromptPrefix          *string `json:"promptPrefix,omitempty"`
	PromptSuffix          *string `json:"promptSuffix,omitempty"`
	SidecarStage          string  `json:"sidecarStage,omitempty"`
	ComputeUnits          string  `json:"computeUnits,omitempty"`
	EOS                   []int   `json:"eos,omitempty"`
	AssistantSuffix       *string `json:"assistantSuffix,omitempty"`
	PromptSuffixThinking  *string `json:"promptSuffixThinking,omitempty"`

	Extra map[string]json.RawMessage `json:"-"` // keys orchard does not know, kept
}
