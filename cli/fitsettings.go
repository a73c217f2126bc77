package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
)

// A setting engine.CheckSettings judges, as the config file spells it,
// and how to put it back to what every bundle can do.
type fittable struct {
	key     string // config key, "sampling.top_k"
	neutral func(s *engine.Settings, info engine.ModelInfo)
}

// fittables maps CheckSettings' names of settings (SettingError.Setting)
// to their config keys.
var fittables = map[string]fittable{
	"temperature":        {"sampling.temperature", func(s *engine.Settings, _ engine.ModelInfo) { s.Sampling.Temperature = 0 }},
	"top-k":              {"sampling.top_k", func(s *engine.Settings, _ engine.ModelInfo) { s.Sampling.TopK = 0 }},
	"top-p":              {"sampling.top_p", func(s *engine.Settings, _ engine.ModelInfo) { s.Sampling.TopP = 1 }},
	"min-p":              {"sampling.min_p", func(s *engine.Settings, _ engine.ModelInfo) { s.Sampling.MinP = 0 }},
	"repetition penalty": {"sampling.repetition_penalty", func(s *engine.Settings, _ engine.ModelInfo) { s.Sampling.RepetitionPenalty = 1 }},
	"seed":               {"sampling.seed", func(s *engine.Settings, _ engine.ModelInfo) { s.Sampling.Seed = 0 }},
	"speculation":        {"speculation.mode", func(s *engine.Settings, _ engine.ModelInfo) { s.Speculation = engine.SpecModeAuto }},
	"draft length": {"speculation.draft_length", func(s *engine.Settings, info engine.ModelInfo) {
		s.DraftLen = 0 // the engine's default, or the widest verify call
		for _, w := range info.VerifyWidths {
			s.DraftLen = max(s.DraftLen, w)
		}
		s.DraftLen = min(s.DraftLen, 4)
	}},
}

// fitSettings makes the configuration's settings fit the bundle. A value
// from the config file (or a default) that the bundle cannot honour —
// top_k = 40 on a bundle that emits argmax ids — is a default meant for the
// bundles that can: it is not used here, and a note says so. A value given
// explicitly, by a flag or an environment variable, is refused, and the
// refusal says where it came from. engine.CheckSettings stays the one
// judge; this only chooses, by source, what to do with its verdict.
func fitSettings(cfg *config.Config, info engine.ModelInfo, set engine.Settings) (engine.Settings, []string, error) {
	var notes []string
	for range len(fittables) + 1 { // each pass settles one setting
		_, err := engine.CheckSettings(info, engine.Settings{}, set)
		var se *engine.SettingError
		if !errors.As(err, &se) {
			return set, notes, err
		}
		f, ok := fittables[se.Setting]
		if !ok {
			return set, notes, err
		}
		src := cfg.Source(f.key)
		if se.Capability == "" || src.Kind == config.FromEnv || src.Kind == config.FromFlag {
			named := *se
			named.Value = fmt.Sprintf("%s (%s)", se.Value, sourceOf(f.key, src))
			return set, notes, &named
		}
		f.neutral(&set, info)
		notes = append(notes, fmt.Sprintf("%s = %s is not used: %s", sourceOf(f.key, src), se.Value, unsupportedBecause(se.Capability)))
	}
	return set, notes, errors.New("settings: no fit found") // unreachable: each pass neutralises one setting
}

// sourceOf names where a setting's value came from: "config.toml's
// top_k" (orchard config show gives the file's path and line), "flag
// --top-k", "env ORCHARD_SAMPLING_TOP_K", "the default draft_length".
func sourceOf(key string, src config.Source) string {
	name := key[strings.LastIndexByte(key, '.')+1:]
	switch src.Kind {
	case config.FromFile:
		return filepath.Base(src.Name) + "'s " + name
	case config.FromEnv, config.FromFlag:
		return src.String()
	}
	return "the default " + name
}

// unsupportedBecause says in a few words why a bundle lacking capability
// cannot use a setting.
func unsupportedBecause(capability string) string {
	switch capability {
	case "logits":
		return "this bundle emits argmax ids (it always decodes greedily)"
	case "verify":
		return "this bundle has no verify function (it never drafts)"
	}
	if w, ok := strings.CutPrefix(capability, "verify width "); ok {
		return "this bundle verifies at most " + w + " tokens a call"
	}
	return "this bundle lacks " + capability
}
