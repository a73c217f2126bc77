package reference

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// formSpec is one named form of `orchard bundle synth --form NAME`.
type formSpec struct {
	name     string
	arg      string   // what follows "=", "" for a bare name
	families []string // nil: every family
	doc      string
	set      func(f *Form, arg string) error
}

var s3Families = []string{"stateful3", "stateful3-logits"}

// formSpecs are the forms by name, in the order help lists them.
var formSpecs = []formSpec{
	{"metadata", "top|functions|none", nil, "where metadata.json puts the schemas (none: no file)",
		func(f *Form, a string) error {
			switch a {
			case MetaTop, MetaPerFunction, MetaNone:
				f.Metadata = a
				return nil
			}
			return fmt.Errorf("want top, functions or none")
		}},
	{"shapeless-outputs", "", nil, "no output declares a shape (coremltools' way for flexible ones)",
		func(f *Form, _ string) error { f.AllShapeless = true; return nil }},
	{"fp32-inputs", "", nil, "host-fed inputs declared fp32, positions included (coremltools' default)",
		func(f *Form, _ string) error { f.F32Inputs = true; return nil }},
	{"declines-backings", "", nil, "every model writes its own output buffers: the host copies",
		func(f *Form, _ string) error { f.Backings = BackingsDecline; return nil }},
	{"refuses-backings", "", nil, "every model fails a call that offers an output backing",
		func(f *Form, _ string) error { f.Backings = BackingsRefuse; return nil }},
	{"logits-output", "NAME", []string{"stateful3-logits"}, "chunk_3's logits output carries another name",
		func(f *Form, a string) error {
			if a == "" || strings.ContainsAny(a, " \t\n") {
				return fmt.Errorf("want an output name")
			}
			f.LogitsOutput = a
			return nil
		}},
	{"fp32-logits", "", []string{"stateful3-logits"}, "chunk_3's logits are fp32",
		func(f *Form, _ string) error { f.LogitsF32 = true; return nil }},
	{"default-function", "infer|main", s3Families, "the name of the chunks' T=1 function",
		func(f *Form, a string) error {
			if a != "infer" && a != "main" {
				return fmt.Errorf("want infer or main")
			}
			f.S3Default = a
			return nil
		}},
	{"prefill-batch", "4|8|16|none", s3Families, "the batched prefill function's rows (none: single-function chunks)",
		func(f *Form, a string) error {
			switch a {
			case "4", "8", "16":
				f.S3Batch, _ = strconv.Atoi(a)
			case "none":
				f.S3Batch = -1
			default:
				return fmt.Errorf("want 4, 8, 16 or none")
			}
			return nil
		}},
	{"rank4-states", "", []string{"v2"}, "states declared [1, NKV, CTX, hd]",
		func(f *Form, _ string) error { f.V2StateRank4 = true; return nil }},
	{"no-store-layers", "", []string{"v2"}, "no store_layers in the config",
		func(f *Form, _ string) error { f.V2NoStoreLayers = true; return nil }},
	{"unnamed-widths", "", []string{"r1"}, "corellm.prefill without function names",
		func(f *Form, _ string) error { f.R1UnnamedWidths = true; return nil }},
	{"missing-width", "N", []string{"r1"}, "corellm.prefill.N lists a width no chunk has",
		func(f *Form, a string) error { return width(&f.R1MissingWidth, a) }},
	{"extra-width", "N", []string{"r1"}, "the chunks have a prefill<N> that corellm.prefill.N does not list",
		func(f *Form, a string) error { return width(&f.R1ExtraWidth, a) }},
}

func width(dst *int, a string) error {
	n, err := strconv.Atoi(a)
	if err != nil || n < 2 || n > 4096 {
		return fmt.Errorf("want a width from 2 to 4096")
	}
	*dst = n
	return nil
}

// ParseForms turns `--form` values (NAME or NAME=VALUE) into a Form for a
// family, refusing a name that is not a form or does not apply to it.
func ParseForms(family string, names []string) (Form, error) {
	var f Form
	for _, raw := range names {
		name, arg, hasArg := strings.Cut(raw, "=")
		i := slices.IndexFunc(formSpecs, func(s formSpec) bool { return s.name == name })
		if i < 0 {
			return f, fmt.Errorf("--form %q is not a form (want one of %s)", raw, strings.Join(FormNames(), ", "))
		}
		s := formSpecs[i]
		if s.families != nil && !slices.Contains(s.families, family) {
			return f, fmt.Errorf("--form %s applies to %s bundles, not %s", name, strings.Join(s.families, " and "), family)
		}
		if (s.arg != "") != hasArg {
			if s.arg == "" {
				return f, fmt.Errorf("--form %s takes no value", name)
			}
			return f, fmt.Errorf("--form %s needs a value: %s=%s", name, name, s.arg)
		}
		if err := s.set(&f, arg); err != nil {
			return f, fmt.Errorf("--form %s: %w", raw, err)
		}
	}
	return f, nil
}

// FormNames lists the forms as they are written (NAME or NAME=VALUE).
func FormNames() []string {
	var out []string
	for _, s := range formSpecs {
		n := s.name
		if s.arg != "" {
			n += "=" + s.arg
		}
		out = append(out, n)
	}
	return out
}

// FormHelp describes every form, one line each, with the families it
// applies to.
func FormHelp() string {
	var b strings.Builder
	for i, s := range formSpecs {
		fams := "every family"
		if s.families != nil {
			fams = strings.Join(s.families, ", ")
		}
		fmt.Fprintf(&b, "    %-34s %s (%s)\n", FormNames()[i], s.doc, fams)
	}
	return b.String()
}
