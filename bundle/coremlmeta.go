package bundle

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/regfile"
	"github.com/orchard-llm/orchard/termsafe"
)

// ModelMeta is what a compiled model's metadata.json says: the schema of
// its inputs, outputs and states and, for multifunction models, the
// function names. It is a hint read before anything is loaded: the loaded
// model's own description decides (engine), and a metadata.json that is
// absent, lists schemas per function or only at the top is all accepted.
type ModelMeta struct {
	Functions       []string
	DefaultFunction string
	top             *FunctionMeta            // the top-level schema (the default function's)
	per             map[string]*FunctionMeta // schemas given per function
}

// FunctionMeta is one function's declared tensors.
type FunctionMeta struct {
	Inputs, Outputs, States []FeatureMeta
}

// FeatureMeta is one declared tensor. Shape is nil when the file's shape
// text could not be read.
type FeatureMeta struct {
	Name     string
	DataType string // Float16, Float32, Int32
	Shape    []int
}

// FindFeature returns the named feature of a list.
func FindFeature(fs []FeatureMeta, name string) (FeatureMeta, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return FeatureMeta{}, false
}

// Schema returns the tensors declared for function fn ("" for the default
// function): its own schema when the file gives one per function, else the
// top-level one when fn is the default function (or the file names no
// default). nil when the file does not say.
func (m *ModelMeta) Schema(fn string) *FunctionMeta {
	if m == nil {
		return nil
	}
	if fn == "" {
		fn = m.DefaultFunction
	}
	if f := m.per[fn]; f != nil {
		return f
	}
	if m.top != nil && (fn == "" || fn == m.DefaultFunction || m.DefaultFunction == "") {
		return m.top
	}
	if fn == "" && len(m.per) == 1 {
		for _, f := range m.per {
			return f
		}
	}
	return nil
}

// HasFunction reports whether the file lists fn; known is false when it
// lists no functions (a single-function model, or a file that does not say).
func (m *ModelMeta) HasFunction(fn string) (has, known bool) {
	if m == nil || len(m.Functions) == 0 {
		return false, false
	}
	for _, f := range m.Functions {
		if f == fn {
			return true, true
		}
	}
	return false, true
}

type metaFeatureJSON struct {
	Name     string          `json:"name"`
	DataType string          `json:"dataType"`
	Shape    json.RawMessage `json:"shape"` // "[1, 8]" as Core ML writes it, or a JSON array
}

type metaSchemaJSON struct {
	InputSchema  []metaFeatureJSON `json:"inputSchema"`
	OutputSchema []metaFeatureJSON `json:"outputSchema"`
	StateSchema  []metaFeatureJSON `json:"stateSchema"`
}

type metaJSON struct {
	metaSchemaJSON
	Functions []struct {
		Name string `json:"name"`
		metaSchemaJSON
	} `json:"functions"`
	DefaultFunction string `json:"defaultFunctionName"`
}

// ReadModelMeta reads dir/metadata.json (Core ML writes an array with one
// object; shapes are strings such as "[1, 1, 8, 2048]"). A missing file is
// an error wrapping os.ErrNotExist; a feature whose shape cannot be read is
// kept without one rather than failing the file.
func ReadModelMeta(dir string) (*ModelMeta, error) {
	path := filepath.Join(dir, "metadata.json")
	data, err := readSmall(path, 16<<20)
	if err != nil {
		return nil, err
	}
	var arr []metaJSON
	if err := json.Unmarshal(data, &arr); err != nil || len(arr) == 0 {
		var one metaJSON
		if err2 := json.Unmarshal(data, &one); err2 != nil {
			return nil, fmt.Errorf("%s: not Core ML metadata: %v", path, err2)
		}
		arr = []metaJSON{one}
	}
	m := arr[0]
	mm := &ModelMeta{DefaultFunction: m.DefaultFunction, per: map[string]*FunctionMeta{}}
	if s := convSchema(m.metaSchemaJSON); s != nil {
		mm.top = s
	}
	for _, f := range m.Functions {
		if f.Name == "" {
			continue
		}
		mm.Functions = append(mm.Functions, f.Name)
		if s := convSchema(f.metaSchemaJSON); s != nil {
			mm.per[f.Name] = s
		}
	}
	return mm, nil
}

// readSmall reads a regular file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	return regfile.ReadFile(path, limit)
}

func convSchema(s metaSchemaJSON) *FunctionMeta {
	if len(s.InputSchema)+len(s.OutputSchema)+len(s.StateSchema) == 0 {
		return nil
	}
	conv := func(in []metaFeatureJSON) []FeatureMeta {
		var out []FeatureMeta
		for _, f := range in {
			out = append(out, FeatureMeta{Name: f.Name, DataType: f.DataType, Shape: metaShape(f.Shape)})
		}
		return out
	}
	return &FunctionMeta{Inputs: conv(s.InputSchema), Outputs: conv(s.OutputSchema), States: conv(s.StateSchema)}
}

// metaShape reads "[1, 8]" or [1, 8]; nil when it is neither.
func metaShape(raw json.RawMessage) []int {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		sh, err := parseShape(s)
		if err != nil {
			return nil
		}
		return sh
	}
	var a []int
	if json.Unmarshal(raw, &a) == nil {
		return a
	}
	return nil
}

func parseShape(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if strings.TrimSpace(s) == "" {
		return []int{}, nil
	}
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("shape %s: %s is not an integer", termsafe.Quote(s), termsafe.Quote(strings.TrimSpace(p)))
		}
		out = append(out, n)
	}
	return out, nil
}

// FormatShape prints a shape the way Core ML metadata does.
func FormatShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
