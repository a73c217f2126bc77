package darwin

import (
	"os"
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

// needDarwinkit skips the test when darwinkit's source cannot be had, unless
// CI is set: in CI a missing module cache is a failure.
func needDarwinkit(t *testing.T) {
	t.Helper()
	if _, err := crosscheck.RequireModule("github.com/progrium/darwinkit"); err != nil {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("CI=%s: darwinkit's source is needed to type-check the darwin backend: %v", ci, err)
		}
		t.Skipf("skipping: darwinkit is not in the module cache and cannot be downloaded (set CI=true to make this a failure): %v", err)
	}
}

// TestDarwinFilesTypecheck type-checks package coreml, tests included, as
// GOOS=darwin GOARCH=arm64 over darwinkit's real source, and checks every
// objc.Call the darwin files make.
func TestDarwinFilesTypecheck(t *testing.T) {
	needDarwinkit(t)
	res, err := crosscheck.Check(".", darwinARM64(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Errors {
		t.Error(e)
	}
	for _, p := range checkSelectors(res, knownSelectors()) {
		t.Error(p)
	}
	for _, p := range crosscheck.CgoNames(res, cgoStdNames()) {
		t.Error(p)
	}

	// Every file Linux leaves out but a Mac builds must have been checked.
	only, err := crosscheck.OnlyFiles(".", darwinARM64(), crosscheck.Target{GOOS: "linux", GOARCH: "amd64", Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"runtime_darwin.go", "model_darwin.go", "state_darwin.go"} {
		if !slices.Contains(only, want) {
			t.Errorf("%s is not among the darwin-only files %q", want, only)
		}
	}
	for _, f := range crosscheck.Unchecked(res, only) {
		t.Errorf("darwin-only file %s was not type-checked", f)
	}
	t.Logf("type-checked %d packages; darwin-only files of coreml: %s", res.Checked, strings.Join(only, " "))
}

// TestCrossCheckRejectsBrokenSample proves the check has teeth: a sample with
// a misspelled darwinkit method, a wrong argument type, a selector given the
// wrong number of arguments and an unknown selector fails on each.
func TestCrossCheckRejectsBrokenSample(t *testing.T) {
	needDarwinkit(t)
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
