package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/checkpoints"
)

// TestExitCodes: every command exits 2 for bad usage or bad input and 1
// for a failure while running — the same rule everywhere.
func TestExitCodes(t *testing.T) {
	home := isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	missing := filepath.Join(home, "no-such-bundle")
	notDir := filepath.Join(home, "file")
	os.WriteFile(notDir, []byte("x"), 0o600)
	store := filepath.Join(home, "store")
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"--version"}, 0, ""},
		{[]string{"version"}, 0, ""},
		{[]string{"version", "extra"}, 2, "unexpected argument"},
		{[]string{"--demo", "--family", "bogus"}, 2, `"bogus"`},
		{[]string{"chat", "--no-such-flag"}, 2, "no-such-flag"},
		{[]string{"run", "--prompt", "x"}, 2, "--model"},
		{[]string{"run", "--model", missing, "--prompt", "x"}, 2, missing},
		{[]string{"run", "--model", notDir, "--prompt", "x"}, 2, "not a folder"},
		{[]string{"run", "--demo", "--family", "bogus", "--prompt", "x"}, 2, `"bogus"`},
		{[]string{"run", "--demo", "--prompt", "x", "--top-k", "40"}, 2, "top-k 40 (flag --top-k): this r1 bundle emits argmax token ids only (no logits)"},
		{[]string{"run", "--demo", "--prompt", "x", "--temp", "0.8"}, 2, "logits"},
		{[]string{"run", "--demo", "--prompt", "x", "--draft-len", "16"}, 2, "verify width 4"},
		{[]string{"run", "--demo", "--prompt", "x", "--save", "../escape"}, 2, "--save"},
		{[]string{"run", "--demo", "--prompt", "x", "--max-tokens", "-1"}, 2, "--max-tokens"},
		{[]string{"selftest"}, 2, "--model"},
		{[]string{"selftest", "--model", missing}, 2, missing},
		{[]string{"selftest", "--demo", "--family", "bogus"}, 2, `"bogus"`},
		{[]string{"bench"}, 2, "--model"},
		{[]string{"bench", "--model", missing}, 2, missing},
		{[]string{"bench", "--demo", "--family", "bogus"}, 2, `"bogus"`},
		{[]string{"bundle"}, 2, "want synth"},
		{[]string{"bundle", "--help"}, 0, ""},
		{[]string{"bundle", "nope"}, 2, "unknown command"},
		{[]string{"bundle", "synth", "--family", "bogus", "--out", filepath.Join(home, "b")}, 2, `--family "bogus" is not a bundle family`},
		{[]string{"bundle", "synth", "--family", "r1", "--preset", "huge", "--out", filepath.Join(home, "b")}, 2, `"huge"`},
		{[]string{"bundle", "synth", "--family", "r1", "--out", "/proc/orchard-cannot-write-here"}, 1, ""},
		{[]string{"bundle", "inspect", missing}, 2, missing},
		{[]string{"bundle", "forward"}, 2, "--ids"},
		{[]string{"config"}, 2, "want show or init"},
		{[]string{"config", "show", "--temp", "-3"}, 2, "temperature"},
		{[]string{"config", "show", "--key", "sned=x"}, 2, `"sned"`},
		{[]string{"config", "show", "--key", "palette=enter"}, 2, "no way to send: enter is also palette"},
		{[]string{"config", "show", "--key", "cancel=ctrl+c,esc"}, 2, "no way to quit"},
		{[]string{"config", "show", "--key", "quit=ctrl+q"}, 0, ""},
		{[]string{"models", "extra"}, 2, "unexpected argument"},
		{[]string{"ckpt"}, 2, "want ls"},
		{[]string{"ckpt", "rm", "--dir", store, "nope"}, 2, `"nope"`},
		{[]string{"ckpt", "import", "--dir", store, missing}, 2, missing},
		{[]string{"tokenize"}, 2, "--tokenizer"},
		{[]string{"tokenize", "--tokenizer", missing}, 2, missing},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("orchard %s: exit %d, want %d; stderr:\n%s", strings.Join(tc.args, " "), code, tc.code, stderr)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := runCmd(t, "version")
	for _, want := range []string{"orchard ", "commit ", "go1.", "/"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("version lacks %q: %q", want, out)
		}
	}
	if _, v, _ := runCmd(t, "--version"); v != out {
		t.Errorf("--version %q differs from version %q", v, out)
	}
	if code, out, _ := runCmd(t, "bundle", "--help"); code != 0 || !strings.Contains(out, "orchard bundle synth") || !strings.Contains(out, "inspect") {
		t.Errorf("bundle --help: %d %q", code, out)
	}
	// One --family flag: the usage names it for run, selftest and bench.
	_, usageText, _ := runCmd(t, "--help")
	if strings.Contains(usageText, "demo-family") || strings.Count(usageText, "--family F") < 4 {
		t.Errorf("usage:\n%s", usageText)
	}
}

// TestNothingToContinue: --continue without a saved conversation says so.
func TestNothingToContinue(t *testing.T) {
	store, err := checkpoints.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	if code := checkContinue(store, nil, &errb); code != 2 || !strings.Contains(errb.String(), "nothing to continue: no conversation has been saved yet") {
		t.Fatalf("empty store: %d %q", code, errb.String())
	}
	if err := store.SaveAutosave(testCheckpoint(checkpoints.Autosave, time.Now())); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := checkContinue(store, nil, &errb); code != 0 {
		t.Fatalf("with an autosave: %d %q", code, errb.String())
	}
}
