package cli

import (
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
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
