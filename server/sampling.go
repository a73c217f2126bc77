package server

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/orchard-llm/orchard/engine"
)

// Sampling as API clients send it. Most send a temperature with every
// request (OpenAI's own default is 1), so on a bundle that emits argmax
// ids — it always decodes greedily — a refusal would fail them all. By
// default the parameters such a bundle cannot honour are accepted and
// ignored, and the answer says so (X-Orchard-Ignored, the log, and
// SamplingSupport for a model's description); server.strict_sampling
// refuses them (400) instead. The chat screen and orchard run keep
// refusing an explicit setting: there a person sees why.

// askedSampling is the sampling a request asks for; nil was not sent.
type askedSampling struct {
	Temperature, TopP, MinP, RepetitionPenalty *float64
	TopK                                       *int
	Seed                                       *int64
}

// samplingNames are an API's names of the sampling parameters and the
// token cap.
type samplingNames struct {
	temperature, topP, topK, minP, repetitionPenalty, seed, maxTokens string
}

var (
	openAISamplingNames = samplingNames{"temperature", "top_p", "top_k", "min_p", "repetition_penalty", "seed", "max_tokens"}
	ollamaSamplingNames = samplingNames{"temperature", "top_p", "top_k", "min_p", "repeat_penalty", "seed", "num_predict"}
)

// IgnoredHeader names the sampling parameters a request sent that the
// bundle could not honour, comma-separated.
const IgnoredHeader = "X-Orchard-Ignored"

// knob is one parameter a request sent: its name and what it sets.
type knob struct {
	name  string
	apply func(*engine.Sampling)
}

// knobs lists the parameters sent, temperature before top_p (top_p 0
// asks for greedy decoding whatever the temperature).
func (a askedSampling) knobs(n samplingNames) []knob {
	var ks []knob
	if v := a.Temperature; v != nil {
		ks = append(ks, knob{n.temperature, func(s *engine.Sampling) { s.Temperature = *v }})
	}
	if v := a.TopP; v != nil {
		ks = append(ks, knob{n.topP, func(s *engine.Sampling) {
			if *v == 0 { // greedy, as OpenAI and llama.cpp read it (the engine reads 0 as no filter)
				s.Temperature, s.TopP = 0, 1
				return
			}
			s.TopP = *v
		}})
	}
	if v := a.TopK; v != nil {
		ks = append(ks, knob{n.topK, func(s *engine.Sampling) { s.TopK = *v }})
	}
	if v := a.MinP; v != nil {
		ks = append(ks, knob{n.minP, func(s *engine.Sampling) { s.MinP = *v }})
	}
	if v := a.RepetitionPenalty; v != nil {
		ks = append(ks, knob{n.repetitionPenalty, func(s *engine.Sampling) { s.RepetitionPenalty = *v }})
	}
	if v := a.Seed; v != nil {
		ks = append(ks, knob{n.seed, func(s *engine.Sampling) { s.Seed = uint64(*v) }})
	}
	return ks
}

// applySampling sets set.Sampling from what the request asks, over the
// server's defaults, and returns the names of the parameters an argmax
// bundle ignored. A sampling bundle asked for no seed draws a fresh one,
// so that requests differ; with a seed a reply repeats. A value out of
// range is refused on any bundle, and on a strict server so is what the
// bundle cannot honour (a *badRequest naming the parameter).
func (s *Server) applySampling(set *engine.Settings, a askedSampling, n samplingNames) ([]string, error) {
	ks := a.knobs(n)
	for _, k := range ks {
		k.apply(&set.Sampling)
	}
	if a.Seed == nil && s.info.Logits {
		set.Sampling.Seed = rand.Uint64()
	}
	_, err := engine.CheckSettings(s.info, s.o.Defaults, *set)
	if err == nil {
		return nil, nil
	}
	if s.info.Logits || s.o.StrictSampling || !errors.Is(err, engine.ErrSettingUnsupported) {
		return nil, n.refusal(err)
	}
	// Each parameter judged alone, so that the answer names all those
	// ignored, not the first.
	var ignored []string
	for _, k := range ks {
		probe := *set
		probe.Sampling = s.o.Defaults.Sampling
		k.apply(&probe.Sampling)
		if _, err := engine.CheckSettings(s.info, s.o.Defaults, probe); errors.Is(err, engine.ErrSettingUnsupported) {
			ignored = append(ignored, k.name)
		}
	}
	set.Sampling = s.o.Defaults.Sampling
	if _, err := engine.CheckSettings(s.info, s.o.Defaults, *set); err != nil {
		return nil, n.refusal(err)
	}
	return ignored, nil
}

// refusal is a refused setting as a 400 naming the request's parameter.
func (n samplingNames) refusal(err error) error {
	code := "unsupported_value"
	if errors.Is(err, engine.ErrSettingInvalid) {
		code = "invalid_value"
	}
	param := ""
	var se *engine.SettingError
	if errors.As(err, &se) {
		// The engine's names of the settings, as SettingError spells them.
		for _, p := range [...][2]string{{"temperature", n.temperature}, {"top-p", n.topP}, {"top-k", n.topK}, {"min-p", n.minP},
			{"repetition penalty", n.repetitionPenalty}, {"seed", n.seed}, {"max tokens", n.maxTokens}} {
			if p[0] == se.Setting {
				param = p[1]
			}
		}
	}
	return bad(code, param, err.Error())
}

// noteIgnored tells the client, in a header, which parameters it sent
// that decoding ignored, and logs it.
func (s *Server) noteIgnored(w http.ResponseWriter, api string, ignored []string) {
	if len(ignored) == 0 {
		return
	}
	list := strings.Join(ignored, ",")
	w.Header().Set(IgnoredHeader, list)
	s.log.Info("sampling ignored: the bundle emits argmax ids and decodes greedily", "api", api, "ignored", list)
}

// SamplingSupport describes what the served bundle does with sampling
// parameters, for a model's description (ollama's /api/show).
type SamplingSupport struct {
	// Greedy: the bundle emits argmax ids and always decodes greedily.
	Greedy bool
	// Ignored are the parameters accepted and ignored (none on a strict
	// server, which refuses them, or on a bundle that samples).
	Ignored []string
	// Note says it in a sentence.
	Note string
}

// Sampling reports what the served bundle does with sampling parameters.
func (s *Server) Sampling() SamplingSupport {
	switch {
	case s.info.Logits:
		return SamplingSupport{Note: "samples: temperature, top_p (0 is greedy), top_k, min_p, repetition penalty and seed are honoured; without a seed each request draws a fresh one"}
	case s.o.StrictSampling:
		return SamplingSupport{Greedy: true, Note: "decodes greedily (the bundle emits argmax ids); sampling parameters away from greedy are refused (server.strict_sampling)"}
	}
	return SamplingSupport{Greedy: true, Ignored: []string{"temperature", "top_p", "top_k", "min_p", "repetition_penalty", "seed"},
		Note: "decodes greedily (the bundle emits argmax ids); temperature, top_p, top_k, min_p, repetition penalty and seed are accepted and ignored, named in the X-Orchard-Ignored header"}
}

// greedyDefaults are the server's defaults for a bundle that emits argmax
// ids: the config's sampling defaults cannot apply to it, and would
// otherwise make every request fail.
func greedyDefaults(set engine.Settings) engine.Settings {
	set.Sampling = engine.Sampling{TopP: 1, Seed: set.Sampling.Seed}
	return set
}
