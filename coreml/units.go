package coreml

import "fmt"

// Environment variables of the published runtimes that override the compute
// units of a model head. The engine reads them and passes the values in.
const (
	VerifyHeadUnitsEnv = "CORELLM_VERIFY_HEAD_CU" // r1 batched verify head (lmhead_v4)
	V2HeadUnitsEnv     = "CORELLM_V2_HEAD_CU"     // v2 head; also accepts "chunks"
)

// Resolve maps DefaultUnits to what Core ML uses when nothing is set
// (MLModelConfiguration's default, MLComputeUnitsAll).
func (c ComputeUnits) Resolve() ComputeUnits {
	if c == DefaultUnits {
		return All
	}
	return c
}

// usesNeuralEngine reports whether Core ML may place work on the Neural Engine.
func (c ComputeUnits) usesNeuralEngine() bool {
	c = c.Resolve()
	return c == All || c == CPUAndNeuralEngine
}

// ChooseUnits returns the first explicit choice of the command-line flag, the
// bundle manifest and the family's fallback, in that order. DefaultUnits
// means "not set".
func ChooseUnits(flag, manifest, fallback ComputeUnits) ComputeUnits {
	for _, c := range []ComputeUnits{flag, manifest} {
		if c != DefaultUnits {
			return c
		}
	}
	return fallback
}

// VerifyHeadUnits returns the compute units for r1's batched verify head
// (lmhead_v4) when the chain runs on engine. The published runtime pins the
// head to the CPU whenever the chain may use the Neural Engine, because the
// int8 batched argmax head misbehaves there; otherwise the head follows the
// chain. A non-empty env (the value of CORELLM_VERIFY_HEAD_CU: cpu, gpu,
// ane, all or a long spelling) overrides both.
func VerifyHeadUnits(engine ComputeUnits, env string) (ComputeUnits, error) {
	if env != "" {
		c, err := ParseComputeUnits(env)
		if err != nil || c == DefaultUnits {
			return DefaultUnits, fmt.Errorf("%s=%q: want cpu, gpu, ane or all", VerifyHeadUnitsEnv, env)
		}
		return c, nil
	}
	if engine.usesNeuralEngine() {
		return CPUOnly, nil
	}
	return engine, nil
}

// DefaultVerifyHeadUnits is where r1's batched verify head runs when nothing
// overrides it: the CPU when the chain may use the Neural Engine, else with
// the chain.
func DefaultVerifyHeadUnits(engine ComputeUnits) ComputeUnits {
	if engine.usesNeuralEngine() {
		return CPUOnly
	}
	return engine
}

// V2HeadUnits returns the compute units for the v2 head. By default, or
// when env (the value of CORELLM_V2_HEAD_CU) is "chunks", the head runs
// where the chunks run.
func V2HeadUnits(chunks ComputeUnits, env string) (ComputeUnits, error) {
	if env == "" || env == "chunks" {
		return chunks, nil
	}
	c, err := ParseComputeUnits(env)
	if err != nil || c == DefaultUnits {
		return DefaultUnits, fmt.Errorf("%s=%q: want cpu, gpu, ane, all or chunks", V2HeadUnitsEnv, env)
	}
	return c, nil
}

// CheckStatefulUnits reports whether v2's stateful chunks may run on u.
// Core ML crashes when several MLStates run on the CPU-only or the Neural
// Engine path, so the published runtime accepts only cpuAndGPU and all;
// the error says so and wraps ErrUnsupportedUnits. DefaultUnits is Core ML's
// default, all.
func CheckStatefulUnits(u ComputeUnits) error {
	switch u.Resolve() {
	case CPUAndGPU, All:
		return nil
	}
	return fmt.Errorf("%w: v2 stateful chunks cannot run on %s (several MLStates on the CPU-only or Neural Engine path crash Core ML); use cpuAndGPU or all", ErrUnsupportedUnits, u)
}
