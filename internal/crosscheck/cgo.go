package crosscheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"
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
