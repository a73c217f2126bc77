package reference

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/coreml"
)

// coreMLMetadata renders a description the way a compiled model's
// metadata.json lists its schema, so bundle inspection reads synthetic and
// published chunk folders alike.
func coreMLMetadata(d coreml.Description, t *Twin) []map[string]any {
	schema := func(m map[string]coreml.TensorSpec, kind string) []map[string]any {
		var names []string
		for n := range m {
			names = append(names, n)
		}
		slices.Sort(names)
		var out []map[string]any
		for _, n := range names {
			sp := m[n]
			dims := make([]string, len(sp.Shape))
			for i, v := range sp.Shape {
				dims[i] = fmt.Sprint(v)
			}
			e := map[string]any{
				"name": n, "type": kind, "dataType": dtypeName(sp.DType),
				"shape":               "[" + strings.Join(dims, ", ") + "]",
				"formattedType":       fmt.Sprintf("%s (%s %s)", kind, dtypeName(sp.DType), strings.Join(dims, " × ")),
				"hasShapeFlexibility": "0", "isOptional": "0",
			}
			if sp.Ranges != nil {
				e["hasShapeFlexibility"] = "1"
				e["shapeRange"] = fmt.Sprint(sp.Ranges)
			}
			out = append(out, e)
		}
		return out
	}
	var fns []map[string]any
	for _, n := range t.FunctionNames() {
		fns = append(fns, map[string]any{"name": n})
	}
	return []map[string]any{{
		"metadataOutputVersion": "3.0",
		"shortDescription":      "orchard synthetic twin (" + t.Kind + ")",
		"inputSchema":           schema(d.Inputs, "MultiArray"),
		"outputSchema":          schema(d.Outputs, "MultiArray"),
		"stateSchema":           schema(d.States, "State"),
		"functions":             fns,
		"defaultFunctionName":   t.DefaultFunction,
		"storagePrecision":      "BFloat16",
		"modelType":             map[string]any{"name": "MLModelType_reference"},
	}}
}

func dtypeName(d coreml.DType) string {
	switch d {
	case coreml.Float16:
		return "Float16"
	case coreml.Float32:
		return "Float32"
	case coreml.Int32:
		return "Int32"
	}
	return d.String()
}
