package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/termsafe"
	"github.com/orchard-llm/orchard/tokenizer"
)

// runSelftest is `orchard selftest`: the verification gates a user runs on
// their Mac (or here on a synthetic bundle). Exit 1 when a gate fails.
func runSelftest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard selftest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "bundle folder")
	demo := fs.Bool("demo", false, "use the demo bundle")
	family := fs.String("family", "r1", "family of the demo bundle: "+families)
	steps := fs.Int("steps", 48, "tokens compared per prompt")
	compute := fs.String("compute", "", "compute units")
	if _, err := parseFlags(fs, args); err != nil {
		return exitUsage
	}
	cu, err := coreml.ParseComputeUnits(*compute)
	if err != nil || (*model == "") == !*demo || *steps < 4 {
		fmt.Fprintln(stderr, "orchard selftest: give --model DIR or --demo, --steps ≥ 4 and valid --compute")
		return exitUsage
	}
	dir := *model
	if *demo {
		if err := checkFamily(*family); err != nil {
			fmt.Fprintln(stderr, "orchard selftest:", err)
			return exitUsage
		}
		if dir, err = demoBundle(*family, stderr); err != nil {
			fmt.Fprintln(stderr, "orchard selftest:", err)
			return exitFailure
		}
	}
	b, err := bundle.Open(dir)
	if err != nil {
		fmt.Fprintln(stderr, "orchard selftest:", err)
		return exitUsage
	}
	rt, rtName, err := runtimeFor(b)
	if err != nil {
		fmt.Fprintln(stderr, "orchard selftest:", err)
		return exitFailure
	}
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		fmt.Fprintln(stderr, "orchard selftest:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "selftest: %s (%s) on %s, %d tokens per prompt\n", termsafe.Line(b.Name()), b.Family, rtName, *steps)
	if units, err := chain.Units(b, cu); err == nil {
		bundle.InspectContract(b, rt, rtName, units).WriteSummary(termsafe.NewWriter(stdout))
	}
	open := func(o chain.Options) (chain.Chain, error) {
		o.ComputeUnits = cu
		return chain.Open(b, rt, o)
	}
	code := exitOK
	report := func(g chain.Gate) {
		verdict := "PASS"
		switch {
		case g.Skip:
			verdict = "SKIP"
		case !g.Pass:
			verdict, code = "FAIL", exitFailure
		}
		line := fmt.Sprintf("%-4s  %s", verdict, g.Name)
		if g.Detail != "" {
			line += " — " + g.Detail
		}
		fmt.Fprintln(stdout, termsafe.Text(line))
	}
	// Progress goes to stderr as the gates run (each takes seconds on a
	// real bundle); the verdicts go to stdout as soon as they are known.
	_, err = engine.SelfTest(b, open, tok, engine.SelfTestOptions{
		Steps:    *steps,
		Progress: func(s string) { fmt.Fprintln(stderr, "selftest:", s) },
		OnGate:   report,
		OnCopies: func(b float64) {
			fmt.Fprintf(stdout, "INFO  seam copies — %.0f B per decoded token, from the runtime's own meter\n", b)
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, "orchard selftest:", err)
		return exitFailure
	}
	report(chain.RopeCheck(b).Verdict())
	return code
}
