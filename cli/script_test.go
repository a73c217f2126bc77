package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cliScript = `{"replies":[
 {"match":"(?i)orchards","reply":"Apple orchards, scripted."},
 {"match":"(?i)^hello","reply":"Hello from the script."}
]}`

func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunScript: orchard run --demo --script says the scripted reply, and
// --demo without a terminal (orchard --demo) passes the script on.
func TestRunScript(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	script := writeScript(t, cliScript)
	code, out, stderr := runCmd(t, "run", "--demo", "--family", "v2", "--script", script, "--prompt", "hello", "--json")
	if code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	var res struct {
		Reply   string
		Metrics struct {
			FinishReason string `json:"finishReason"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Reply != "Hello from the script." || res.Metrics.FinishReason != "eos" {
		t.Fatalf("reply %+v (%v)\n%s", res, err, out)
	}
	if !strings.Contains(stderr, "replies from the script "+script) {
		t.Errorf("stderr does not name the script:\n%s", stderr)
	}
	code, out, stderr = runCmd(t, "--demo", "--script", script)
	if code != 0 || !strings.Contains(out, "Apple orchards, scripted.") {
		t.Fatalf("orchard --demo --script: %d %q %s", code, out, stderr)
	}
}

// TestScriptFileErrors: a script that is missing, not JSON or holds a bad
// expression is exit 2 with a message naming the file, before a turn.
func TestScriptFileErrors(t *testing.T) {
	isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	missing := filepath.Join(t.TempDir(), "nope.json")
	for _, c := range []struct {
		path, says string
	}{
		{missing, "no such file"},
		{writeScript(t, `{"replies":[`), "not valid JSON"},
		{writeScript(t, `{"replies":[{"match":"a(","reply":"x"}]}`), "replies[0].match"},
		{writeScript(t, `{"replies":[{"match":"a","reply":"x<turn|>"}]}`), "end the turn early"},
	} {
		code, _, stderr := runCmd(t, "run", "--demo", "--script", c.path, "--prompt", "hello")
		if code != 2 || !strings.Contains(stderr, c.path) || !strings.Contains(stderr, c.says) {
			t.Errorf("%s: exit %d, %q", c.path, code, stderr)
		}
	}
}

// TestBundleSynthScript: bundle synth --script keeps the script in the
// bundle, which then replies as scripted without any flag; a bad script
// writes nothing.
func TestBundleSynthScript(t *testing.T) {
	isolate(t)
	out := filepath.Join(t.TempDir(), "b")
	code, stdout, stderr := runCmd(t, "bundle", "synth", "--family", "stateful3", "--preset", "tiny", "--out", out, "--script", writeScript(t, cliScript))
	if code != 0 {
		t.Fatalf("synth: %d %s", code, stderr)
	}
	dir := strings.TrimSpace(stdout)
	st, err := os.Stat(filepath.Join(dir, "orchard_script.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stored script: %v %v", st, err)
	}
	code, reply, stderr := runCmd(t, "run", "--model", dir, "--prompt", "Hello there")
	if code != 0 || strings.TrimSpace(reply) != "Hello from the script." {
		t.Fatalf("run on the scripted bundle: %d %q %s", code, reply, stderr)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	code, _, stderr = runCmd(t, "bundle", "synth", "--family", "r1", "--out", bad, "--script", writeScript(t, `{"replies":[{"match":"(","reply":""}]}`))
	if code != 2 || !strings.Contains(stderr, "replies[0].match") {
		t.Fatalf("bad script: %d %s", code, stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused script left %s behind (%v)", bad, err)
	}
}

// TestServeScript: orchard serve --demo --script answers an OpenAI client
// with the scripted reply.
func TestServeScript(t *testing.T) {
	serveEnv(t)
	srv := serveHere(t, "--demo", "--family", "r1", "--script", writeScript(t, cliScript), "--listen", "127.0.0.1:0", "--socket", "none")
	body := `{"model":"synthetic-r1-tiny-seed1","messages":[{"role":"user","content":"hello?"}]}`
	req, _ := http.NewRequestWithContext(context.Background(), "POST", "http://"+srv.addr+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var res struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	err = json.Unmarshal(raw, &res)
	if err != nil || len(res.Choices) != 1 || res.Choices[0].Message.Content != "Hello from the script." || res.Choices[0].FinishReason != "stop" {
		t.Errorf("reply %d %s (%v)", resp.StatusCode, raw, err)
	}
	srv.stop(t)
}
