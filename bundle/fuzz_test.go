package bundle_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/internal/fuzzing"
	"github.com/orchard-llm/orchard/reference"
)

// A bundle fuzz target replaces one JSON file of a tiny synthetic bundle
// with the input and opens the bundle: never a panic, never memory out of
// proportion to the input; and when the bundle is accepted, its geometry
// is within the limits and the engine opens it allocating no more than
// the geometry says (bundle.HostBytes) — the sizes were validated, not
// merely parsed.
type bundleTarget struct {
	name, family, file string
	probes             map[string]func(m map[string]any)
}

func fuzzBundleFile(f *testing.F, bt bundleTarget) {
	dir := filepath.Join(f.TempDir(), "b")
	out, err := reference.Synthesize(reference.SynthOptions{Family: bt.family, Preset: "tiny", Seed: 1, Out: dir})
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(out, bt.file)
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	seeds := map[string][]byte{"good": good, "empty": nil, "truncated": good[:len(good)/2], "garbage": []byte("\x00\xff{[\"")}
	for name, edit := range bt.probes {
		var m map[string]any
		if json.Unmarshal(good, &m) != nil {
			var arr []map[string]any // metadata.json is an array of one object
			json.Unmarshal(good, &arr)
			edit(arr[0])
			seeds["probe-"+name], _ = json.Marshal(arr)
			continue
		}
		edit(m)
		seeds["probe-"+name], _ = json.Marshal(m)
	}
	// The file nesting to encoding/json's limit of 10,000 levels, and
	// just past it, inside a key orchard does not know.
	at := bytes.IndexByte(good, '{') + 1
	for name, n := range map[string]int{"deep-at-limit": 9_998, "deep-past-limit": 10_000} {
		seeds[name] = slices.Concat(good[:at], []byte(`"orchard_deep":`), fuzzing.Nested("[", "", "]", n), []byte(","), good[at:])
	}
	fuzzing.WriteSeeds(f, bt.name, seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	// Past 1 MiB, made here rather than kept in testdata: the file with
	// an unknown key holding 1.2 MB.
	f.Add(slices.Concat(good[:at], []byte(`"orchard_big":[`), bytes.Repeat([]byte("0,"), 600_000), []byte(`0],`), good[at:]))
	// What opening the untouched bundle and its engine costs.
	openAll := func() (*bundle.Bundle, error) {
		b, err := bundle.Open(out)
		if err != nil {
			return b, err
		}
		ch, err := chain.Open(b, reference.New(), chain.Options{})
		if err == nil {
			ch.Close()
		}
		return b, nil
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := openAll(); err != nil {
		f.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	base := 2 * (after.TotalAlloc - before.TotalAlloc)

	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var b *bundle.Bundle
		var err error
		fuzzing.Alloc(t, base+64*uint64(len(data)), func() { b, err = bundle.Open(out) })
		if err != nil {
			if strings.ContainsAny(err.Error(), "\x1b\x07\x00") {
				t.Fatalf("error with control characters: %.300q", err)
			}
			return
		}
		if p := bundle.CheckGeometry(b.Geometry); len(p) > 0 {
			t.Fatalf("accepted a bundle whose geometry is out of range: %v", p)
		}
		fuzzing.Alloc(t, base+2*uint64(bundle.HostBytes(b.Geometry)), func() {
			if ch, err := chain.Open(b, reference.New(), chain.Options{}); err == nil {
				ch.Close()
			}
		})
	})
}

func ctx(v float64) func(m map[string]any) {
	return func(m map[string]any) { m["hostio"].(map[string]any)["CTX"] = v }
}

// FuzzManifestJSON fuzzes an r1 bundle's manifest.json.
func FuzzManifestJSON(f *testing.F) {
	fuzzBundleFile(f, bundleTarget{name: "FuzzManifestJSON", family: "r1", file: "manifest.json", probes: map[string]func(map[string]any){
		"escape-name": func(m map[string]any) { m["name"] = "x\x1b]0;pwned\x07" },
		"v2-format":   func(m map[string]any) { m["format"] = bundle.FormatV2 },
		"no-format":   func(m map[string]any) { delete(m, "format") },
		"eos-huge":    func(m map[string]any) { m["eos"] = []int{1 << 40} },
	}})
}

// FuzzConvertConfig fuzzes an r1 bundle's convert_config.json.
func FuzzConvertConfig(f *testing.F) {
	fuzzBundleFile(f, bundleTarget{name: "FuzzConvertConfig", family: "r1", file: "convert_config.json", probes: map[string]func(map[string]any){
		"ctx-1e9":      ctx(1e9),
		"ctx-2p62":     ctx(1 << 62),
		"ctx-1e7":      ctx(1e7),
		"ctx-negative": ctx(-128),
		"ple-dim-0":    func(m map[string]any) { m["ple_dim"] = 0 },
		"layers-huge":  func(m map[string]any) { m["num_layers"] = 1 << 30 },
		"store-past-own": func(m map[string]any) {
			m["store_layers"] = map[string]int{"sliding_attention": 99, "full_attention": -1}
		},
		"embed-rows-0": func(m map[string]any) {
			m["corellm"].(map[string]any)["sidecars"].(map[string]any)["int8"].(map[string]any)["embed"].(map[string]any)["shape"] = []int{0, 32}
		},
		"embed-rows-negative": func(m map[string]any) {
			m["corellm"].(map[string]any)["sidecars"].(map[string]any)["int8"].(map[string]any)["embed"].(map[string]any)["shape"] = []int{-512, 32}
		},
	}})
}

// FuzzConvertConfigV2 fuzzes a v2 bundle's convert_config_v2*.json.
func FuzzConvertConfigV2(f *testing.F) {
	fuzzBundleFile(f, bundleTarget{name: "FuzzConvertConfigV2", family: "v2", file: "convert_config_v2int4_int8.json", probes: map[string]func(map[string]any){
		"ctx-1e9":     func(m map[string]any) { m["CTX"] = 1e9 },
		"ctx-2p62":    func(m map[string]any) { m["CTX"] = 1 << 62 },
		"ctx-1e7":     func(m map[string]any) { m["CTX"] = 1e7 },
		"ctx-0":       func(m map[string]any) { m["CTX"] = 0 },
		"nkv-huge":    func(m map[string]any) { m["NKV"] = 1 << 20 },
		"s-range-big": func(m map[string]any) { m["S_range"] = map[string]int{"lower": 1, "upper": 1 << 30, "default": 1} },
	}})
}

// FuzzModelConfig fuzzes a stateful3 bundle's model_config.json.
func FuzzModelConfig(f *testing.F) {
	fuzzBundleFile(f, bundleTarget{name: "FuzzModelConfig", family: "stateful3", file: "model_config.json", probes: map[string]func(map[string]any){
		"vocab-0":         func(m map[string]any) { m["vocab_size"] = 0 },
		"vocab-2p40":      func(m map[string]any) { m["vocab_size"] = 1 << 40 },
		"context-1e9":     func(m map[string]any) { m["context_length"] = 1e9 },
		"layers-negative": func(m map[string]any) { m["num_layers"] = -3 },
		"shared-past":     func(m map[string]any) { m["num_kv_shared_layers"] = 99 },
	}})
}

// FuzzMetadataJSON fuzzes the metadata.json of a stateful3 bundle's
// chunk_1, whose declared shapes define the context, window and heads.
func FuzzMetadataJSON(f *testing.F) {
	fuzzBundleFile(f, bundleTarget{name: "FuzzMetadataJSON", family: "stateful3", file: filepath.Join("chunk_1.mlmodelc", "metadata.json"),
		probes: map[string]func(map[string]any){
			"mask-1e9": func(m map[string]any) {
				for _, in := range m["inputSchema"].([]any) {
					if f := in.(map[string]any); f["name"] == "causal_mask_full" {
						f["shape"] = "[1, 1, 1, 1000000000]"
					}
				}
			},
			"negative-dim": func(m map[string]any) {
				m["inputSchema"].([]any)[0].(map[string]any)["shape"] = "[1, -5]"
			},
			"huge-state": func(m map[string]any) {
				m["stateSchema"].([]any)[0].(map[string]any)["shape"] = "[4096, 4096, 4096, 4096]"
			},
		}})
}
