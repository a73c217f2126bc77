package f16

import (
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/internal/crosscheck"
)

// TestDarwinFilesTypecheck type-checks package f16, tests included, as
// GOOS=darwin GOARCH=arm64 and checks every C name of cosf_darwin.go
// against its preamble: the libm path cannot be built here.
func TestDarwinFilesTypecheck(t *testing.T) {
	darwin := crosscheck.Target{GOOS: "darwin", GOARCH: "arm64", Tests: true}
	res, err := crosscheck.Check(".", darwin, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		t.Error(e)
	}
	for _, p := range crosscheck.CgoNames(res, []string{"float"}) {
		t.Error(p)
	}
	only, err := crosscheck.OnlyFiles(".", darwin, crosscheck.Target{GOOS: "linux", GOARCH: "amd64", Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(only, "cosf_darwin.go") {
		t.Errorf("cosf_darwin.go is not among the darwin-only files %q", only)
	}
	for _, f := range crosscheck.Unchecked(res, only) {
		t.Errorf("darwin-only file %s was not type-checked", f)
	}
}
