//go:build darwin && cgo

package darwin

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/coreml"
	ml "github.com/progrium/darwinkit/macos/coreml"
	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"
)

// featureTypeState is MLFeatureTypeState (macOS 15), which darwinkit v0.5.0 lacks.
const featureTypeState ml.FeatureType = 8

// describe reads what m declares from its modelDescription: the inputs and
// outputs with their multi-array constraints (dtype, default shape, range or
// enumerated shapes) and the states (macOS 15). Call inside a pool.
func describe(m ml.Model) (coreml.Description, error) {
	d := m.ModelDescription()
	if d.IsNil() {
		return coreml.Description{}, errors.New("model has no description")
	}
	var notes []string
	ins, err := featureSpecs("input", d.InputDescriptionsByName(), &notes)
	if err != nil {
		return coreml.Description{}, err
	}
	outs, err := featureSpecs("output", d.OutputDescriptionsByName(), &notes)
	if err != nil {
		return coreml.Description{}, err
	}
	states := make(map[string]coreml.TensorSpec)
	sel := objc.Sel("stateDescriptionsByName")
	if d.RespondsToSelector(sel) {
		for name, fd := range objc.Call[map[string]ml.FeatureDescription](d, sel) {
			sc := objc.Call[objc.Object](fd, objc.Sel("stateConstraint"))
			if sc.IsNil() {
				return coreml.Description{}, fmt.Errorf("state %s: no state constraint", name)
			}
			dt, err := dtypeOf(int(objc.Call[ml.MultiArrayDataType](sc, objc.Sel("dataType"))))
			if err != nil {
				return coreml.Description{}, fmt.Errorf("state %s: %w", name, err)
			}
			states[name] = coreml.TensorSpec{DType: dt, Shape: ints(objc.Call[objc.Object](sc, objc.Sel("bufferShape")))}
		}
	}
	slices.Sort(notes)
	return coreml.Description{Inputs: ins, Outputs: outs, States: states, Notes: notes}, nil
}

// featureSpecs maps input or output feature descriptions to tensor specs,
// noting the raw NSRanges of flexible dimensions (how to read their upper
// bound is not documented; `bundle inspect --deep` shows them).
func featureSpecs(kind string, fds map[string]ml.FeatureDescription, notes *[]string) (map[string]coreml.TensorSpec, error) {
	out := make(map[string]coreml.TensorSpec, len(fds))
	for name, fd := range fds {
		switch t := fd.Type(); t {
		case ml.FeatureTypeMultiArray:
		case featureTypeState:
			continue // described by stateDescriptionsByName
		default:
			return nil, fmt.Errorf("%s %s: feature type %d, but orchard exchanges only multi-arrays", kind, name, t)
		}
		c := fd.MultiArrayConstraint()
		if c.IsNil() {
			return nil, fmt.Errorf("%s %s: no multi-array constraint", kind, name)
		}
		dt, err := dtypeOf(int(c.DataType()))
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, name, err)
		}
		ranges, shapes, raw, err := shapeRanges(c.ShapeConstraint())
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, name, err)
		}
		spec, err := newTensorSpec(dt, ints(objc.Call[objc.Object](c, objc.Sel("shape"))), ranges)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", kind, name, err)
		}
		spec.Shapes = shapes
		if raw != "" {
			*notes = append(*notes, fmt.Sprintf("%s %s: sizeRangeForDimension %s, read as %s", kind, name, raw, spec.ShapeString()))
		}
		out[name] = spec
	}
	return out, nil
}

// shapeRanges reads the flexible dimensions of a shape constraint: nil when
// the shape is fixed; for enumerated shapes, their envelope and the list.
// raw is the NSRanges as Core ML gave them. Only the list matching the
// constraint's type is read.
func shapeRanges(sc ml.MultiArrayShapeConstraint) (ranges [][2]int, shapes [][]int, raw string, err error) {
	if sc.IsNil() {
		return nil, nil, "", nil
	}
	switch sc.Type() {
	case ml.MultiArrayShapeConstraintTypeRange:
		arr := objc.Call[objc.Object](sc, objc.Sel("sizeRangeForDimension"))
		n := objc.Call[int](arr, objc.Sel("count"))
		if n == 0 {
			return nil, nil, "", nil
		}
		out := make([][2]int, n)
		parts := make([]string, n)
		for i := range out {
			r := objc.Call[foundation.Value](arr, objc.Sel("objectAtIndex:"), i).RangeValue()
			out[i] = dimRange(r.Location, r.Length)
			parts[i] = fmt.Sprintf("{%d, %d}", r.Location, r.Length)
		}
		return out, nil, "[" + strings.Join(parts, " ") + "]", nil
	case ml.MultiArrayShapeConstraintTypeEnumerated:
		arr := objc.Call[objc.Object](sc, objc.Sel("enumeratedShapes"))
		n := objc.Call[int](arr, objc.Sel("count"))
		shapes := make([][]int, n)
		for i := range shapes {
			shapes[i] = ints(objc.Call[objc.Object](arr, objc.Sel("objectAtIndex:"), i))
		}
		env, err := envelope(shapes)
		return env, shapes, "", err
	}
	return nil, nil, "", nil
}
