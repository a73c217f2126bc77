// Package crosscheck type-checks Go files this machine cannot compile:
// darwin-only cgo files on Linux, or files behind a build tag whose C
// dependencies are not installed. go/packages lists the import graph for
// the target platform (no cgo preprocessing, so no C toolchain is needed)
// and go/types checks every package of it from source with FakeImportC, so
// cgo's C.x references pass unchecked while every Go identifier, method,
// argument and assignment is checked exactly as the real compiler would.
// CgoNames then checks that each C.x a cgo file uses is at least declared in
// its preamble. Tests use it (the Core ML backend in coreml/darwin, media's
// macOS decoders, memledger's and f16's darwin files; DarwinFiles is the
// check they share); nothing is built with it.
//
// For example, the tokenizer's hftokenizers backend from the repository root:
//
//	crosscheck.Check(".", crosscheck.Target{GOOS: "linux", GOARCH: "amd64", Tags: []string{"hftokenizers"}}, "./tokenizer/...")
package crosscheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"
)

// Target is the platform the packages are checked for.
type Target struct {
	GOOS, GOARCH string
	Tags         []string // extra build tags
	Tests        bool     // also check the _test.go files of the matched packages
	// Cgo, if set, runs the real cgo tool on the matched packages' cgo
	// files instead of faking import "C" (see Cgo).
	Cgo *Cgo
}

// Package is one package of the matched set, checked with function bodies.
type Package struct {
	Pkg   *packages.Package
	Types *types.Package
	Info  *types.Info
	Files []*ast.File
}

// Result is the outcome of Check.
type Result struct {
	Fset     *token.FileSet
	Packages []*Package    // the packages matched by the patterns (test variants included)
	Errors   []types.Error // type errors in the matched packages
	Checked  int           // packages type-checked, dependencies included
	// CgoErrors are what the cgo tool and the C compiler reported for the
	// matched packages (Target.Cgo only); such a package is then checked
	// with import "C" faked.
	CgoErrors []error
}

// Check loads patterns, relative to dir, for target and type-checks the
// whole import graph from source. Function bodies are checked only in the
// matched packages; dependencies are checked for their declarations, which is
// all their importers can see. Type errors in matched packages are returned in
// the result; a load failure or a type error in a dependency is an error.
func Check(dir string, target Target, patterns ...string) (*Result, error) {
	env := append(os.Environ(),
		"GOOS="+target.GOOS, "GOARCH="+target.GOARCH,
		"CGO_ENABLED=1", // keep the cgo files; go list does not run cgo without -compiled
	)
	var flags []string
	if len(target.Tags) > 0 {
		flags = append(flags, "-tags="+strings.Join(target.Tags, ","))
	}
	cfg := &packages.Config{
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Dir:        dir,
		Env:        env,
		BuildFlags: flags,
		Tests:      target.Tests,
		Context:    context.Background(),
	}
	load := patterns
	if target.Cgo != nil {
		// The files cgo generates import these; list them with the rest.
		load = append(slices.Clone(patterns), cgoImports...)
	}
	roots, err := packages.Load(cfg, load...)
	if err != nil {
		return nil, fmt.Errorf("listing %v for %s/%s: %w", patterns, target.GOOS, target.GOARCH, err)
	}
	var listErrs []error
	packages.Visit(roots, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			listErrs = append(listErrs, fmt.Errorf("%s: %s", p.ID, e))
		}
	})
	if len(listErrs) > 0 {
		return nil, fmt.Errorf("listing %v for %s/%s: %w", patterns, target.GOOS, target.GOARCH, errors.Join(listErrs...))
	}

	matched := make(map[string]bool)
	extra := make(map[string]*packages.Package)
	for _, p := range roots {
		if strings.HasSuffix(p.ID, ".test") && p.Name == "main" {
			continue // the generated test main holds nothing of ours
		}
		if target.Cgo != nil && slices.Contains(cgoImports, p.ID) {
			extra[p.ID] = p
			continue
		}
		matched[p.ID] = true
	}
	for id := range matched {
		if i := strings.Index(id, " ["); i > 0 {
			delete(matched, id[:i]) // the test variant holds every file of the package
		}
	}
	sizes := types.SizesFor("gc", target.GOARCH)
	if sizes == nil {
		return nil, fmt.Errorf("no type sizes for GOARCH %s", target.GOARCH)
	}

	c := &checker{
		fset:    token.NewFileSet(),
		sizes:   sizes,
		matched: matched,
		extra:   extra,
		done:    make(map[string]chan struct{}),
		out:     make(map[string]*Package),
		sem:     make(chan struct{}, runtime.GOMAXPROCS(0)),
	}
	if target.Cgo != nil {
		run, cleanup, err := newCgoRunner(target)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		c.cgo = run
	}
	var all []*packages.Package
	packages.Visit(roots, nil, func(p *packages.Package) {
		all = append(all, p)
		c.done[p.ID] = make(chan struct{})
	})
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.check(p)
		}()
	}
	wg.Wait()

	res := &Result{Fset: c.fset, Checked: len(all), CgoErrors: c.cgoErrs}
	var depErrs []error
	for _, p := range all {
		cp := c.out[p.ID]
		if matched[p.ID] {
			res.Packages = append(res.Packages, cp)
			continue
		}
		for _, e := range c.errs[p.ID] {
			depErrs = append(depErrs, fmt.Errorf("dependency %s: %w", p.ID, e))
		}
	}
	for _, p := range res.Packages {
		for _, e := range c.errs[p.Pkg.ID] {
			var te types.Error
			if errors.As(e, &te) {
				res.Errors = append(res.Errors, te)
			} else {
				depErrs = append(depErrs, fmt.Errorf("%s: %w", p.Pkg.ID, e))
			}
		}
	}
	slices.SortFunc(res.Packages, func(a, b *Package) int { return strings.Compare(a.Pkg.ID, b.Pkg.ID) })
	if len(depErrs) > 0 {
		return res, errors.Join(depErrs...)
	}
	return res, nil
}

// checker type-checks a package graph concurrently, each package after its imports.
type checker struct {
	fset    *token.FileSet
	sizes   types.Sizes
	matched map[string]bool
	done    map[string]chan struct{} // closed when the package is checked; read-only after setup
	sem     chan struct{}            // bounds the parallelism
	// With Target.Cgo: the runner, and the packages cgo's output imports.
	cgo   *cgoRunner
	extra map[string]*packages.Package

	mu      sync.Mutex
	out     map[string]*Package
	errs    map[string][]error
	cgoErrs []error
}

func (c *checker) check(p *packages.Package) {
	defer close(c.done[p.ID])
	for _, imp := range p.Imports {
		<-c.done[imp.ID]
	}
	if c.cgo != nil && c.matched[p.ID] {
		for _, e := range c.extra {
			<-c.done[e.ID]
		}
	}
	c.sem <- struct{}{}
	defer func() { <-c.sem }()

	full := c.matched[p.ID]
	var errs []error
	mode := parser.SkipObjectResolution | parser.ParseComments
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(c.fset, name, nil, mode)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	if full && c.cgo != nil && len(errs) == 0 {
		var err error
		if files, err = c.cgo.replace(c.fset, p, files); err != nil {
			c.mu.Lock()
			c.cgoErrs = append(c.cgoErrs, fmt.Errorf("%s: %w", p.ID, err))
			c.mu.Unlock()
		}
	}
	conf := types.Config{
		Importer:         importerFor(c, p),
		FakeImportC:      true,
		IgnoreFuncBodies: !full,
		Sizes:            c.sizes,
		Error:            func(err error) { errs = append(errs, err) },
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	var info *types.Info
	if full {
		info = &types.Info{
			Types: make(map[ast.Expr]types.TypeAndValue),
			Defs:  make(map[*ast.Ident]types.Object),
			Uses:  make(map[*ast.Ident]types.Object),
		}
	}
	tp, _ := conf.Check(p.PkgPath, c.fset, files, info) // errors arrive through conf.Error

	c.mu.Lock()
	defer c.mu.Unlock()
	c.out[p.ID] = &Package{Pkg: p, Types: tp, Info: info, Files: files}
	if len(errs) > 0 {
		if c.errs == nil {
			c.errs = make(map[string][]error)
		}
		c.errs[p.ID] = errs
	}
}

// importerFor resolves p's imports to the packages checked before it.
func importerFor(c *checker, p *packages.Package) types.Importer {
	return importerFunc(func(path string) (*types.Package, error) {
		if path == "unsafe" {
			return types.Unsafe, nil
		}
		imp, ok := p.Imports[path]
		if !ok && c.matched[p.ID] {
			imp, ok = c.extra[path] // imported by cgo's output
		}
		if !ok {
			return nil, fmt.Errorf("%s does not import %q", p.ID, path)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		cp := c.out[imp.ID]
		if cp == nil || cp.Types == nil {
			return nil, fmt.Errorf("%s: import %q was not checked", p.ID, path)
		}
		return cp.Types, nil
	})
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// RequireModule makes sure module path, at the version the build list
// selects, is in the module cache, downloading it if need be, and returns
// its directory.
func RequireModule(path string) (dir string, err error) {
	out, err := exec.Command("go", "mod", "download", "-json", path).Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr != nil && err == nil {
		err = jerr
	}
	switch {
	case m.Error != "":
		return "", fmt.Errorf("go mod download %s: %s", path, m.Error)
	case err != nil:
		return "", fmt.Errorf("go mod download %s: %w", path, err)
	case m.Dir == "":
		return "", fmt.Errorf("go mod download %s: no directory", path)
	}
	return m.Dir, nil
}
