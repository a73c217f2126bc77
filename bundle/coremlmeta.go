package bundle

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

// ModelMeta is what a compiled model's metadata.json declares: the schema
// of its inputs, outputs and states and, for multifunction models, the
// function names. It lets orchard read a graph's contract on any OS.
type ModelMeta struct {
	Inputs, Outputs, States []FeatureMeta
	Functions               []string
	DefaultFunction         string
}

// FeatureMeta is one declared tensor.
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

type metaFeatureJSON struct {
	Name     string `json:"name"`
	DataType string `json:"dataType"`
	Shape    string `json:"shape"`
}

type metaJSON struct {
	InputSchema     []metaFeatureJSON       `json:"inputSchema"`
	OutputSchema    []metaFeatureJSON       `json:"outputSchema"`
	StateSchema     []metaFeatureJSON       `json:"stateSchema"`
	Functions       []struct{ Name string } `json:"functions"`
	DefaultFunction string                  `json:"defaultFunctionName"`
}

// ReadModelMeta reads dir/metadata.json (Core ML writes an array with one
// object; shapes are strings such as "[1, 1, 8, 2048]").
func ReadModelMeta(dir string) (*ModelMeta, error) {
	path := filepath.Join(dir, "metadata.json")
	data, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	var arr []metaJSON
	if err := json.Unmarshal(data, &arr); err != nil || len(arr) == 0 {
		var one metaJSON
		if err2 := json.Unmarshal(data, &one); err2 != nil {
			return nil, fmt.Errorf("%s: not Core ML metadata: %v", path, err)
		}
		arr = []metaJSON{one}
	}
	m := arr[0]
	conv := func(in []metaFeatureJSON) ([]FeatureMeta, error) {
		var out []FeatureMeta
		for _, f := range in {
			sh, err := parseShape(f.Shape)
			if err != nil {
				return nil, fmt.Errorf("%s: feature %s: %w", path, termsafe.Quote(f.Name), err)
			}
			out = append(out, FeatureMeta{Name: f.Name, DataType: f.DataType, Shape: sh})
		}
		return out, nil
	}
	mm := &ModelMeta{DefaultFunction: m.DefaultFunction}
	if mm.Inputs, err = conv(m.InputSchema); err != nil {
		return nil, err
	}
	if mm.Outputs, err = conv(m.OutputSchema); err != nil {
		return nil, err
	}
	if mm.States, err = conv(m.StateSchema); err != nil {
		return nil, err
	}
	for _, f := range m.Functions {
		mm.Functions = append(mm.Functions, f.Name)
	}
	return mm, nil
}

func parseShape(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
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
