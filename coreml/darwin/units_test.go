package darwin

import (
	"testing"

	"github.com/orchard-llm/orchard/coreml"
)

func TestMLComputeUnits(t *testing.T) {
	// Raw MLComputeUnits values from MLModelConfiguration.h.
	for _, tt := range []struct {
		units coreml.ComputeUnits
		raw   int
	}{
		{coreml.CPUOnly, 0},
		{coreml.CPUAndGPU, 1},
		{coreml.All, 2},
		{coreml.CPUAndNeuralEngine, 3},
		{coreml.DefaultUnits, 2},
	} {
		got, err := mlComputeUnits(tt.units)
		if err != nil || got != tt.raw {
			t.Errorf("mlComputeUnits(%s) = %d, %v; want %d", tt.units, got, err, tt.raw)
		}
	}
	if _, err := mlComputeUnits(coreml.ComputeUnits(9)); err == nil {
		t.Error("mlComputeUnits(9) succeeded")
	}
}
