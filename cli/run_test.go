package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunJSONAndStats(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	code, out, stderr := runCmd(t, "run", "--demo", "--family", "stateful3", "--prompt", "Hello.", "--max-tokens", "5", "--json", "--stats")
	if code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	var res struct {
		Reply     string
		PromptIDs []int `json:"promptIds"`
		ReplyIDs  []int `json:"replyIds"`
		Metrics   struct {
			GeneratedTokens int    `json:"generatedTokens"`
			FinishReason    string `json:"finishReason"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(res.ReplyIDs) != res.Metrics.GeneratedTokens || len(res.PromptIDs) == 0 || res.PromptIDs[0] != 2 {
		t.Fatalf("result %+v", res)
	}
	for _, want := range []string{"--- stats ---", "prompt tokens:", "finish reason:", "TTFT:", "no speculation assets"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestRunStdinAndErrors(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	var out, errb strings.Builder
	code := Main([]string{"run", "--demo", "--max-tokens", "3", "--no-mtp"}, strings.NewReader("from stdin\n"), &out, &errb)
	if code != 0 || !strings.Contains(errb.String(), "OFF") {
		t.Fatalf("stdin prompt: %d %s", code, errb.String())
	}
	if code, _, _ := runCmd(t, "run", "--prompt", "x"); code != 2 {
		t.Fatalf("no model: exit %d", code)
	}
	if code, _, stderr := runCmd(t, "run", "--model", t.TempDir(), "--prompt", "x"); code != 2 || !strings.Contains(stderr, "no model bundle") {
		t.Fatalf("not a bundle: %d %s", code, stderr)
	}
	code, _, stderr := runCmd(t, "run", "--demo", "--prompt", "x", "--temp", "0.8")
	if code != 2 || !strings.Contains(stderr, "argmax") {
		t.Fatalf("temperature on r1: %d %s", code, stderr)
	}
}

// TestRunKVSaveRestore: corellm-chat's --kv-save / --kv-restore round trip
// continues exactly as a plain run, and --save / --resume use the store.
func TestRunKVSaveRestore(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	dir := t.TempDir() + "/kv"
	if code, _, stderr := runCmd(t, "run", "--demo", "--prompt", "Pears?", "--kv-save", dir); code != 0 || !strings.Contains(stderr, "--- kv save ---") {
		t.Fatalf("kv-save: %d %s", code, stderr)
	}
	_, plain, _ := runCmd(t, "run", "--demo", "--prompt", "Pears?", "--max-tokens", "8", "--json")
	code, restored, stderr := runCmd(t, "run", "--demo", "--kv-restore", dir, "--max-tokens", "8", "--json", "--prompt", "Pears?")
	if code != 0 {
		t.Fatalf("kv-restore: %d %s", code, stderr)
	}
	ids := func(js string) string {
		var r struct {
			ReplyIDs []int `json:"replyIds"`
		}
		json.Unmarshal([]byte(js), &r)
		return fmt.Sprint(r.ReplyIDs)
	}
	if ids(restored) != ids(plain) || ids(plain) == "[]" {
		t.Fatalf("restored %s, plain %s", ids(restored), ids(plain))
	}
	home, _ := os.UserHomeDir()
	metrics, _ := os.ReadFile(filepath.Join(home, ".local", "share", "orchard", "metrics.jsonl"))
	if !strings.Contains(string(metrics), `"kvOp":"save"`) || !strings.Contains(string(metrics), `"kvOp":"restore"`) {
		t.Errorf("metrics.jsonl lacks the kv records:\n%s", metrics)
	}
	if code, _, stderr := runCmd(t, "run", "--demo", "--kv-restore", dir, "--prompt", "Apples?"); code != 2 || !strings.Contains(stderr, "does not match") {
		t.Fatalf("kv-restore with another prompt: %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "run", "--demo", "--prompt", "One.", "--max-tokens", "4", "--save", "c1"); code != 0 || !strings.Contains(stderr, `saved checkpoint "c1"`) {
		t.Fatalf("save: %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "run", "--demo", "--resume", "c1", "--prompt", "Two.", "--max-tokens", "4", "--stats"); code != 0 || !strings.Contains(stderr, `resumed "c1": 1 turns`) {
		t.Fatalf("resume: %d %s", code, stderr)
	}
	if code, _, stderr := runCmd(t, "run", "--demo", "--resume", "nope", "--prompt", "x"); code != 2 || !strings.Contains(stderr, "nope") {
		t.Fatalf("resume of a missing checkpoint: %d %s", code, stderr)
	}
}

// TestSelftestFitsASmallContext: the tiny demo's context holds 128
// positions; selftest shortens its prompts to fit instead of failing, and
// says what it runs while it runs.
func TestSelftestFitsASmallContext(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	for _, fam := range []string{"r1", "stateful3"} {
		code, out, stderr := runCmd(t, "selftest", "--demo", "--family", fam)
		if code != 0 || strings.Count(out, "PASS")+strings.Count(out, "SKIP") != 6 {
			t.Fatalf("%s: exit %d\n%s%s", fam, code, out, stderr)
		}
		for _, want := range []string{"the context holds 128 positions", "prompts shortened", "gate 1 of 5: speculation on == off…", "gate 5 of 5"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", fam, want, stderr)
			}
		}
		// The executor's own copy meter (issue 20).
		if !strings.Contains(out, "INFO  seam copies — ") || !strings.Contains(out, "B per decoded token") {
			t.Errorf("%s: no copy meter line:\n%s", fam, out)
		}
	}
}
