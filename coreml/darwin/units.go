package darwin

import (
	"fmt"

	"github.com/orchard-llm/orchard/coreml"
)

// mlComputeUnits is the MLComputeUnits raw value of c.
func mlComputeUnits(c coreml.ComputeUnits) (int, error) {
	switch c.Resolve() {
	case coreml.CPUOnly:
		return 0, nil
	case coreml.CPUAndGPU:
		return 1, nil
	case coreml.All:
		return 2, nil
	case coreml.CPUAndNeuralEngine:
		return 3, nil // macOS 13
	}
	return 0, fmt.Errorf("coreml: unknown compute units %d", uint8(c))
}
