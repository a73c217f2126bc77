package media

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/crosscheck"
)

// The macOS decoders (decode_darwin.go) cannot be built here. Two checks
// stand in for a Mac: the Go of every darwin file (tests included) is
// type-checked as darwin/arm64 over the real source of its dependencies,
// with import "C" faked and every C name checked against the preamble;
// and the real cgo tool and C compiler run over decode_darwin.go with
// stand-ins for the SDK headers (testdata/macsdk), which compiles the C
// helpers and checks every Go call of them against their C types.

func darwinARM64(tests bool) crosscheck.Target {
	return crosscheck.Target{GOOS: "darwin", GOARCH: "arm64", Tests: tests}
}

// withCgo is darwinARM64 with the real cgo tool over the SDK stand-ins.
func withCgo(t *testing.T) crosscheck.Target {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		orSkip(t, "a C compiler (gcc) is needed to run cgo over the darwin files", err)
	}
	sdk, err := filepath.Abs(filepath.Join("testdata", "macsdk"))
	if err != nil {
		t.Fatal(err)
	}
	tg := darwinARM64(false)
	tg.Cgo = &crosscheck.Cgo{CC: "gcc", CFlags: []string{"-I", sdk, "-Wall", "-Werror"}}
	return tg
}

// cgoStdNames are the C names the darwin files use that cgo itself or the
// C library declares.
func cgoStdNames() []string {
	return []string{"free", "CString", "GoString", "int", "uint", "long", "float", "char"}
}

// orSkip skips, unless CI is set: there a missing tool is a failure.
func orSkip(t *testing.T, what string, err error) {
	t.Helper()
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatalf("CI=%s: %s: %v", ci, what, err)
	}
	t.Skipf("skipping: %s (set CI=true to make this a failure): %v", what, err)
}

// TestDarwinFilesTypecheck type-checks package media, tests included, as
// GOOS=darwin GOARCH=arm64 and checks every C name its cgo file uses.
func TestDarwinFilesTypecheck(t *testing.T) {
	res, macOnly := crosscheck.DarwinFiles(t, ".", cgoStdNames(), "decode_darwin.go", "decode_darwin_test.go")
	linuxOnly, err := crosscheck.OnlyFiles(".", crosscheck.Target{GOOS: "linux", GOARCH: "amd64", Tests: true}, darwinARM64(true))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(linuxOnly, "decode_other.go") {
		t.Errorf("decode_other.go is not among the files a Mac leaves out %q", linuxOnly)
	}
	t.Logf("type-checked %d packages; darwin-only files of media: %s", res.Checked, strings.Join(macOnly, " "))
}

// TestDarwinCgoCompiles runs cgo and the C compiler (-Wall -Werror) over
// decode_darwin.go against the SDK stand-ins, and type-checks the Go cgo
// writes in its place.
func TestDarwinCgoCompiles(t *testing.T) {
	res, err := crosscheck.Check(".", withCgo(t), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.CgoErrors {
		t.Error(e)
	}
	for _, e := range res.Errors {
		t.Error(e)
	}
	var generated bool
	for _, p := range res.Packages {
		for _, f := range p.Files {
			generated = generated || filepath.Base(res.Fset.File(f.Pos()).Name()) == "decode_darwin.cgo1.go"
		}
	}
	if !generated {
		t.Error("decode_darwin.go was not replaced by what cgo generates")
	}
}

// TestDarwinChecksRejectBrokenSamples proves both checks have teeth: Go
// given the wrong C types (seen only by running cgo), a Go error, a C call
// with too few arguments and a helper missing from the preamble.
func TestDarwinChecksRejectBrokenSamples(t *testing.T) {
	cgo := withCgo(t)
	errorsOf := func(dir string, tg crosscheck.Target) []string {
		res, err := crosscheck.Check(filepath.Join("testdata", dir), tg, ".")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range res.Errors {
			got = append(got, e.Error())
		}
		for _, e := range res.CgoErrors {
			got = append(got, e.Error())
		}
		return append(got, crosscheck.CgoNames(res, cgoStdNames())...)
	}
	for _, tc := range []struct {
		dir  string
		cgo  bool
		n    int // errors in all: one per broken line the check can see
		want []string
	}{
		{"brokencgo", false, 1, []string{"broken_darwin.go:23:24: not enough arguments in call to image.Pt"}},
		{"brokencgo", true, 3, []string{
			"broken_darwin.go:21:16: cannot use", "type _Ctype_long) as int32 value",
			"broken_darwin.go:22:49: cannot use", "_Ctype_long) as *_Ctype_struct_CGImage value in argument to _Cfunc_orchard_width",
			"broken_darwin.go:23:24: not enough arguments in call to image.Pt",
		}},
		{"brokenpreamble", false, 1, []string{"broken_darwin.go:19:2: C.orchard_frist is not declared in the cgo preamble"}},
		// cgo's one failure names both lines; the fake check then adds the name.
		{"brokenpreamble", true, 2, []string{
			"too few arguments to function 'CGImageSourceCreateImageAtIndex'",
			"could not determine what C.orchard_frist refers to",
			"broken_darwin.go:19:2: C.orchard_frist is not declared in the cgo preamble",
		}},
	} {
		tg := darwinARM64(false)
		if tc.cgo {
			tg = cgo
		}
		got := errorsOf(tc.dir, tg)
		for _, w := range tc.want {
			if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
				t.Errorf("%s (cgo %v): no error containing %q in:\n%s", tc.dir, tc.cgo, w, strings.Join(got, "\n"))
			}
		}
		if len(got) != tc.n {
			t.Errorf("%s (cgo %v): %d errors, want %d:\n%s", tc.dir, tc.cgo, len(got), tc.n, strings.Join(got, "\n"))
		}
	}
}
