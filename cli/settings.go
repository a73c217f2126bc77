package cli

import (
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/engine/chain"
)

// settingsFrom turns the effective configuration into engine settings.
func settingsFrom(cfg *config.Config, maxTokens int) engine.Settings {
	return engine.Settings{
		System: cfg.Chat.SystemPrompt, Thinking: cfg.Chat.Thinking, MaxTokens: maxTokens,
		Speculation: engine.SpecMode(cfg.Speculation.Mode), DraftLen: cfg.Speculation.DraftLength,
		NGramMin: cfg.Speculation.NgramMin, NGramMax: cfg.Speculation.NgramMax,
		Sampling: engine.Sampling(cfg.Sampling), ContextPolicy: engine.ContextPolicy(cfg.Chat.ContextFull),
	}
}

// engineOptions is how the configuration opens a chain: compute units for
// the chunks, r1's verify head and v2's head.
func engineOptions(cfg *config.Config) chain.Options {
	return chain.Options{ComputeUnits: cfg.Model.ComputeUnits, VerifyHeadUnits: cfg.Model.VerifyHeadUnits, HeadUnits: cfg.Model.HeadUnits,
		BatchPastWindow: cfg.Model.PrefillPastWindow}
}
