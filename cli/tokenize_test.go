package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/tokenizer"
)

func TestTokenize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	data, err := tokenizer.SynthesizeJSON(4096)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(s string) string {
		var b strings.Builder
		b.WriteByte('[')
		for i, id := range tok.Encode(s) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(id))
		}
		b.WriteString("]\n")
		return b.String()
	}
	tests := []struct {
		name      string
		args      []string
		stdin     string
		code      int
		stdout    string // exact, unless empty
		stdoutHas string
		stderrHas string
	}{
		{name: "encode lines", args: []string{"--tokenizer", path}, stdin: "hello world\r\n<bos>x\n\nlast",
			stdout: ids("hello world") + ids("<bos>x") + "[]\n" + ids("last")},
		{name: "encode JSON strings", args: []string{"--tokenizer", path, "--json"}, stdin: "\"a\\nb\"\n",
			stdout: ids("a\nb")},
		{name: "decode", args: []string{"--tokenizer", path, "--decode"}, stdin: "[2, 105]\n[]\n",
			stdout: "<bos><|turn>\n\n"},
		{name: "decode skipping specials as JSON", args: []string{"--tokenizer", path, "--decode", "--json", "--skip-special"},
			stdin: "[2, 107]\n", stdout: "\"\\n\"\n"},
		{name: "bench", args: []string{"--tokenizer", path, "--bench"}, stdin: "hello world\n", stdoutHas: "tokens/s"},
		{name: "help", args: []string{"-h"}, stdoutHas: "usage:"},
		{name: "missing tokenizer flag", args: nil, code: 2, stderrHas: "--tokenizer is required"},
		{name: "unknown flag", args: []string{"--tokenizer", path, "--nope"}, code: 2, stderrHas: "-nope"},
		{name: "stray argument", args: []string{"--tokenizer", path, "extra"}, code: 2, stderrHas: "unexpected argument"},
		{name: "decode and bench", args: []string{"--tokenizer", path, "--decode", "--bench"}, code: 2, stderrHas: "cannot be combined"},
		{name: "missing file", args: []string{"--tokenizer", path + ".none"}, code: 2, stderrHas: "no such file"},
		{name: "bad JSON string", args: []string{"--tokenizer", path, "--json"}, stdin: "nope\n", code: 2, stderrHas: "line 1"},
		{name: "bad id list", args: []string{"--tokenizer", path, "--decode"}, stdin: "[1]\n[x]\n", code: 2, stderrHas: "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := tokenize(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			if tt.stdout != "" && stdout.String() != tt.stdout {
				t.Errorf("stdout = %q, want %q", stdout.String(), tt.stdout)
			}
			if !strings.Contains(stdout.String(), tt.stdoutHas) {
				t.Errorf("stdout = %q, want it to contain %q", stdout.String(), tt.stdoutHas)
			}
			if !strings.Contains(stderr.String(), tt.stderrHas) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.stderrHas)
			}
		})
	}
}
