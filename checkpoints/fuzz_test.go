package checkpoints

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/internal/fuzzing"
)

// seedMeta returns orchard.json files of real checkpoints and damaged
// variants as fuzz seeds.
func seedMeta(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, cp := range []*Checkpoint{r1Checkpoint("r1", e2bDims(3), 4, 1), v2Checkpoint("v2", 2, 1, 3, 1), v2Checkpoint("empty", 0, 1, 0, 1)} {
		files, err := bufferFiles(&cp.Cache)
		if err != nil {
			t.Fatal(err)
		}
		cp.Meta.TokenSHA256 = TokenSHA256(cp.Tokens)
		cp.Meta.CacheBytes = cp.Cache.Bytes()
		cp.Meta.Files = nil
		for i, b := range cp.Cache.Buffers {
			cp.Meta.Files = append(cp.Meta.Files, FileSum{Name: files[i], Bytes: int64(len(b.Data)), SHA256: fmt.Sprintf("%064x", i)})
		}
		if cp.Cache.Family == bundle.R1 {
			cp.Meta.Files = append(cp.Meta.Files, FileSum{Name: coreLLMManifest, Bytes: 100, SHA256: fmt.Sprintf("%064x", 99)})
		}
		data, err := encodeMeta(cp, files)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data, data[:len(data)/2], flipAt(data, len(data)/3), bytes.Replace(data, []byte(`"schema_version": 1`), []byte(`"schema_version": 2`), 1))
	}
	// Nesting at and past encoding/json's limit of 10,000 levels, in the
	// body and around it, and a body past 1 MiB.
	env := func(body []byte) []byte {
		return slices.Concat([]byte(`{"format":"orchard-checkpoint","schema_version":1,"body_sha256":"","body":`), body, []byte("}"))
	}
	seeds = append(seeds, env(fuzzing.Nested(`{"a":`, "0", "}", 9_998)), env(fuzzing.Nested("[", "", "]", 10_000)),
		fuzzing.Nested("[", "", "]", 20_000), env(slices.Concat([]byte(`{"tokens":[`), bytes.Repeat([]byte("7,"), 600_000), []byte("7]}"))))
	return append(seeds, nil, []byte("{}"), []byte(`{"format":"orchard-checkpoint","schema_version":1,"body_sha256":"","body":{}}`))
}

// FuzzOrchardJSON: the orchard.json reader never panics, and whatever it
// accepts survives a write and a second read unchanged.
func FuzzOrchardJSON(f *testing.F) {
	for _, s := range seedMeta(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := decodeMeta(data)
		if err != nil {
			if _, ok := err.(*FileError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		again, err := encodeMeta(rec.cp, rec.bufFiles)
		if err != nil {
			t.Fatal(err)
		}
		rec2, err := decodeMeta(again)
		if err != nil {
			t.Fatalf("re-encoded orchard.json refused: %v", err)
		}
		if js(rec2.cp) != js(rec.cp) || js(rec2.bufFiles) != js(rec.bufFiles) {
			t.Fatal("the checkpoint changed across a write and a read")
		}
	})
}

// FuzzCoreLLMManifest: the corellm-chat manifest reader and its import
// checks never panic, and an accepted manifest re-encodes to one that is
// accepted again.
func FuzzCoreLLMManifest(f *testing.F) {
	id := coreLLMIdentity(identity(bundle.R1, "e2b"), nil)
	hand := fmt.Sprintf(handManifest, id.ConvertConfigSHA256, TokenSHA256([]int{2, 105, 2364}))
	f.Add([]byte(hand))
	f.Add([]byte(hand[:len(hand)/2]))
	m := coreLLMManifestOf(func() *Checkpoint {
		cp := r1Checkpoint("x", e2bDims(5), 6, 1)
		cp.Meta.fillDefaults(cp.Meta.Created)
		return cp
	}())
	enc, _ := m.encode()
	f.Add(enc)
	f.Add([]byte(`{"schemaVersion":1,"identity":{"firstShared":1,"ownLayerHeadDims":[4]},"position":1,"layers":[{"layer":0,"headDim":4,"rows":1,"kFile":"k","vFile":"v","kBytes":8,"vBytes":8}],"tokenCount":0,"tokenSeqSHA256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}`))
	f.Add([]byte(`{"schemaVersion":1,"identity":{"firstShared":-1}}`))
	f.Add([]byte(`[]`))
	f.Add(fuzzing.Nested(`{"layers":[`, "", "]}", 5_000))
	f.Add(slices.Concat([]byte(`{"schemaVersion":1,"tokens":[`), bytes.Repeat([]byte("7,"), 600_000), []byte("7]}")))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseCoreLLMManifest(data)
		if err != nil {
			return
		}
		if m.checkVersion() != nil {
			return
		}
		// Sizes as the manifest declares them, so the layer checks run deep.
		size := func(file string) (int64, error) {
			for _, l := range m.Layers {
				if l.KFile == file {
					return l.KBytes, nil
				}
				if l.VFile == file {
					return l.VBytes, nil
				}
			}
			return 0, os.ErrNotExist
		}
		if m.checkLayout(size) != nil {
			return
		}
		enc, err := m.encode()
		if err != nil {
			t.Fatal(err)
		}
		m2, err := parseCoreLLMManifest(enc)
		if err != nil || m2.checkVersion() != nil || m2.checkLayout(size) != nil {
			t.Fatalf("re-encoded manifest refused: %v", err)
		}
	})
}
