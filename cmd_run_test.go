package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRunJSONAndStats(t *testing.T) {
	isolate(t)
	code, out, stderr := runCmd(t, "run", "--demo", "--demo-family", "stateful3", "--prompt", "Hello.", "--max-tokens", "5", "--json", "--stats")
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
	var out, errb strings.Builder
	code := run([]string{"run", "--demo", "--max-tokens", "3", "--no-mtp"}, strings.NewReader("from stdin\n"), &out, &errb)
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
	if code != 1 || !strings.Contains(stderr, "argmax") {
		t.Fatalf("temperature on r1: %d %s", code, stderr)
	}
}
