package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/termsafe"
)

// Found is a bundle found by Discover.
type Found struct {
	Name    string        `json:"name"`             // OWNER/NAME for the Hugging Face cache, else the bundle's name
	Family  bundle.Family `json:"family,omitempty"` // "" when the family could not be told
	Size    int64         `json:"size"`             // bytes of every file below Path
	Path    string        `json:"path"`
	Valid   bool          `json:"valid"`
	Problem string        `json:"problem,omitempty"` // the first problem when not valid
	Origin  string        `json:"origin"`            // the search folder or Hugging Face cache it was found in
}

// Bounds of the scan: search folders are followed this many levels down,
// sizes this many.
const (
	maxScanDepth = 8
	maxSizeDepth = 16
)

// HFCacheDir is the Hugging Face hub cache as huggingface_hub places it:
// $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
// else ~/.cache/huggingface/hub; "" when env names no home.
func HFCacheDir(env func(string) string) string {
	if d := env("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := env("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	d, err := xdgHome(env, "XDG_CACHE_HOME", ".cache")
	if err != nil {
		return ""
	}
	return filepath.Join(d, "huggingface", "hub")
}

// Discover lists the bundles in dirs, in order, then those in the Hugging
// Face cache (repos models--OWNER--NAME/snapshots/REV/). Bundles are
// recognised and validated by the bundle package; invalid ones are listed
// with their first problem. The scan is bounded in depth, visits each real
// folder once (so symlink loops end), skips folders it cannot read, and
// returns the same order for the same tree.
func Discover(dirs []string, env func(string) string) []Found {
	if env == nil {
		env = func(string) string { return "" }
	}
	homeDir, _ := home(env)
	d := &discoverer{visited: map[string]bool{}, seen: map[string]bool{}, open: bundle.Open}
	for _, dir := range dirs {
		dir = expandPath(dir, homeDir, "")
		d.origin = dir
		d.scan(dir, 0, nil)
	}
	if hub := HFCacheDir(env); hub != "" {
		d.origin = hub
		d.scan(hub, 0, nil)
	}
	return d.found
}

type discoverer struct {
	origin  string
	visited map[string]bool // real folders scanned
	seen    map[string]bool // real bundle folders listed
	found   []Found
	open    func(dir string) (*bundle.Bundle, error)
}

// scan lists the bundles at or below dir. label names a bundle from its
// folder; nil uses the bundle's own name.
func (d *discoverer) scan(dir string, depth int, label func(root string) string) {
	if depth > maxScanDepth {
		return
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil || d.visited[real] {
		return
	}
	d.visited[real] = true
	if isHFRepo(dir) {
		d.scanRepo(dir, depth)
		return
	}
	root, err := bundle.Find(dir)
	if errors.Is(err, bundle.ErrNotBundle) {
		return
	}
	if err == nil && root == dir {
		d.add(root, label)
		return
	}
	// One or more bundles lie below. Go down a folder at a time rather
	// than take Find's pick: Find chooses one bundle where a hub holds many
	// repos or a snapshot several variants, and each is wanted here.
	children, err := subfolders(dir)
	if err != nil {
		return
	}
	for _, c := range children {
		d.scan(c, depth+1, label)
	}
}

// scanRepo lists the bundles of every snapshot of a Hugging Face cache repo.
func (d *discoverer) scanRepo(repo string, depth int) {
	id := strings.TrimPrefix(filepath.Base(repo), "models--")
	if owner, name, ok := strings.Cut(id, "--"); ok {
		id = owner + "/" + name
	}
	snaps, err := subfolders(filepath.Join(repo, "snapshots"))
	if err != nil {
		return
	}
	for _, snap := range snaps {
		label := func(root string) string {
			n := id
			if rel, err := filepath.Rel(snap, root); err == nil && rel != "." {
				n += "/" + filepath.ToSlash(rel)
			}
			if len(snaps) > 1 {
				n += "@" + shortRev(filepath.Base(snap))
			}
			return n
		}
		d.scan(snap, depth+2, label)
	}
}

// add opens the bundle at root and lists it once, however it was reached.
func (d *discoverer) add(root string, label func(string) string) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil || d.seen[real] {
		return
	}
	d.seen[real] = true
	f := Found{Name: filepath.Base(root), Path: root, Origin: d.origin, Size: diskSize(root)}
	b, err := d.safeOpen(root)
	if b != nil {
		f.Family, f.Name = b.Family, b.Name()
	}
	if label != nil {
		f.Name = label(root)
	}
	var ve *bundle.ValidationError
	switch {
	case err == nil:
		f.Valid = true
	case errors.As(err, &ve) && len(ve.Problems) > 0:
		f.Problem = ve.Problems[0]
	default:
		f.Problem = strings.TrimPrefix(err.Error(), "bundle "+root+": ")
	}
	d.found = append(d.found, f)
}

// safeOpen opens the bundle at root; a panic while reading its files
// becomes that bundle's problem, so one bad bundle in a cache is listed
// as such and never stops `orchard models` or the picker. (The readers
// bound what recursion they do, so a stack overflow, which no recover
// catches, cannot happen there.)
func (d *discoverer) safeOpen(root string) (b *bundle.Bundle, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, err = nil, fmt.Errorf("orchard failed while reading it (%s): please report this bundle", termsafe.Quote(fmt.Sprint(p)))
		}
	}()
	return d.open(root)
}

// subfolders lists the folders in dir (following symlinks), sorted by
// name, leaving out hidden folders and compiled models (parts of a bundle).
func subfolders(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".mlmodelc") || strings.HasSuffix(name, ".mlpackage") {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			out = append(out, p)
		}
	}
	return out, nil
}

func isHFRepo(dir string) bool {
	if !strings.HasPrefix(filepath.Base(dir), "models--") {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, "snapshots"))
	return err == nil && st.IsDir()
}

func shortRev(rev string) string {
	if len(rev) > 8 {
		return rev[:8]
	}
	return rev
}

// diskSize adds up the files below root. It follows symlinks (a Hugging
// Face snapshot links every file to a blob) and counts each real file and
// folder once, so links into shared blobs or back up the tree cost nothing.
func diskSize(root string) int64 {
	seen := map[string]bool{}
	var walk func(dir string, depth int) int64
	walk = func(dir string, depth int) int64 {
		ents, err := os.ReadDir(dir)
		if err != nil || depth > maxSizeDepth {
			return 0
		}
		var n int64
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			st, err := os.Stat(p)
			if err != nil {
				continue
			}
			if st.IsDir() || e.Type()&os.ModeSymlink != 0 {
				real, err := filepath.EvalSymlinks(p)
				if err != nil || seen[real] {
					continue
				}
				seen[real] = true
			}
			if st.IsDir() {
				n += walk(p, depth+1)
			} else {
				n += st.Size()
			}
		}
		return n
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		seen[real] = true
	}
	return walk(root, 0)
}
