package chain

import (
	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/reference"
)

// NewOracle builds the full-recompute reference model of a synthetic
// bundle, fed by the bundle's own host inputs (so any difference from a
// Chain comes from chunking, caching, masks or scheduling). The caller
// closes the returned Inputs.
func NewOracle(b *bundle.Bundle) (*reference.Oracle, *Inputs, error) {
	var dirs []string
	for _, c := range append(append([]bundle.Chunk{}, b.Chunks...), b.Heads...) {
		dirs = append(dirs, c.Path)
	}
	g, w, err := reference.LoadFull(dirs)
	if err != nil {
		return nil, nil, err
	}
	host, err := NewInputs(b)
	if err != nil {
		return nil, nil, err
	}
	o, err := reference.NewOracle(g, w, host)
	if err != nil {
		host.Close()
		return nil, nil, err
	}
	return o, host, nil
}
