package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/termsafe"
)

var bundleUsage = `usage:
  orchard bundle synth --family F --preset tiny|small --seed N --out DIR [--form NAME]...
      write a synthetic bundle of family F (` + families + `), in the
      plausible forms of the published files named by --form (repeatable):
` + reference.FormHelp() + `
  orchard bundle inspect DIR [--json]
      check a bundle and print its family, geometry, files and identity
  orchard bundle forward DIR --ids 2,105,... [--top K]
      run the full-recompute oracle of a synthetic bundle; print the top-K logits per position
`

func runBundle(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "orchard bundle: want synth, inspect or forward\n\n"+bundleUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, bundleUsage)
		return exitOK
	case "synth":
		return bundleSynth(args[1:], stdout, stderr)
	case "inspect":
		return bundleInspect(args[1:], stdout, stderr)
	case "forward":
		return bundleForward(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "orchard bundle: unknown command %q (want synth, inspect or forward)\n", args[0])
	return exitUsage
}

func bundleSynth(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard bundle synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	family := fs.String("family", "", "r1, v2, stateful3 or stateful3-logits")
	preset := fs.String("preset", "tiny", "tiny (tests) or small (demo)")
	seed := fs.Uint64("seed", 1, "weights seed")
	out := fs.String("out", "", "folder to create (must not exist or be empty)")
	var forms repeated
	fs.Var(&forms, "form", "a form of the published files (repeatable): "+strings.Join(reference.FormNames(), ", "))
	script := fs.String("script", "", "keep this script `file` in the bundle: it replies as scripted where a message matches")
	if _, err := parseFlags(fs, args); err != nil {
		return exitUsage
	}
	switch {
	case *family == "" || *out == "":
		fmt.Fprintln(stderr, "orchard bundle synth: --family ("+families+") and --out are required")
		return exitUsage
	case checkFamily(*family) != nil:
		fmt.Fprintln(stderr, "orchard bundle synth:", checkFamily(*family))
		return exitUsage
	case *preset != "tiny" && *preset != "small":
		fmt.Fprintf(stderr, "orchard bundle synth: --preset %q is not a preset (want tiny or small)\n", *preset)
		return exitUsage
	}
	if ents, err := os.ReadDir(*out); err == nil && len(ents) > 0 {
		fmt.Fprintf(stderr, "orchard bundle synth: %s is not empty; choose a new folder so no existing files are overwritten\n", *out)
		return exitUsage
	}
	form, err := reference.ParseForms(*family, forms)
	if err != nil {
		fmt.Fprintln(stderr, "orchard bundle synth:", err)
		return exitUsage
	}
	var sc *reference.Script
	if *script != "" {
		if sc, err = synthScript(*script, *family, *preset); err != nil {
			fmt.Fprintln(stderr, "orchard bundle synth:", err)
			return exitUsage
		}
	}
	dir, err := reference.Synthesize(reference.SynthOptions{Family: *family, Preset: *preset, Seed: *seed, Out: *out, Form: form})
	if err == nil && sc != nil {
		err = reference.StoreScript(dir, sc)
	}
	if err != nil {
		fmt.Fprintln(stderr, "orchard bundle synth:", err)
		return exitFailure
	}
	fmt.Fprintln(stdout, dir)
	return exitOK
}

func bundleInspect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard bundle inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	deep := fs.Bool("deep", false, "load every model and function and print what each declares")
	compute := fs.String("compute", "", "compute units for --deep (default: the bundle's)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "orchard bundle inspect: want one bundle folder")
		return exitUsage
	}
	units, uerr := coreml.ParseComputeUnits(*compute)
	if uerr != nil {
		fmt.Fprintln(stderr, "orchard bundle inspect: --compute:", uerr)
		return exitUsage
	}
	b, err := bundle.Open(pos[0])
	if b == nil {
		fmt.Fprintln(stderr, "orchard bundle inspect:", err)
		return exitUsage
	}
	out := struct {
		bundle.Report
		Contract *bundle.Contract `json:"contract,omitempty"`
	}{Report: b.Report(err)}
	code := exitOK
	if *deep {
		c, derr := deepContract(b, units)
		if derr != nil {
			fmt.Fprintln(stderr, "orchard bundle inspect --deep:", derr)
			code = exitFailure
		} else {
			out.Contract = &c
			if !c.DefaultsLoad() {
				code = exitFailure
			}
		}
	}
	if *asJSON {
		writeJSON(stdout, out)
	} else {
		out.Report.WriteText(stdout)
		if out.Contract != nil {
			out.Contract.WriteText(termsafe.NewWriter(stdout)) // feature names come from the graphs' files
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "orchard bundle inspect:", err)
		return exitUsage
	}
	if code != 0 && out.Contract != nil {
		fmt.Fprintln(stderr, "orchard bundle inspect: a model's default function does not load (see above)")
	}
	return code
}

// deepContract loads every model of b on units (the bundle's when unset)
// through the runtime orchard would use for it.
func deepContract(b *bundle.Bundle, units coreml.ComputeUnits) (bundle.Contract, error) {
	rt, name, err := runtimeFor(b)
	if err != nil {
		return bundle.Contract{}, err
	}
	if units, err = chain.Units(b, units); err != nil {
		return bundle.Contract{}, err
	}
	return bundle.InspectContract(b, rt, name, units), nil
}

// topEntry is one (id, logit) pair of `bundle forward`.
type topEntry struct {
	ID    int     `json:"id"`
	Logit float32 `json:"logit"`
}

type forwardRow struct {
	Position int        `json:"position"`
	Token    int        `json:"token"`
	Top      []topEntry `json:"top"`
}

func bundleForward(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard bundle forward", flag.ContinueOnError)
	fs.SetOutput(stderr)
	idsFlag := fs.String("ids", "", "comma-separated token ids")
	top := fs.Int("top", 5, "how many (id, logit) pairs per position")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) != 1 || *idsFlag == "" || *top < 1 {
		fmt.Fprintln(stderr, "orchard bundle forward: want DIR --ids 2,105,... [--top K ≥ 1]")
		return exitUsage
	}
	var ids []int
	for _, s := range strings.Split(*idsFlag, ",") {
		id, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintf(stderr, "orchard bundle forward: --ids: %q is not a token id\n", s)
			return exitUsage
		}
		ids = append(ids, id)
	}
	b, err := bundle.Open(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "orchard bundle forward:", err)
		return exitUsage
	}
	for _, id := range ids {
		if id < 0 || id >= b.Geometry.Vocab {
			fmt.Fprintf(stderr, "orchard bundle forward: token id %d outside the vocabulary (0…%d)\n", id, b.Geometry.Vocab-1)
			return exitUsage
		}
	}
	if len(ids) > b.Geometry.Context {
		fmt.Fprintf(stderr, "orchard bundle forward: %d ids exceed the context of %d\n", len(ids), b.Geometry.Context)
		return exitUsage
	}
	o, host, err := chain.NewOracle(b)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("%w\n(forward runs the reference weights of a synthetic bundle; published .mlmodelc graphs cannot run here)", err)
		}
		fmt.Fprintln(stderr, "orchard bundle forward:", err)
		return exitUsage
	}
	defer host.Close()
	rows := make([]forwardRow, 0, len(ids))
	for p, id := range ids {
		logits, next, err := o.Feed(id)
		if err != nil {
			fmt.Fprintln(stderr, "orchard bundle forward:", err)
			return exitFailure
		}
		idx := make([]int, len(logits))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
		row := forwardRow{Position: p, Token: next}
		for _, i := range idx[:min(*top, len(idx))] {
			row.Top = append(row.Top, topEntry{ID: i, Logit: logits[i]})
		}
		rows = append(rows, row)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rows); err != nil {
		return exitFailure
	}
	return exitOK
}

// repeated is a flag given any number of times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }
