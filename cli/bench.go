package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/engine/chain"
)

// benchWorkload is one row of the seeds' workload table.
type benchWorkload struct{ Name, Prompt string }

var benchWorkloads = []benchWorkload{
	{"verbatim copy", "Copy this list exactly: apple, mandarin, grape, peach, pear, strawberry, melon, watermelon, kiwi, banana."},
	{"ID enumeration", "List the IDs of these six pieces of equipment, one per line: pump P-1042, valve V-2210, motor M-3307, sensor S-4415, relay R-5521, filter F-6634."},
	{"JSON extraction", "Extract every person, place, and date from this note as JSON with keys people, places, dates: Maya flew from Osaka to Reykjavik on March 3, 2026, and met Dr. Chen and Lena Novak at the Harpa concert hall on March 5, 2026."},
	{"free-form prose", "In one sentence, why do orchards need bees?"},
}

// benchRun is what one child `orchard run --json` reports.
type benchRun struct {
	Reply    string             `json:"reply"`
	ReplyIDs []int              `json:"replyIds"`
	Metrics  engine.TurnMetrics `json:"metrics"`
	Warmup   []chain.WarmStep   `json:"warmup"`
}

// benchReport is `orchard bench --json`.
type benchReport struct {
	Workloads []benchRow `json:"workloads"`
	// Warmup is each function's first call (loading and specializing it:
	// cold) and its second (warm), medians over every child.
	Warmup []benchWarm `json:"warmup"`
	// SeamCopiedBytesPerToken is what the runtime really copied between
	// the host and Core ML per decoded token, from its own meter (median
	// over every run; SeamMetered false: the runtime keeps no meter).
	SeamCopiedBytesPerToken float64 `json:"seamCopiedBytesPerToken"`
	SeamMetered             bool    `json:"seamMetered"`
}

// benchWarm is one function's cold and warm call.
type benchWarm struct {
	Function    string  `json:"function"`
	ColdSeconds float64 `json:"coldSeconds"`
	WarmSeconds float64 `json:"warmSeconds"`
	Runs        int     `json:"runs"`
}

// benchRow is the summary of one workload.
type benchRow struct {
	Workload       string  `json:"workload"`
	OffTokPerSec   float64 `json:"offDecodeTokPerSec"`
	OnTokPerSec    float64 `json:"onDecodeTokPerSec"`
	PairRatio      float64 `json:"pairRatioMedian"` // median over rounds of on/off decode tok/s
	TTFTSeconds    float64 `json:"ttftSecondsOff"`
	PrefillTokPerS float64 `json:"prefillTokPerSec"`
	Acceptance     float64 `json:"draftAcceptanceRate"`
	Tokens         int     `json:"generatedTokens"`
	Identical      bool    `json:"identicalOffOn"`
	SeamCopied     float64 `json:"seamCopiedBytesPerToken"` // median over the workload's runs
	Skipped        string  `json:"skipped,omitempty"`       // why the workload could not run (its prompt exceeds the context)

	seam []float64
}

// runBench is `orchard bench`: each condition runs in its own child
// process (Core ML keeps memory mapped after unload, which would taint
// later conditions), off and on interleaved per round, and the speed-up is
// the median of the per-round on/off ratios.
func runBench(args []string, stdout, stderr io.Writer) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "orchard bench:", err)
		return exitFailure
	}
	spawn := func(a []string) ([]byte, error) {
		cmd := exec.Command(exe, a...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("%v: %s", err, bytes.TrimSpace(errb.Bytes()))
		}
		return out, nil
	}
	return bench(args, stdout, stderr, spawn)
}

func bench(args []string, stdout, stderr io.Writer, spawn func([]string) ([]byte, error)) int {
	fs := flag.NewFlagSet("orchard bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "bundle folder")
	demo := fs.Bool("demo", false, "use the demo bundle")
	family := fs.String("family", "r1", "family of the demo bundle: "+families)
	rounds := fs.Int("rounds", 3, "interleaved off/on rounds per workload")
	maxTokens := fs.Int("max-tokens", 64, "tokens per run")
	draftLen := fs.Int("draft-len", 4, "draft length with speculation on")
	asJSON := fs.Bool("json", false, "print JSON instead of a markdown table")
	compute := fs.String("compute", "", "compute units of the chunks in every run (default: the bundle's)")
	if _, err := parseFlags(fs, args); err != nil {
		return exitUsage
	}
	if (*model == "") == !*demo || *rounds < 1 || *maxTokens < 1 {
		fmt.Fprintln(stderr, "orchard bench: give --model DIR or --demo, --rounds ≥ 1, --max-tokens ≥ 1")
		return exitUsage
	}
	target := []string{"--model", *model}
	if *demo {
		if err := checkFamily(*family); err != nil {
			fmt.Fprintln(stderr, "orchard bench:", err)
			return exitUsage
		}
		if _, err := demoBundle(*family, stderr); err != nil { // make it once, not in every child
			fmt.Fprintln(stderr, "orchard bench:", err)
			return exitFailure
		}
		target = []string{"--demo", "--family", *family}
	} else if _, err := bundle.Open(*model); err != nil {
		// Checked here, so a wrong path is a usage error, not a failed child.
		fmt.Fprintln(stderr, "orchard bench:", err)
		return exitUsage
	}
	if _, err := coreml.ParseComputeUnits(*compute); err != nil {
		fmt.Fprintln(stderr, "orchard bench: --compute:", err)
		return exitUsage
	}
	if *compute != "" {
		target = append(target, "--compute", *compute)
	}
	var rows []benchRow
	cold, warm := map[string][]float64{}, map[string][]float64{}
	var order []string
	var seam []float64
	metered := true
	runs, total := 0, len(benchWorkloads)**rounds*2
	for _, w := range benchWorkloads {
		var off, on, ratios, ttft, prefill, acc []float64
		row := benchRow{Workload: w.Name, Identical: true}
		var first []int
		for r := range *rounds {
			conds := []string{"off", "on"}
			if r%2 == 1 {
				slices.Reverse(conds)
			}
			got := map[string]benchRun{}
			for _, c := range conds {
				runs++
				// Each child takes seconds: say what runs, on stderr.
				fmt.Fprintf(stderr, "bench: %d/%d %s, round %d of %d, speculation %s…\n", runs, total, w.Name, r+1, *rounds, c)
				// Every child warms up: its first and second call of each
				// function are the cold and warm figures.
				a := append(append([]string{"run"}, target...), "--json", "--warm-up", "on", "--prompt", w.Prompt, "--spec", c,
					"--max-tokens", strconv.Itoa(*maxTokens), "--draft-len", strconv.Itoa(*draftLen))
				out, err := spawn(a)
				if err != nil && strings.Contains(err.Error(), chain.ErrContextFull.Error()) {
					row.Skipped = "the prompt does not fit the context"
					break
				}
				if err != nil {
					fmt.Fprintf(stderr, "orchard bench: %s (%s): %v\n", w.Name, c, err)
					return exitFailure
				}
				var br benchRun
				if err := json.Unmarshal(out, &br); err != nil {
					fmt.Fprintf(stderr, "orchard bench: %s (%s): unreadable result: %v\n", w.Name, c, err)
					return exitFailure
				}
				got[c] = br
				for _, s := range br.Warmup {
					if s.Err != "" {
						continue
					}
					if _, ok := cold[s.Function]; !ok {
						order = append(order, s.Function)
					}
					cold[s.Function] = append(cold[s.Function], s.Cold)
					warm[s.Function] = append(warm[s.Function], s.Warm)
				}
				metered = metered && br.Metrics.SeamMetered
				if br.Metrics.SeamMetered {
					seam = append(seam, br.Metrics.SeamCopiedBytesPerToken)
					row.seam = append(row.seam, br.Metrics.SeamCopiedBytesPerToken)
				}
				if first == nil {
					first = br.ReplyIDs
				}
				if !slices.Equal(first, br.ReplyIDs) {
					row.Identical = false
				}
			}
			if row.Skipped != "" {
				break
			}
			o, n := got["off"].Metrics, got["on"].Metrics
			off, on = append(off, o.DecodeTokPerSec), append(on, n.DecodeTokPerSec)
			if o.DecodeTokPerSec > 0 {
				ratios = append(ratios, n.DecodeTokPerSec/o.DecodeTokPerSec)
			}
			ttft, prefill = append(ttft, o.TTFTSeconds), append(prefill, o.PrefillTokPerSec)
			acc = append(acc, n.Spec.AcceptanceRate)
			row.Tokens = o.GeneratedTokens
		}
		row.OffTokPerSec, row.OnTokPerSec, row.PairRatio = median(off), median(on), median(ratios)
		row.TTFTSeconds, row.PrefillTokPerS, row.Acceptance = median(ttft), median(prefill), median(acc)
		row.SeamCopied = median(row.seam)
		rows = append(rows, row)
	}
	report := benchReport{Workloads: rows, SeamMetered: metered && len(seam) > 0, SeamCopiedBytesPerToken: median(seam)}
	for _, f := range order {
		report.Warmup = append(report.Warmup, benchWarm{Function: f, ColdSeconds: median(cold[f]), WarmSeconds: median(warm[f]), Runs: len(cold[f])})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(report)
	} else {
		fmt.Fprintf(stdout, "| workload | off tok/s | on tok/s | speed-up (pair median) | acceptance | TTFT | prefill tok/s | tokens | identical |\n")
		fmt.Fprintf(stdout, "|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			if r.Skipped != "" {
				fmt.Fprintf(stdout, "| %s | skipped: %s | | | | | | | |\n", r.Workload, r.Skipped)
				continue
			}
			fmt.Fprintf(stdout, "| %s | %.1f | %.1f | ×%.2f | %.2f | %.0f ms | %.0f | %d | %v |\n", r.Workload, r.OffTokPerSec,
				r.OnTokPerSec, r.PairRatio, r.Acceptance, 1000*r.TTFTSeconds, r.PrefillTokPerS, r.Tokens, r.Identical)
		}
		report.writeWarmup(stdout)
	}
	for _, r := range rows {
		if !r.Identical {
			fmt.Fprintf(stderr, "orchard bench: %s: output differs between speculation off and on\n", r.Workload)
			return exitFailure
		}
	}
	return exitOK
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// writeWarmup prints the cold and warm calls and the copy meter under the
// workload table.
func (r benchReport) writeWarmup(w io.Writer) {
	if len(r.Warmup) > 0 {
		fmt.Fprintf(w, "\n| function | cold (first call) | warm | runs |\n|---|---|---|---|\n")
		for _, f := range r.Warmup {
			fmt.Fprintf(w, "| %s | %s | %s | %d |\n", f.Function, benchSeconds(f.ColdSeconds), benchSeconds(f.WarmSeconds), f.Runs)
		}
	}
	if r.SeamMetered {
		fmt.Fprintf(w, "\nseam copies: %.0f B per decoded token (the runtime's own meter)\n", r.SeamCopiedBytesPerToken)
	}
}

func benchSeconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.2f ms", 1000*s)
	}
	return fmt.Sprintf("%.2f s", s)
}
