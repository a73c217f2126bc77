//go:build unix

package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/reference"
)

// Every file orchard opens goes through regfile: a FIFO in place of any
// file of a bundle (configs, metadata.json, the reference twins'
// reference.json and model.safetensors, sidecar tables, tokenizer.json,
// the encoders') or of the data folder (state.json, orchard.log,
// metrics.jsonl) is refused or passed over at once, never waited on: a
// FIFO in place of model.safetensors hung `orchard run` (the safetensors
// reader opened it with os.Open, which waits for a writer). Each reader
// that refuses names the file.
func TestFIFOsNeverBlock(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	pic, clip := testPNG(t, dir), testWAV(t, dir, 0.5)
	// run answers within the deadline, or the test fails naming the file.
	run := func(t *testing.T, what string, args ...string) (int, string) {
		t.Helper()
		type result struct {
			code   int
			stderr string
		}
		done := make(chan result, 1)
		go func() {
			code, _, stderr := runCmd(t, args...)
			done <- result{code, stderr}
		}()
		select {
		case r := <-done:
			return r.code, r.stderr
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: orchard %s blocked on a FIFO", what, strings.Join(args, " "))
			return 0, ""
		}
	}
	fifoFor := func(t *testing.T, path string) (restore func()) {
		t.Helper()
		saved, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		os.Remove(path)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		return func() {
			os.Remove(path)
			if saved != nil {
				os.WriteFile(path, saved, 0o600)
			}
		}
	}

	for _, family := range []string{"r1", "stateful3"} {
		b, err := reference.Synthesize(reference.SynthOptions{Family: family, Preset: "tiny", Seed: 1, Out: filepath.Join(dir, family)})
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		filepath.WalkDir(b, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				files = append(files, p)
			}
			return err
		})
		// The image and the clip make the encoders load too.
		args := []string{"run", "--model", b, "--prompt", "hi", "--max-tokens", "1"}
		if family == "r1" {
			args = append(args, "--image", pic, "--audio", clip)
		}
		if code, stderr := run(t, "the whole bundle", args...); code != 0 {
			t.Fatalf("%s: %d %s", family, code, stderr)
		}
		for _, f := range files {
			rel, _ := filepath.Rel(b, f)
			t.Run(family+"/"+rel, func(t *testing.T) {
				restore := fifoFor(t, f)
				defer restore()
				code, stderr := run(t, rel, args...)
				// Hints (metadata.json, r1's config.json and the Hugging
				// Face config) and the verify head (a bundle without
				// speculation assets never loads it) may be passed over.
				base := filepath.Base(rel)
				if code == 0 && (base == "metadata.json" || base == "config.json" || strings.HasPrefix(rel, "lmhead_v4")) {
					return
				}
				if code == 0 {
					t.Fatalf("a FIFO in place of %s went unnoticed:\n%s", rel, stderr)
				}
				if !strings.Contains(stderr, filepath.Base(rel)) || !strings.Contains(stderr, "not a regular file") {
					t.Errorf("the error does not name %s and say what it is:\n%s", rel, stderr)
				}
			})
		}
	}

	// The data folder's files: remembered choices, the log, the metrics.
	b := filepath.Join(dir, "r1")
	data := filepath.Join(home, ".local", "share", "orchard")
	os.MkdirAll(filepath.Join(data, "logs"), 0o700)
	for _, f := range []string{"state.json", "metrics.jsonl", filepath.Join("logs", "orchard.log")} {
		t.Run("data/"+f, func(t *testing.T) {
			restore := fifoFor(t, filepath.Join(data, f))
			defer restore()
			// run notes a metrics log it cannot open and goes on.
			code, stderr := run(t, f, "run", "--model", b, "--prompt", "hi", "--max-tokens", "1")
			if f == "metrics.jsonl" && (code != 0 || !strings.Contains(stderr, "metrics.jsonl: is a named pipe (FIFO), not a regular file")) {
				t.Errorf("run: %d %s", code, stderr)
			}
			// models reads the remembered model; a broken state.json is
			// no reason to fail a listing.
			if code, stderr := run(t, f, "models", "--models-dir", dir); code != 0 {
				t.Errorf("models: %d %s", code, stderr)
			}
		})
	}
}
