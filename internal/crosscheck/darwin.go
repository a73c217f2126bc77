package crosscheck

import (
	"os"
	"slices"
	"testing"
)

// NeedModule makes sure module path's source is at hand (RequireModule)
// and skips the test when it cannot be had, unless CI is set: there a
// missing module is a failure.
func NeedModule(tb testing.TB, path string) {
	tb.Helper()
	if _, err := RequireModule(path); err != nil {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			tb.Fatalf("CI=%s: %s's source is needed to type-check the darwin files: %v", ci, path, err)
		}
		tb.Skipf("skipping: %s is not in the module cache and cannot be downloaded (set CI=true to make this a failure): %v", path, err)
	}
}

// DarwinFiles type-checks the package in dir, tests included, as
// darwin/arm64 and reports to tb every type error, every C name that
// neither its preamble nor std declares, each of want that is not a file
// only darwin builds, and every such file the check did not cover. It
// returns the result for further checks and the darwin-only files.
func DarwinFiles(tb testing.TB, dir string, std []string, want ...string) (*Result, []string) {
	tb.Helper()
	darwin := Target{GOOS: "darwin", GOARCH: "arm64", Tests: true}
	res, err := Check(dir, darwin, ".")
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range res.Errors {
		tb.Error(e)
	}
	for _, p := range CgoNames(res, std) {
		tb.Error(p)
	}
	only, err := OnlyFiles(dir, darwin, Target{GOOS: "linux", GOARCH: "amd64", Tests: true})
	if err != nil {
		tb.Fatal(err)
	}
	for _, w := range want {
		if !slices.Contains(only, w) {
			tb.Errorf("%s is not among the darwin-only files %q", w, only)
		}
	}
	for _, f := range Unchecked(res, only) {
		tb.Errorf("darwin-only file %s was not type-checked", f)
	}
	return res, only
}
