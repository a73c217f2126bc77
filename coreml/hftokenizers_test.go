package coreml

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/orchard-llm/orchard/internal/crosscheck"
)

// TestHFTokenizersBackendTypechecks type-checks the tokenizer package
// built with the hftokenizers tag (the optional backend over the Rust
// library, which cannot link here) with cgo faked, over the real source of
// github.com/daulet/tokenizers — as the darwin files are checked.
func TestHFTokenizersBackendTypechecks(t *testing.T) {
	if _, err := crosscheck.RequireModule("github.com/daulet/tokenizers"); err != nil {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("CI=%s: the tokenizers module is needed to type-check the hftokenizers backend: %v", ci, err)
		}
		t.Skipf("skipping: github.com/daulet/tokenizers cannot be downloaded: %v", err)
	}
	res, err := crosscheck.Check("..", crosscheck.Target{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Tags: []string{"hftokenizers"}, Tests: true}, "./tokenizer")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		t.Error(e)
	}
	var sawHF bool
	for _, p := range res.Packages {
		for _, f := range p.Pkg.GoFiles {
			sawHF = sawHF || filepath.Base(f) == "hf.go"
		}
	}
	if !sawHF {
		t.Fatal("tokenizer/hf.go was not among the checked files")
	}
}
