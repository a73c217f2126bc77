package crosscheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// CgoNames returns one message per C.name that a cgo file of the matched
// packages uses but its preamble never mentions, unless name is one of std
// (names from system headers the files rely on). FakeImportC accepts any
// C.name, so without this a misspelled helper would only fail on the
// target machine.
func CgoNames(res *Result, std []string) []string {
	var problems []string
	seen := make(map[string]bool)
	for _, p := range res.Packages {
		for _, f := range p.Files {
			preamble, isCgo := CgoPreamble(f)
			if !isCgo {
				continue
			}
			words := make(map[string]bool)
			for _, w := range strings.FieldsFunc(preamble, func(r rune) bool {
				return !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
			}) {
				words[w] = true
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "C" {
					return true
				}
				name := sel.Sel.Name
				if words[name] || slices.Contains(std, name) {
					return true
				}
				msg := fmt.Sprintf("%s: C.%s is not declared in the cgo preamble", res.Fset.Position(sel.Pos()), name)
				if !seen[msg] { // test variants repeat the package's files
					seen[msg] = true
					problems = append(problems, msg)
				}
				return true
			})
		}
	}
	return problems
}

// CgoPreamble returns the comment above import "C", and whether f has one.
func CgoPreamble(f *ast.File) (string, bool) {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		for _, spec := range g.Specs {
			is := spec.(*ast.ImportSpec)
			if is.Path.Value != `"C"` {
				continue
			}
			doc := is.Doc
			if doc == nil {
				doc = g.Doc
			}
			if doc == nil {
				return "", true
			}
			return doc.Text(), true
		}
	}
	return "", false
}

// Cgo runs the real cgo tool, and through it the C compiler, over the cgo
// files of the matched packages, then type-checks the Go it generates in
// their place. The C preamble is compiled (against whatever headers
// CFlags points to, e.g. stand-ins for an SDK this machine lacks) and every
// call from Go to C is checked against the C declarations, which
// FakeImportC cannot do. Dependencies are still checked with import "C"
// faked.
type Cgo struct {
	CC     string   // the C compiler; "" is gcc. The "-arch X" cgo adds for darwin is dropped.
	CFlags []string // flags for the C compiler, e.g. "-I", dir, "-Wall", "-Werror"
}

// cgoImports are the packages the Go files cgo writes import.
var cgoImports = []string{"runtime/cgo", "syscall"}

// cgoRunner runs the cgo tool for one Check.
type cgoRunner struct {
	work   string   // temporary folder: the compiler wrapper and cgo's output
	env    []string // GOOS, GOARCH, CC for the cgo tool
	cflags []string
}

// ccWrapper drops the "-arch X" pair cgo passes for darwin targets, which
// only Apple's compilers know, and runs the real compiler.
const ccWrapper = `#!/bin/sh
skip=0
for a do
	shift
	if [ "$skip" = 1 ]; then skip=0; continue; fi
	if [ "$a" = "-arch" ]; then skip=1; continue; fi
	set -- "$@" "$a"
done
exec "$ORCHARD_CROSSCHECK_CC" "$@"
`

func newCgoRunner(t Target) (*cgoRunner, func(), error) {
	cc := t.Cgo.CC
	if cc == "" {
		cc = "gcc"
	}
	cc, err := exec.LookPath(cc)
	if err != nil {
		return nil, nil, fmt.Errorf("cgo check: no C compiler: %w", err)
	}
	work, err := os.MkdirTemp("", "crosscheck-cgo-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(work) }
	wrapper := filepath.Join(work, "cc")
	if err := os.WriteFile(wrapper, []byte(ccWrapper), 0o700); err != nil {
		cleanup()
		return nil, nil, err
	}
	env := append(os.Environ(), "GOOS="+t.GOOS, "GOARCH="+t.GOARCH, "CGO_ENABLED=1",
		"CC="+wrapper, "ORCHARD_CROSSCHECK_CC="+cc)
	return &cgoRunner{work: work, env: env, cflags: t.Cgo.CFlags}, cleanup, nil
}

// replace runs cgo over the files of p that import "C" and returns files
// with those replaced by what cgo generates. On failure it returns files
// as they were, and the tool's output as the error.
func (r *cgoRunner) replace(fset *token.FileSet, p *packages.Package, files []*ast.File) ([]*ast.File, error) {
	var cgoFiles []string
	var rest []*ast.File
	for _, f := range files {
		if _, isCgo := CgoPreamble(f); isCgo {
			cgoFiles = append(cgoFiles, fset.File(f.Pos()).Name())
		} else {
			rest = append(rest, f)
		}
	}
	if len(cgoFiles) == 0 {
		return files, nil
	}
	obj, err := os.MkdirTemp(r.work, "obj-")
	if err != nil {
		return files, err
	}
	args := append([]string{"tool", "cgo", "-objdir", obj, "-importpath", p.PkgPath, "--"}, r.cflags...)
	cmd := exec.Command("go", append(args, cgoFiles...)...)
	cmd.Dir = filepath.Dir(cgoFiles[0])
	cmd.Env = r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return files, fmt.Errorf("go tool cgo: %w\n%s", err, out)
	}
	generated := []string{filepath.Join(obj, "_cgo_gotypes.go")}
	for _, f := range cgoFiles {
		generated = append(generated, filepath.Join(obj, strings.TrimSuffix(filepath.Base(f), ".go")+".cgo1.go"))
	}
	for _, name := range generated {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return files, err
		}
		rest = append(rest, f)
	}
	return rest, nil
}
