package cli

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
)

// writeConfig writes home's default config file.
func writeConfig(t *testing.T, home, text string) {
	t.Helper()
	p := filepath.Join(home, ".config", "orchard", "config.toml")
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A sampling default in config.toml is for the bundles that can sample:
// on an argmax bundle it is not used, and a note says so; `orchard --demo`
// and `orchard run --demo` exited 2 with top_k = 40 in the file. The same
// value given by a flag or the environment is refused, naming where it
// came from; on a bundle with logits the file's value applies.
func TestConfigSamplingDefaultsFitTheBundle(t *testing.T) {
	home := isolate(t)
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny")
	writeConfig(t, home, "[sampling]\ntop_k = 40\ntemperature = 0.7\nseed = 9\n[speculation]\nmode = \"on\"\n")

	code, _, stderr := runCmd(t, "run", "--demo", "--family", "stateful3", "--prompt", "hi", "--max-tokens", "2")
	if code != 0 {
		t.Fatalf("run --demo with top_k = 40 in the file: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{
		"note: config.toml's temperature = 0.7 is not used: this bundle emits argmax ids",
		"note: config.toml's top_k = 40 is not used: this bundle emits argmax ids",
		"note: config.toml's seed = 9 is not used",
		"note: config.toml's mode = on is not used: this bundle has no verify function",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, c := range []struct {
		args []string
		env  [2]string
		want string
	}{
		{[]string{"--top-k", "10"}, [2]string{}, "top-k 10 (flag --top-k): this stateful3 bundle emits argmax token ids only"},
		{nil, [2]string{"ORCHARD_SAMPLING_TOP_P", "0.5"}, "top-p 0.5 (env ORCHARD_SAMPLING_TOP_P): this stateful3 bundle emits argmax"},
		{[]string{"--spec", "on"}, [2]string{}, "speculation on (flag --spec): this stateful3 bundle has no verify function"},
	} {
		if c.env[0] != "" {
			t.Setenv(c.env[0], c.env[1])
		}
		args := append([]string{"run", "--demo", "--family", "stateful3", "--prompt", "hi", "--max-tokens", "2"}, c.args...)
		code, _, stderr := runCmd(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v %v: exit %d, want 2 and %q:\n%s", c.args, c.env, code, c.want, stderr)
		}
		if c.env[0] != "" {
			t.Setenv(c.env[0], "")
		}
	}
	// A bundle with logits samples with the file's values, without a note.
	code, _, stderr = runCmd(t, "run", "--demo", "--family", "stateful3-logits", "--prompt", "hi", "--max-tokens", "2", "--spec", "auto")
	if code != 0 || strings.Contains(stderr, "is not used") {
		t.Errorf("logits bundle: exit %d\n%s", code, stderr)
	}
}

// fitSettings, the choice by source, on its own: what the engine's
// CheckSettings refuses is dropped when it came from the file or a
// default and refused when it came from a flag, naming it; the server's
// defaults are the fitted settings.
func TestFitSettings(t *testing.T) {
	home := isolate(t)
	writeConfig(t, home, "[sampling]\nmin_p = 0.1\nrepetition_penalty = 1.3\n[speculation]\ndraft_length = 8\n")
	load := func(args ...string) *config.Config {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fl := config.RegisterFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(config.Options{Env: os.Getenv, Flags: fl})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	argmaxV4 := engine.ModelInfo{Family: "r1", VerifyWidths: []int{4}}
	set, notes, err := fitSettings(load(), argmaxV4, settingsFrom(load(), 0))
	if err != nil {
		t.Fatal(err)
	}
	if set.Sampling.MinP != 0 || set.Sampling.RepetitionPenalty != 1 || set.DraftLen != 4 || len(notes) != 3 {
		t.Errorf("fitted %+v, notes %q", set, notes)
	}
	if _, err := engine.CheckSettings(argmaxV4, engine.Settings{}, set); err != nil {
		t.Errorf("the fitted settings are refused: %v", err)
	}
	if want := "config.toml's draft_length = 8 is not used: this bundle verifies at most 4 tokens a call"; !strings.Contains(strings.Join(notes, "\n"), want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
	_, _, err = fitSettings(load("--draft-len", "8"), argmaxV4, settingsFrom(load("--draft-len", "8"), 0))
	var se *engine.SettingError
	if !errors.As(err, &se) || !errors.Is(err, engine.ErrSettingUnsupported) || !strings.Contains(err.Error(), "draft length 8 (flag --draft-len)") {
		t.Errorf("flag: %v", err)
	}
	logits := engine.ModelInfo{Family: "stateful3", Logits: true}
	if set, notes, err := fitSettings(load(), logits, settingsFrom(load(), 0)); err != nil || set.Sampling.MinP != 0.1 || len(notes) != 0 {
		t.Errorf("logits bundle: %+v %q %v", set.Sampling, notes, err)
	}
}
