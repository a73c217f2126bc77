package reference

import (
	"fmt"

	"github.com/orchard-llm/orchard/coreml"
)

// Describe returns the description of one function of a twin without
// loading weights: the contract a chunk of that geometry declares, in the
// twin's form (declare.go). It lets tests check shapes at full E2B/E4B size.
func Describe(t *Twin, function string) (coreml.Description, error) {
	d, err := describeKernel(t, function)
	if err != nil {
		return d, err
	}
	return declare(t, d).desc, nil
}

// describeKernel is the description the kernels compute with.
func describeKernel(t *Twin, function string) (coreml.Description, error) {
	fn, ok := t.Functions[function]
	if !ok {
		return coreml.Description{}, fmt.Errorf("no function %q", function)
	}
	m := &Model{G: t.Geometry}
	switch t.Kind {
	case KindVision, KindAudio:
		if t.Encoder == nil {
			return coreml.Description{}, fmt.Errorf("encoder twin without a geometry")
		}
		return encoderDescription(t.Kind, *t.Encoder), nil
	case KindR1Chunk:
		c, err := newR1Chunk(m, t, fn)
		if err != nil {
			return coreml.Description{}, err
		}
		return c.desc, nil
	case KindR1Head, KindV2Head:
		return newHead(m, t, fn).desc, nil
	case KindV2Chunk:
		return newV2Chunk(m, t, fn).desc, nil
	case KindS3Chunk1, KindS3Chunk2, KindS3Chunk3:
		c, err := newS3Chunk(m, t, fn)
		if err != nil {
			return coreml.Description{}, err
		}
		return c.desc, nil
	}
	return coreml.Description{}, fmt.Errorf("unknown kind %q", t.Kind)
}
