package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/reference"
)

// demoTurn is orchard --demo without a terminal: one turn of the demo
// bundle (a small synthetic bundle on the reference runtime, made on first
// use) with the configuration's settings, answering a question piped on
// stdin as orchard run does, or a scripted one when nothing is piped. Its
// weights are random, so the reply is noise; the pipeline, the timings and
// the token counts are real.
func demoTurn(cfg *config.Config, family, script string, stdin io.Reader, stdout, stderr io.Writer) int {
	text := ""
	if stdin != nil && !isTerminal(stdin) {
		data, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "orchard --demo: reading the question from stdin:", err)
			return exitFailure
		}
		text = strings.TrimSpace(string(data))
	}
	if text == "" {
		text = "Tell me about apple orchards."
	}
	if script == "" {
		fmt.Fprintf(stderr, "synthetic weights: the reply is noise; every number is measured.\n")
	}
	return runTurn(turnRequest{demo: true, family: family, script: script, text: text, maxTokens: 48, stats: true}, cfg, stdout, stderr)
}

// demoBundle returns the demo bundle folder, writing it on first use into
// the user's cache (atomically: a temp folder renamed into place).
func demoBundle(family string, stderr io.Writer) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "orchard", "demo")
	// ORCHARD_DEMO_PRESET=tiny makes a much smaller demo (the test suite
	// uses it to stay fast under the race detector).
	preset := "small"
	if p := os.Getenv("ORCHARD_DEMO_PRESET"); p == "tiny" || p == "tiny-long" { // tiny-long: a tool loop fits
		preset = p
	}
	dir := filepath.Join(root, fmt.Sprintf("%s-%s-seed1-v%d", family, preset, reference.SynthVersion))
	if _, err := bundle.Open(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".make-"+family+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(stderr, "writing the demo bundle to %s (first run only)…\n", dir)
	if _, err := reference.Synthesize(reference.SynthOptions{Family: family, Preset: preset, Seed: 1, Out: tmp}); err != nil {
		return "", err
	}
	os.RemoveAll(dir) // an earlier, invalid attempt
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return dir, nil
}
