package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestBench runs the workload table with in-process "children" and checks
// the table's shape and the lossless check.
func TestBench(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	var children int
	spawn := func(a []string) ([]byte, error) {
		children++
		var out, errb bytes.Buffer
		if code := Main(a, strings.NewReader(""), &out, &errb); code != 0 {
			return nil, fmt.Errorf("exit %d: %s", code, errb.String())
		}
		return out.Bytes(), nil
	}
	var out, errb bytes.Buffer
	code := bench([]string{"--demo", "--family", "v2", "--rounds", "2", "--max-tokens", "6", "--json"}, &out, &errb, spawn)
	if code != 0 {
		t.Fatalf("bench: %d %s", code, errb.String())
	}
	var rep benchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	rows := rep.Workloads
	// The executor's own meter, and every function's first (cold) and
	// second (warm) call from the children's warm-up.
	if !rep.SeamMetered || !strings.Contains(out.String(), `"seamCopiedBytesPerToken"`) {
		t.Errorf("no copy meter in %s", out.String())
	}
	if len(rep.Warmup) < 2 {
		t.Errorf("warm-up figures %+v", rep.Warmup)
	}
	for _, w := range rep.Warmup {
		if w.ColdSeconds <= 0 || w.WarmSeconds <= 0 || w.Runs < 2 {
			t.Errorf("warm-up %+v", w)
		}
	}
	// The tiny demo's 128-token context cannot hold the JSON extraction
	// prompt: that row is skipped with the reason, the others measured.
	skipped := 0
	for _, r := range rows {
		if r.Skipped != "" {
			skipped++
			continue
		}
		if !r.Identical || r.OffTokPerSec <= 0 || r.PairRatio <= 0 || r.Tokens < 1 || r.Tokens > 6 { // 6 is the cap; a stop token may come first
			t.Errorf("row %+v", r)
		}
	}
	if len(rows) != 4 || skipped != 1 || children < 3*2*2 {
		t.Fatalf("%d rows (%d skipped) from %d children", len(rows), skipped, children)
	}
	// Progress while the children run, one line each, on stderr.
	if got := strings.Count(errb.String(), "bench: "); got != children || !strings.Contains(errb.String(), "bench: 1/16 verbatim copy, round 1 of 2, speculation off…") {
		t.Errorf("%d progress lines for %d children:\n%s", got, children, errb.String())
	}
	if median([]float64{3, 1, 2}) != 2 || median([]float64{4, 1, 2, 3}) != 2.5 {
		t.Fatal("median")
	}
}
