package checkpoints

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/fuzzing"
)

// importSeeds are archives for FuzzImport: real exports and the probe's
// hostile ones (empty, cut short, sparse, links, devices, duplicates, a
// cache larger than its bundle's geometry).
func importSeeds(t testing.TB) map[string][]byte {
	src, err := Open(filepath.Join(t.TempDir(), "src"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{"empty": nil, "end-marker-only": make([]byte, 1024)}
	for _, cp := range []*Checkpoint{r1Checkpoint("r1", e2bDims(2), 3, 1), v2Checkpoint("v2", 2, 1, 2, 1)} {
		if err := src.Save(cp); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := src.Export(cp.Meta.Name, &buf); err != nil {
			t.Fatal(err)
		}
		seeds["export-"+cp.Meta.Name] = buf.Bytes()
	}
	blob := seeds["export-r1"]
	entries := readTarEntries(blob)
	seeds["truncated"] = blob[:len(blob)/2]
	with := func(extra ...tarEntry) []byte { return tarOf(append(append([]tarEntry{}, entries...), extra...)) }
	seeds["symlink"] = with(tarEntry{&tar.Header{Name: "r1/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, nil})
	seeds["hardlink"] = with(tarEntry{&tar.Header{Name: "r1/k_9.bin", Typeflag: tar.TypeLink, Linkname: "r1/k_0.bin"}, nil})
	seeds["fifo"] = with(tarEntry{&tar.Header{Name: "r1/p", Typeflag: tar.TypeFifo}, nil})
	seeds["device"] = with(tarEntry{&tar.Header{Name: "r1/zero", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5}, nil})
	seeds["orchard-json-twice"] = with(entries[1])
	seeds["path-escape"] = with(tarEntry{&tar.Header{Name: "r1/../evil", Typeflag: tar.TypeReg, Size: 1, Mode: 0o600}, []byte{1}})
	var head bytes.Buffer
	tw := tar.NewWriter(&head)
	for _, e := range entries[:2] {
		tw.WriteHeader(e.hdr)
		tw.Write(e.data)
	}
	tw.Flush()
	seeds["sparse-bomb"] = append(append(head.Bytes(), sparseEntry(entries[2].hdr.Name, 2<<30, nil)...), make([]byte, 1024)...)
	cp := v2Checkpoint("big", 2, 1, 4, 1)
	cp.Cache.Buffers = cp.Cache.Buffers[:1]
	cp.Cache.Buffers[0].Shape = []int{1 << 30}
	meta := hostileMeta(t, cp)
	seeds["cache-past-geometry"] = tarOf([]tarEntry{{&tar.Header{Name: "big/orchard.json", Typeflag: tar.TypeReg, Size: int64(len(meta)), Mode: 0o600}, meta}})
	return seeds
}

func readTarEntries(blob []byte) []tarEntry {
	var out []tarEntry
	tr := tar.NewReader(bytes.NewReader(blob))
	for {
		h, err := tr.Next()
		if err != nil {
			return out
		}
		var data bytes.Buffer
		data.ReadFrom(tr)
		out = append(out, tarEntry{h, data.Bytes()})
	}
}

func tarOf(entries []tarEntry) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		tw.WriteHeader(e.hdr)
		tw.Write(e.data)
	}
	tw.Close()
	return buf.Bytes()
}

// FuzzImport: any byte stream given to ckpt import is imported whole or
// refused with ErrCorrupt or a name error; never a panic, never more
// memory or disk than a small multiple of the stream, never anything
// left in the store by a refusal, and whatever is imported loads and
// verifies.
func FuzzImport(f *testing.F) {
	seeds := importSeeds(f)
	fuzzing.WriteSeeds(f, "FuzzImport", seeds)
	for _, s := range seeds {
		f.Add(s)
	}
	s, err := Open(filepath.Join(f.TempDir(), "store"))
	if err != nil {
		f.Fatal(err)
	}
	s.nosync = true
	empty := tree(f, s.Root())
	f.Fuzz(func(t *testing.T, data []byte) {
		var name string
		var err error
		fuzzing.Alloc(t, 1<<20+8*uint64(len(data)), func() { name, err = s.Import(bytes.NewReader(data), "") })
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalidName) && !errors.Is(err, ErrNewerVersion) {
				t.Fatalf("an archive refused with an error of another kind: %v", err)
			}
			if strings.ContainsAny(err.Error(), "\x1b\x07\x00") || len(err.Error()) > 2000 {
				t.Fatalf("error of %d bytes or with control characters: %.300q", len(err.Error()), err)
			}
			if got := tree(t, s.Root()); got != empty {
				t.Fatalf("a refused import left files:\n%s", got)
			}
			return
		}
		var onDisk int64
		filepath.Walk(filepath.Join(s.Root(), folderName(name)), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				onDisk += fi.Size()
			}
			return nil
		})
		if onDisk > int64(len(data)) {
			t.Fatalf("a %d-byte archive became %d bytes on disk", len(data), onDisk)
		}
		if err := s.Verify(name); err != nil {
			t.Fatalf("imported %q does not verify: %v", name, err)
		}
		if err := s.Delete(name); err != nil {
			t.Fatal(err)
		}
	})
}
