package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBundleSynthForms: --form (repeatable) writes a bundle in the named
// forms, which opens and runs; a form that does not apply, or is not one,
// is a usage error naming the forms.
func TestBundleSynthForms(t *testing.T) {
	isolate(t)
	dir := filepath.Join(t.TempDir(), "b")
	code, out, stderr := runCmd(t, "bundle", "synth", "--family", "stateful3-logits", "--preset", "tiny", "--out", dir,
		"--form", "shapeless-outputs", "--form", "fp32-inputs", "--form", "logits-output=var_2291", "--form", "declines-backings")
	if code != 0 {
		t.Fatalf("synth: %d %s", code, stderr)
	}
	code, _, stderr = runCmd(t, "run", "--model", strings.TrimSpace(out), "--prompt", "Hello.", "--max-tokens", "3", "--warm-up", "on")
	if code != 0 {
		t.Fatalf("run on the forms: %d %s", code, stderr)
	}
	if !strings.Contains(stderr, "warm-up 1/") {
		t.Errorf("no warm-up progress lines:\n%s", stderr)
	}
	// auto warms up on Core ML only: the pure-Go runtime compiles nothing.
	if _, _, stderr := runCmd(t, "run", "--model", strings.TrimSpace(out), "--prompt", "Hello.", "--max-tokens", "1"); strings.Contains(stderr, "warm-up") {
		t.Errorf("the reference runtime warmed up by default:\n%s", stderr)
	}
	for _, bad := range [][]string{{"--family", "r1", "--form", "logits-output=x"}, {"--family", "v2", "--form", "shapless"}} {
		args := append([]string{"bundle", "synth", "--preset", "tiny", "--out", filepath.Join(t.TempDir(), "x")}, bad...)
		if code, _, stderr := runCmd(t, args...); code != 2 || !strings.Contains(stderr, "--form") {
			t.Errorf("%v: exit %d, %s", bad, code, stderr)
		}
	}
	if _, out, _ := runCmd(t, "bundle", "help"); !strings.Contains(out, "shapeless-outputs") || !strings.Contains(out, "declines-backings") {
		t.Errorf("bundle help lists no forms:\n%s", out)
	}
}
