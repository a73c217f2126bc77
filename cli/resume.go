package cli

import (
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
)

// flagOverrides are the engine settings a command-line flag may set, by
// config key: after a checkpoint is resumed, the flags given on the same
// command line win over the settings it saved.
var flagOverrides = map[string]func(dst *engine.Settings, src engine.Settings){
	"speculation.mode":         func(d *engine.Settings, s engine.Settings) { d.Speculation = s.Speculation },
	"speculation.draft_length": func(d *engine.Settings, s engine.Settings) { d.DraftLen = s.DraftLen },
	"speculation.ngram_min":    func(d *engine.Settings, s engine.Settings) { d.NGramMin = s.NGramMin },
	"speculation.ngram_max":    func(d *engine.Settings, s engine.Settings) { d.NGramMax = s.NGramMax },
	"sampling.temperature":     func(d *engine.Settings, s engine.Settings) { d.Sampling.Temperature = s.Sampling.Temperature },
	"sampling.top_k":           func(d *engine.Settings, s engine.Settings) { d.Sampling.TopK = s.Sampling.TopK },
	"sampling.top_p":           func(d *engine.Settings, s engine.Settings) { d.Sampling.TopP = s.Sampling.TopP },
	"sampling.min_p":           func(d *engine.Settings, s engine.Settings) { d.Sampling.MinP = s.Sampling.MinP },
	"sampling.repetition_penalty": func(d *engine.Settings, s engine.Settings) {
		d.Sampling.RepetitionPenalty = s.Sampling.RepetitionPenalty
	},
	"sampling.seed":      func(d *engine.Settings, s engine.Settings) { d.Sampling.Seed = s.Sampling.Seed },
	"chat.system_prompt": func(d *engine.Settings, s engine.Settings) { d.System = s.System },
	"chat.thinking":      func(d *engine.Settings, s engine.Settings) { d.Thinking = s.Thinking },
	"chat.context_full":  func(d *engine.Settings, s engine.Settings) { d.ContextPolicy = s.ContextPolicy },
}

// applyGivenFlags puts the settings given as flags on this command line
// (and --max-tokens, when given) over a resumed checkpoint's.
func applyGivenFlags(sess *engine.Session, cfg *config.Config, maxTokens int, maxTokensGiven bool) error {
	cur, from := sess.Settings(), settingsFrom(cfg, maxTokens)
	for key, set := range flagOverrides {
		if cfg.Source(key).Kind == config.FromFlag {
			set(&cur, from)
		}
	}
	if maxTokensGiven {
		cur.MaxTokens = maxTokens
	}
	return sess.SetSettings(cur)
}
