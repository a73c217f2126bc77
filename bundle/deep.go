package bundle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/coreml"
)

// Contract is what `orchard bundle inspect --deep` reports: every model of
// the bundle loaded through a runtime, function by function, with what it
// declares and whether its metadata.json agrees. On a Mac it is the one
// report a user sends when a bundle does not open.
type Contract struct {
	Runtime string          `json:"runtime"`
	Units   string          `json:"compute_units"`
	Models  []ModelContract `json:"models"`
}

// ModelContract is one compiled model folder.
type ModelContract struct {
	Name      string             `json:"name"`
	Path      string             `json:"path"`
	Functions []string           `json:"functions"`                  // as listed; empty: a single-function model
	Source    string             `json:"functions_source"`           // where the list came from
	Default   string             `json:"default_function,omitempty"` // as metadata.json names it
	Loaded    []FunctionContract `json:"loaded"`
	Error     string             `json:"error,omitempty"` // the folder could not be read at all
}

// FunctionContract is one loaded function (Name "" is the default one).
type FunctionContract struct {
	Name     string        `json:"name"`
	Error    string        `json:"error,omitempty"` // the load failed: the message names the file
	Inputs   []TensorEntry `json:"inputs,omitempty"`
	Outputs  []TensorEntry `json:"outputs,omitempty"`
	States   []TensorEntry `json:"states,omitempty"`
	Notes    []string      `json:"notes,omitempty"`    // what the backend read but could not model (raw NSRanges)
	Metadata []string      `json:"metadata,omitempty"` // where metadata.json disagrees with the loaded model
	MetaSays string        `json:"metadata_status"`    // agrees, disagrees, absent, silent
}

// TensorEntry is one declared tensor.
type TensorEntry struct {
	Name       string   `json:"name"`
	DType      string   `json:"dtype"`
	Shape      []int    `json:"shape"`
	Ranges     [][2]int `json:"ranges,omitempty"`
	Enumerated [][]int  `json:"enumerated,omitempty"`
}

// DefaultsLoad reports whether every model's default function loaded.
func (c Contract) DefaultsLoad() bool {
	for _, m := range c.Models {
		if len(m.Loaded) == 0 || m.Loaded[0].Error != "" {
			return false
		}
	}
	return true
}

// Models lists the model folders of a bundle, in the order the chain uses
// them: chunks, then heads, then encoders.
func (b *Bundle) Models() []Chunk {
	return slices.Concat(b.Chunks, b.Heads, b.Encoders)
}

// InspectContract loads every function of every model of b through rt on
// units and describes it. It stops at nothing: a function that fails to
// load is reported with the error, so the report shows everything at once.
func InspectContract(b *Bundle, rt coreml.Runtime, runtimeName string, units coreml.ComputeUnits) Contract {
	c := Contract{Runtime: runtimeName, Units: units.String()}
	for _, ch := range b.Models() {
		mc := ModelContract{Name: ch.Name, Path: ch.Path}
		meta, metaErr := ReadModelMeta(ch.Path)
		mc.Functions, mc.Source = listFunctions(rt, ch.Path, meta)
		if meta != nil {
			mc.Default = meta.DefaultFunction
		}
		fns := []string{""} // the default function, always
		for _, f := range mc.Functions {
			if meta == nil || f != meta.DefaultFunction || len(mc.Functions) == 1 {
				fns = append(fns, f)
			}
		}
		for _, fn := range fns {
			fc := FunctionContract{Name: fn}
			m, err := rt.Load(ch.Path, coreml.LoadOptions{Function: fn, ComputeUnits: units})
			if err != nil {
				fc.Error = err.Error()
				mc.Loaded = append(mc.Loaded, fc)
				continue
			}
			d := m.Description()
			m.Close()
			fc.Inputs, fc.Outputs, fc.States = entries(d.Inputs), entries(d.Outputs), entries(d.States)
			fc.Notes = d.Notes
			fc.MetaSays, fc.Metadata = compareMeta(meta, metaErr, fn, d)
			mc.Loaded = append(mc.Loaded, fc)
		}
		c.Models = append(c.Models, mc)
	}
	return c
}

// listFunctions asks the runtime, then metadata.json.
func listFunctions(rt coreml.Runtime, path string, meta *ModelMeta) ([]string, string) {
	if l, ok := rt.(coreml.FunctionLister); ok {
		names, err := l.Functions(path)
		if err == nil {
			return names, "the runtime"
		}
		if !errors.Is(err, coreml.ErrFunctionsUnknown) {
			return nil, "the runtime could not list them: " + err.Error()
		}
	}
	if meta != nil && len(meta.Functions) > 0 {
		return meta.Functions, "metadata.json"
	}
	return nil, "nothing lists them (single-function model, or an OS before macOS 15 without metadata.json)"
}

func entries(m map[string]coreml.TensorSpec) []TensorEntry {
	var out []TensorEntry
	for name, s := range m {
		out = append(out, TensorEntry{Name: name, DType: s.DType.String(), Shape: s.Shape, Ranges: s.Ranges, Enumerated: s.Shapes})
	}
	slices.SortFunc(out, func(a, b TensorEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// compareMeta says whether metadata.json's schema for fn matches the loaded
// description, listing each difference.
func compareMeta(meta *ModelMeta, metaErr error, fn string, d coreml.Description) (string, []string) {
	if metaErr != nil {
		if errors.Is(metaErr, os.ErrNotExist) {
			return "absent", nil
		}
		return "unreadable", []string{metaErr.Error()}
	}
	s := meta.Schema(fn)
	if s == nil {
		return "silent", nil
	}
	var diffs []string
	cmp := func(kind string, declared map[string]coreml.TensorSpec, listed []FeatureMeta) {
		for _, f := range listed {
			spec, ok := declared[f.Name]
			switch {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("%s %s is in metadata.json, not in the model", kind, f.Name))
			case f.Shape != nil && !slices.Equal(f.Shape, spec.Shape):
				diffs = append(diffs, fmt.Sprintf("%s %s: metadata.json %v, the model %v", kind, f.Name, f.Shape, spec.Shape))
			case f.DataType != "" && !strings.EqualFold(metaDType(f.DataType), spec.DType.String()):
				diffs = append(diffs, fmt.Sprintf("%s %s: metadata.json %s, the model %s", kind, f.Name, f.DataType, spec.DType))
			}
		}
		for name := range declared {
			if _, ok := FindFeature(listed, name); !ok {
				diffs = append(diffs, fmt.Sprintf("%s %s is in the model, not in metadata.json", kind, name))
			}
		}
	}
	cmp("input", d.Inputs, s.Inputs)
	cmp("output", d.Outputs, s.Outputs)
	if len(s.States) > 0 || len(d.States) > 0 {
		cmp("state", d.States, s.States)
	}
	slices.Sort(diffs)
	if len(diffs) > 0 {
		return "disagrees", diffs
	}
	return "agrees", nil
}

// metaDType maps Core ML metadata's dataType words onto the seam's names.
func metaDType(s string) string {
	switch strings.ToLower(s) {
	case "float16":
		return "fp16"
	case "float32", "float":
		return "fp32"
	case "int32":
		return "int32"
	}
	return s
}

// WriteText prints the contract for a person.
func (c Contract) WriteText(w io.Writer) {
	fmt.Fprintf(w, "contract read through %s, compute units %s\n", c.Runtime, c.Units)
	for _, m := range c.Models {
		fns := "none listed"
		if len(m.Functions) > 0 {
			fns = strings.Join(m.Functions, ", ")
		}
		fmt.Fprintf(w, "%s (%s)\n  functions: %s — from %s\n", m.Name, filepath.Base(m.Path), fns, m.Source)
		for _, f := range m.Loaded {
			name := f.Name
			if name == "" {
				name = "(default)"
				if m.Default != "" {
					name = "(default: " + m.Default + ")"
				}
			}
			if f.Error != "" {
				fmt.Fprintf(w, "  function %s: does not load: %s\n", name, f.Error)
				continue
			}
			fmt.Fprintf(w, "  function %s — metadata.json %s\n", name, f.MetaSays)
			for _, e := range f.Inputs {
				fmt.Fprintf(w, "    in    %-26s %s\n", e.Name, e.describe())
			}
			for _, e := range f.Outputs {
				fmt.Fprintf(w, "    out   %-26s %s\n", e.Name, e.describe())
			}
			for _, e := range f.States {
				fmt.Fprintf(w, "    state %-26s %s\n", e.Name, e.describe())
			}
			for _, n := range f.Notes {
				fmt.Fprintf(w, "    note  %s\n", n)
			}
			for _, d := range f.Metadata {
				fmt.Fprintf(w, "    meta  %s\n", d)
			}
		}
	}
}

// WriteSummary prints one line per model: its functions, what its
// default function declares, and whether metadata.json agrees (selftest
// starts with it).
func (c Contract) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "contract (%s, %s):\n", c.Runtime, c.Units)
	for _, m := range c.Models {
		fns := "single function"
		if len(m.Functions) > 0 {
			fns = strings.Join(m.Functions, "/")
		}
		if len(m.Loaded) == 0 {
			continue
		}
		d := m.Loaded[0]
		if d.Error != "" {
			fmt.Fprintf(w, "  %-22s %s; default function does not load: %s\n", m.Name, fns, d.Error)
			continue
		}
		fmt.Fprintf(w, "  %-22s %s; %d in, %d out, %d states; metadata.json %s\n", m.Name, fns, len(d.Inputs), len(d.Outputs), len(d.States), d.MetaSays)
		for _, f := range m.Loaded[1:] {
			if f.Error != "" {
				fmt.Fprintf(w, "  %-22s function %s does not load: %s\n", "", f.Name, f.Error)
			}
		}
	}
}

func (e TensorEntry) describe() string {
	s := fmt.Sprintf("%-5s %v", e.DType, e.Shape)
	if e.Ranges != nil {
		spec := coreml.TensorSpec{Shape: e.Shape, Ranges: e.Ranges}
		s += " range " + spec.ShapeString()
	}
	if len(e.Enumerated) > 0 {
		s += fmt.Sprintf(" shapes %v", e.Enumerated)
	}
	return s
}
