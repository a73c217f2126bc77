package darwin

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/crosscheck"
)

// darwinARM64 is an Apple silicon Mac, with the test files.
func darwinARM64() crosscheck.Target {
	return crosscheck.Target{GOOS: "darwin", GOARCH: "arm64", Tests: true}
}

// TestDarwinFilesTypecheck type-checks package coreml/darwin, tests
// included, as GOOS=darwin GOARCH=arm64 over darwinkit's real source, and
// checks every objc.Call the darwin files make.
func TestDarwinFilesTypecheck(t *testing.T) {
	crosscheck.NeedModule(t, "github.com/progrium/darwinkit")
	res, only := crosscheck.DarwinFiles(t, ".", cgoStdNames(), "runtime_darwin.go", "model_darwin.go", "state_darwin.go")
	for _, p := range checkSelectors(res, knownSelectors()) {
		t.Error(p)
	}
	t.Logf("type-checked %d packages; darwin-only files of coreml/darwin: %s", res.Checked, strings.Join(only, " "))
}

// TestCrossCheckRejectsBrokenSample proves the check has teeth: a sample with
// a misspelled darwinkit method, a wrong argument type, a selector given the
// wrong number of arguments and an unknown selector fails on each.
func TestCrossCheckRejectsBrokenSample(t *testing.T) {
	crosscheck.NeedModule(t, "github.com/progrium/darwinkit")
	res, err := crosscheck.Check(filepath.Join("testdata", "brokendarwin"), darwinARM64(), ".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Errors {
		got = append(got, e.Error())
	}
	got = append(got, checkSelectors(res, knownSelectors())...)
	got = append(got, crosscheck.CgoNames(res, cgoStdNames())...)
	want := []string{
		"cfg.SetComputeUnit undefined",
		`cannot use "all" (untyped string constant) as coreml.ComputeUnits value`,
		`selector "setFunctionName:" takes 1 arguments, objc.Call passes 2`,
		`selector "newStat" is not one reviewed`,
		"argument 1 of \"getBytesWithHandler:\": func(unsafe.Pointer, int32), want func(unsafe.Pointer, int)",
		"C.orchard_alocate is not declared in the cgo preamble",
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("no error containing %q", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d errors, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}
