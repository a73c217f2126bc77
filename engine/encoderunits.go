package engine

import "github.com/orchard-llm/orchard/coreml"

// Where the encoders run unless told otherwise, as the seed cards measured
// them: the E2B vision encoder takes 0.10 s on the GPU against 0.71 s on
// every compute unit, and the fp16 audio tower overflows on the Neural
// Engine (cosine 0.53 against 0.999998 on cpuAndGPU), so both are pinned
// to cpuAndGPU.
const (
	DefaultVisionUnits = coreml.CPUAndGPU
	DefaultAudioUnits  = coreml.CPUAndGPU
)

// EncoderUnits places the encoders; DefaultUnits keeps an encoder's
// default (DefaultVisionUnits, DefaultAudioUnits).
type EncoderUnits struct {
	Vision, Audio coreml.ComputeUnits
}

// resolve fills DefaultUnits with the encoders' defaults.
func (u EncoderUnits) resolve() EncoderUnits {
	if u.Vision == coreml.DefaultUnits {
		u.Vision = DefaultVisionUnits
	}
	if u.Audio == coreml.DefaultUnits {
		u.Audio = DefaultAudioUnits
	}
	return u
}

// SetUnits places the encoders; an encoder already loaded is loaded again
// on its next use.
func (e *Encoders) SetUnits(u EncoderUnits) {
	if e == nil {
		return
	}
	u = u.resolve()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range []struct {
		l     **coreml.Lazy
		units coreml.ComputeUnits
	}{{&e.vision, u.Vision}, {&e.audio, u.Audio}} {
		if *p.l == nil || (*p.l).Options().ComputeUnits == p.units {
			continue
		}
		old := *p.l
		*p.l = coreml.NewLazy(e.rt, old.Path(), coreml.LoadOptions{ComputeUnits: p.units})
		old.Close()
	}
}

// Units reports where the encoders run.
func (e *Encoders) Units() EncoderUnits {
	var u EncoderUnits
	if e == nil {
		return u
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.vision != nil {
		u.Vision = e.vision.Options().ComputeUnits
	}
	if e.audio != nil {
		u.Audio = e.audio.Options().ComputeUnits
	}
	return u
}
