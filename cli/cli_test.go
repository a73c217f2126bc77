package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestBundleCommands(t *testing.T) {
	out := filepath.Join(t.TempDir(), "b")
	code, dir, stderr := runCmd(t, "bundle", "synth", "--family", "stateful3", "--preset", "tiny", "--seed", "4", "--out", out)
	if code != 0 {
		t.Fatalf("synth: %d %s", code, stderr)
	}
	dir = strings.TrimSpace(dir)
	if !strings.HasSuffix(dir, "gemma4_e2b_stateful_chunks") {
		t.Fatalf("synth printed %q", dir)
	}
	if code, _, _ := runCmd(t, "bundle", "synth", "--family", "r1", "--out", out); code != 2 {
		t.Fatalf("synth into a non-empty folder: exit %d, want 2", code)
	}

	code, text, stderr := runCmd(t, "bundle", "inspect", out)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, stderr)
	}
	for _, want := range []string{"stateful3", "sliding window", "16", "chunk_1", "prefill_b8", "embed_tokens_q8.bin", "identity"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, text)
		}
	}
	code, js, _ := runCmd(t, "bundle", "inspect", out, "--json")
	var rep struct {
		Family   string
		Geometry struct{ Context int }
	}
	if code != 0 || json.Unmarshal([]byte(js), &rep) != nil || rep.Family != "stateful3" || rep.Geometry.Context != 128 {
		t.Fatalf("inspect --json: %d %+v\n%s", code, rep, js)
	}

	code, js, stderr = runCmd(t, "bundle", "forward", dir, "--ids", "2,105,20,21", "--top", "3")
	var rows []struct {
		Position, Token int
		Top             []struct {
			ID    int
			Logit float32
		}
	}
	if code != 0 || json.Unmarshal([]byte(js), &rows) != nil || len(rows) != 4 || len(rows[3].Top) != 3 {
		t.Fatalf("forward: %d %s\n%s", code, stderr, js)
	}
	if rows[3].Top[0].ID != rows[3].Token || rows[3].Top[0].Logit < rows[3].Top[1].Logit {
		t.Fatalf("top entries not sorted by logit or token not the argmax: %+v", rows[3])
	}
	if code, _, stderr := runCmd(t, "bundle", "forward", dir, "--ids", "2,99999"); code != 2 || !strings.Contains(stderr, "99999") {
		t.Fatalf("forward with a bad id: %d %s", code, stderr)
	}

	// A truncated sidecar: exit 2 and the message names the file and sizes.
	if err := os.Truncate(filepath.Join(dir, "embed_tokens_scales.bin"), 10); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCmd(t, "bundle", "inspect", dir)
	if code != 2 || !strings.Contains(stderr, "embed_tokens_scales.bin") || !strings.Contains(stderr, "size 10 bytes") {
		t.Fatalf("inspect of a damaged bundle: exit %d, %s", code, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"bundle"}, {"bundle", "inspect"}, {"bundle", "synth", "--family", "x9", "--out", "y"}} {
		if code, _, _ := runCmd(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, stderr := runCmd(t, "bundle", "inspect", t.TempDir()); code != 2 || !strings.Contains(stderr, "no model bundle found") {
		t.Errorf("inspect of an empty folder: %d %s", code, stderr)
	}
}

// TestDemo: without a terminal, --demo falls back to the scripted turn,
// making the demo bundle once and reusing it.
func TestDemo(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	code, out, stderr := runCmd(t, "--demo", "--family", "v2")
	if code != 0 {
		t.Fatalf("demo: %d %s", code, stderr)
	}
	if out == "" || !strings.Contains(stderr, "first run only") || !strings.Contains(stderr, "generated tokens:") {
		t.Fatalf("demo output:\n%s\n%s", out, stderr)
	}
	if code, _, stderr := runCmd(t, "--demo", "--family", "v2"); code != 0 || strings.Contains(stderr, "first run") {
		t.Fatalf("second demo run: %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "chat"); code != 2 || !strings.Contains(stderr, "needs a terminal") {
		t.Fatalf("chat without a terminal: %d %s", code, stderr)
	}
}
