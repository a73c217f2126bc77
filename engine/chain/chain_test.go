package chain_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/engine/chain/chaintest"
	"github.com/orchard-llm/orchard/internal/testbundle"
	"github.com/orchard-llm/orchard/reference"
)

// TestChainMatchesOracle: for every family and prompt, 64 greedy tokens
// from the chain equal the full-recompute oracle's, with batched prefill
// and token by token.
func TestChainMatchesOracle(t *testing.T) {
	for _, fam := range testbundle.Families() {
		t.Run(fam, func(t *testing.T) {
			t.Parallel()
			b := testbundle.Tiny(t, fam)
			batched := chaintest.Open(t, b, chain.Options{})
			plain := chaintest.Open(t, b, chain.Options{NoBatchedPrefill: true})
			for i, p := range chaintest.Prompts(b.Geometry.Vocab) {
				want := chaintest.OracleGreedy(t, b, p, nil, 64)
				for _, c := range []chain.Chain{batched, plain} {
					if err := c.Reset(); err != nil {
						t.Fatal(err)
					}
					got := chaintest.Greedy(t, c, p, 64)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("prompt %d (len %d), widths %v:\n got %v\nwant %v", i, len(p), c.Capabilities().PrefillWidths, got, want)
					}
				}
			}
		})
	}
}

func TestUnits(t *testing.T) {
	r1 := testbundle.Tiny(t, "r1") // manifest: "all"
	if u, _ := chain.Units(r1, coreml.DefaultUnits); u != coreml.All {
		t.Errorf("r1 default: %v, want the manifest's all", u)
	}
	if u, _ := chain.Units(r1, coreml.CPUOnly); u != coreml.CPUOnly {
		t.Errorf("flag ignored: %v", u)
	}
	v2 := testbundle.Tiny(t, "v2") // no computeUnits in the manifest
	if u, _ := chain.Units(v2, coreml.DefaultUnits); u != coreml.CPUAndGPU {
		t.Errorf("v2 default: %v, want cpuAndGPU", u)
	}
	if _, err := chain.Units(v2, coreml.CPUAndNeuralEngine); !errors.Is(err, coreml.ErrUnsupportedUnits) {
		t.Errorf("v2 on the Neural Engine: %v", err)
	}
	if u, _ := chain.Units(testbundle.Tiny(t, "stateful3"), coreml.DefaultUnits); u != coreml.CPUAndNeuralEngine {
		t.Errorf("stateful3 default: %v", u)
	}
}

// TestContractMismatchNamesTensor: a chunk whose declared shapes differ
// from what the bundle's config implies is refused before its first
// prediction, naming the tensor.
func TestContractMismatchNamesTensor(t *testing.T) {
	src := testbundle.Tiny(t, "r1")
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(src.Dir)); err != nil {
		t.Fatal(err)
	}
	twin := filepath.Join(root, "chunk_5_10_pal6.mlmodelc", reference.TwinFile)
	data, _ := os.ReadFile(twin)
	var m map[string]any
	json.Unmarshal(data, &m)
	m["geometry"].(map[string]any)["max_position_embeddings"] = 256
	data, _ = json.Marshal(m)
	os.WriteFile(twin, data, 0o600)
	b, err := bundle.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	c := chaintest.Open(t, b, chain.Options{})
	_, err = c.Prefill([]int{2, 5, 6})
	if err == nil || !strings.Contains(err.Error(), "chunk_5_10_pal6") || !strings.Contains(err.Error(), "tensor ") || !strings.Contains(err.Error(), "256") {
		t.Fatalf("err = %v", err)
	}
}
