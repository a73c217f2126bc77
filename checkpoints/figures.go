package checkpoints

// Figures are the figures of the turn that made a reply, as the chat
// shows them under it. They match engine.TurnMetrics field for field, but
// for its per-token list and memory sample, under the same JSON names
// (okayuji's metrics.jsonl).
type Figures struct {
	PromptTokens     int     `json:"promptTokens"`
	ReusedTokens     int     `json:"reusedTokens"`
	GeneratedTokens  int     `json:"generatedTokens"`
	FinishReason     string  `json:"finishReason"` // eos, cap, contextFull, cancelled, stop
	TTFTSeconds      float64 `json:"ttftSeconds,omitempty"`
	PrefillSeconds   float64 `json:"prefillSeconds,omitempty"`
	PrefillTokPerSec float64 `json:"prefillTokPerSec,omitempty"`
	DecodeTokPerSec  float64 `json:"decodeTokPerSec,omitempty"`
	PerTokenMinMs    float64 `json:"perTokenMinMs,omitempty"`
	PerTokenMedianMs float64 `json:"perTokenMedianMs,omitempty"`
	PerTokenMaxMs    float64 `json:"perTokenMaxMs,omitempty"`
	PerTokenMeanMs   float64 `json:"perTokenMeanMs,omitempty"`
	ContextUsed      int     `json:"contextUsed"`
	ContextLimit     int     `json:"contextLength"`
	DroppedTurns     int     `json:"droppedTurns,omitempty"`
	// SeamCopiedBytesPerToken is what the runtime copied across the seam
	// per generated token; SeamMetered whether it keeps such a meter.
	SeamCopiedBytesPerToken float64     `json:"seamCopiedBytesPerToken,omitempty"`
	SeamMetered             bool        `json:"seamMetered,omitempty"`
	Spec                    SpecFigures `json:"spec"`
}

// SpecFigures are a turn's speculation figures; they match
// engine.SpecStats field for field.
type SpecFigures struct {
	Enabled        bool    `json:"specEnabled"`
	State          string  `json:"specState,omitempty"`
	Rounds         int     `json:"specRounds,omitempty"`
	Drafted        int     `json:"specDrafted,omitempty"`
	Accepted       int     `json:"specAccepted,omitempty"`
	FallbackRounds int     `json:"specFallbackRounds,omitempty"`
	AcceptanceRate float64 `json:"specAcceptanceRate,omitempty"`
	PLDRate        float64 `json:"pldAcceptRate,omitempty"`
	MeanAccepted   float64 `json:"meanAcceptedPerVerify,omitempty"`
}
