package reference

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/coreml"
)

// coreMLMetadata renders descriptions the way a compiled model's
// metadata.json lists its schema, so bundle inspection reads synthetic and
// published chunk folders alike: the default function's schema at the top
// level, or (perFunction) each function's inside its entry of "functions".
func coreMLMetadata(descs map[string]coreml.Description, t *Twin, perFunction bool) []map[string]any {
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
		f := map[string]any{"name": n}
		if perFunction {
			d := descs[n]
			f["inputSchema"], f["outputSchema"], f["stateSchema"] = schema(d.Inputs, "MultiArray"), schema(d.Outputs, "MultiArray"), schema(d.States, "State")
		}
		fns = append(fns, f)
	}
	m := map[string]any{
		"metadataOutputVersion": "3.0",
		"shortDescription":      "orchard synthetic twin (" + t.Kind + ")",
		"storagePrecision":      "BFloat16",
		"modelType":             map[string]any{"name": "MLModelType_reference"},
	}
	if len(t.Functions) > 1 { // single-function models list no functions
		m["functions"], m["defaultFunctionName"] = fns, t.DefaultFunction
	}
	if !perFunction || len(t.Functions) == 1 {
		d := descs[t.DefaultFunction]
		m["inputSchema"], m["outputSchema"], m["stateSchema"] = schema(d.Inputs, "MultiArray"), schema(d.Outputs, "MultiArray"), schema(d.States, "State")
	}
	return []map[string]any{m}
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
