package memledger

import (
	"os"
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/internal/crosscheck"
)

// TestDarwinFilesTypecheck type-checks package memledger, tests included,
// as GOOS=darwin GOARCH=arm64 over darwinkit's real source (the thermal
// state comes from NSProcessInfo) and checks every C name of
// memory_darwin.go against its preamble.
func TestDarwinFilesTypecheck(t *testing.T) {
	if _, err := crosscheck.RequireModule("github.com/progrium/darwinkit"); err != nil {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("CI=%s: darwinkit's source is needed to type-check memory_darwin.go: %v", ci, err)
		}
		t.Skipf("skipping: darwinkit is not in the module cache and cannot be downloaded (set CI=true to make this a failure): %v", err)
	}
	darwin := crosscheck.Target{GOOS: "darwin", GOARCH: "arm64", Tests: true}
	res, err := crosscheck.Check(".", darwin, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		t.Error(e)
	}
	for _, p := range crosscheck.CgoNames(res, []string{"uint64_t"}) {
		t.Error(p)
	}
	only, err := crosscheck.OnlyFiles(".", darwin, crosscheck.Target{GOOS: "linux", GOARCH: "amd64", Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(only, "memory_darwin.go") {
		t.Errorf("memory_darwin.go is not among the darwin-only files %q", only)
	}
	for _, f := range crosscheck.Unchecked(res, only) {
		t.Errorf("darwin-only file %s was not type-checked", f)
	}
}
