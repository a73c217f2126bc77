package checkpoints

import (
	"path/filepath"
	"testing"
)

// Full-context caches at the published geometries:
//   - E2B r1: 15 own layers, one KV head, head dim 256 (512 at layers 4, 9
//     and 14), 2,048 rows: 36 MiB (37.7 MB) of host KV.
//   - E4B v2: 24 own layers of MLState [2 KV heads, 2,048, hd], hd 256
//     (512 every sixth layer): 112 MiB.
func benchCaches() []*Checkpoint {
	return []*Checkpoint{
		r1Checkpoint("E2B-r1-2048", e2bDims(15), 2048, 1),
		v2Checkpoint("E4B-v2-2048", 24, 2, 2048, 1),
	}
}

// BenchmarkSave: "copy" writes every file without fsync (the copy figure);
// "fsync" is the real Save. Their difference is the cost of durability.
func BenchmarkSave(b *testing.B) {
	for _, cp := range benchCaches() {
		for _, mode := range []string{"copy", "fsync"} {
			b.Run(cp.Meta.Name+"/"+mode, func(b *testing.B) {
				s := openStore(b)
				s.nosync = mode == "copy"
				b.SetBytes(cp.Cache.Bytes())
				for b.Loop() {
					if err := s.Save(cp); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkLoad is a restore from the page cache: open, read, verify every
// sha256 and the identity.
func BenchmarkLoad(b *testing.B) {
	for _, cp := range benchCaches() {
		b.Run(cp.Meta.Name, func(b *testing.B) {
			s := openStore(b)
			if err := s.Save(cp); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(cp.Cache.Bytes())
			for b.Loop() {
				if _, err := s.Load(cp.Meta.Name, cp.Meta.Identity); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadCoreLLM restores a corellm-chat directory, which carries no
// checksums: the plain read speed.
func BenchmarkReadCoreLLM(b *testing.B) {
	cp := benchCaches()[0]
	dir := filepath.Join(b.TempDir(), "kv")
	if err := WriteCoreLLM(dir, cp); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(cp.Cache.Bytes())
	for b.Loop() {
		if _, err := ReadCoreLLM(dir, cp.Meta.CoreLLM); err != nil {
			b.Fatal(err)
		}
	}
}
