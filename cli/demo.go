package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/reference"
)

// runDemo runs the demo bundle: a small synthetic bundle on the reference
// runtime, made on first use. Its weights are random, so the reply is
// noise; the pipeline, the timings and the token counts are real.
func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard --demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	family := fs.String("family", "r1", "demo bundle family: "+families)
	prompt := fs.String("prompt", "Tell me about apple orchards.", "user message")
	maxTokens := fs.Int("max-tokens", 48, "tokens to generate")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	fmt.Fprintf(stderr, "synthetic weights: the reply is noise; every number is measured.\n")
	if err := checkFamily(*family); err != nil {
		fmt.Fprintln(stderr, "orchard --demo:", err)
		return exitUsage
	}
	return runOne([]string{"--demo", "--family", *family, "--prompt", *prompt,
		"--max-tokens", strconv.Itoa(*maxTokens), "--stats"}, strings.NewReader(""), stdout, stderr)
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
	if os.Getenv("ORCHARD_DEMO_PRESET") == "tiny" {
		preset = "tiny"
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
