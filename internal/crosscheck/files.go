package crosscheck

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
)

// OnlyFiles lists the Go files of dir that target builds (with cgo) and
// other does not: the files only a cross check sees from other.
func OnlyFiles(dir string, target, other Target) ([]string, error) {
	ctx := func(t Target) build.Context {
		c := build.Default
		c.GOOS, c.GOARCH, c.CgoEnabled = t.GOOS, t.GOARCH, true
		c.BuildTags = t.Tags
		return c
	}
	on, off := ctx(target), ctx(other)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || (!target.Tests && strings.HasSuffix(name, "_test.go")) {
			continue
		}
		yes, err := on.MatchFile(dir, name)
		if err != nil {
			return nil, err
		}
		no, err := off.MatchFile(dir, name)
		if err != nil {
			return nil, err
		}
		if yes && !no {
			out = append(out, name)
		}
	}
	return out, nil
}

// Unchecked returns those of files (base names, as OnlyFiles lists them)
// that no matched package of res holds: files a check was meant to cover
// but did not.
func Unchecked(res *Result, files []string) []string {
	checked := make(map[string]bool)
	for _, p := range res.Packages {
		for _, f := range p.Pkg.GoFiles {
			checked[filepath.Base(f)] = true
		}
	}
	var out []string
	for _, f := range files {
		if !checked[f] {
			out = append(out, f)
		}
	}
	return out
}
