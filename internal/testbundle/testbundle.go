// Package testbundle writes the synthetic bundles tests run on. Each
// bundle is written once per test binary run, on first use, and shared by
// the tests of that run; Main removes them when the tests end.
package testbundle

import (
	"os"
	"sync"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/reference"
)

// Families are the bundle families the reference runtime synthesizes.
func Families() []string { return []string{"r1", "v2", "stateful3", "stateful3-logits"} }

// Tiny is the tiny preset's bundle of a family (seed 7): r1 ships vision
// and audio encoder twins, v2 vision only, stateful3 none.
func Tiny(tb testing.TB, family string) *bundle.Bundle {
	tb.Helper()
	return open(tb, reference.SynthOptions{Family: family, Preset: "tiny", Seed: 7})
}

// Preset is a family's bundle at any preset's geometry, with weights
// (seed 7).
func Preset(tb testing.TB, family, preset string) *bundle.Bundle {
	tb.Helper()
	return open(tb, reference.SynthOptions{Family: family, Preset: preset, Seed: 7})
}

// Shape is a bundle with a preset's geometry and no weights (E2B/E4B
// size without their gigabytes), for the null runtime.
func Shape(tb testing.TB, family, preset string) *bundle.Bundle {
	tb.Helper()
	return open(tb, reference.SynthOptions{Family: family, Preset: preset, NoWeights: true})
}

// Main runs the tests, removes the bundles they wrote and exits with the
// tests' code: a package's TestMain.
func Main(m *testing.M) {
	code := m.Run()
	written.removeAll()
	os.Exit(code)
}

// written holds this run's bundles: one entry per set of options, each
// written once even when parallel tests ask at the same time.
var written cache

type cache struct {
	mu      sync.Mutex
	entries map[reference.SynthOptions]*entry
	roots   []string
}

type entry struct {
	once sync.Once
	dir  string
	err  error
}

func open(tb testing.TB, o reference.SynthOptions) *bundle.Bundle {
	tb.Helper()
	e := written.entry(o)
	e.once.Do(func() {
		root, err := written.mkdirTemp()
		if err != nil {
			e.err = err
			return
		}
		o.Out = root
		e.dir, e.err = reference.Synthesize(o)
	})
	if e.err != nil {
		tb.Fatal(e.err)
	}
	b, err := bundle.Open(e.dir)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func (c *cache) entry(o reference.SynthOptions) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[reference.SynthOptions]*entry{}
	}
	e, ok := c.entries[o]
	if !ok {
		e = &entry{}
		c.entries[o] = e
	}
	return e
}

func (c *cache) mkdirTemp() (string, error) {
	d, err := os.MkdirTemp("", "orchard-test-bundle-")
	if err == nil {
		c.mu.Lock()
		c.roots = append(c.roots, d)
		c.mu.Unlock()
	}
	return d, err
}

func (c *cache) removeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.roots {
		os.RemoveAll(d)
	}
	c.roots = nil
}
