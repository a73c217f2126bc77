package checkpoints

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

func exportBytes(t *testing.T, s *Store, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Export(name, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExportImport(t *testing.T) {
	for _, cp := range []*Checkpoint{r1Checkpoint("Reise nach Jerusalem", e2bDims(3), 5, 1), v2Checkpoint("v2", 2, 2, 4, 2)} {
		src, dst := openStore(t), openStore(t)
		if err := src.Save(cp); err != nil {
			t.Fatal(err)
		}
		blob := exportBytes(t, src, cp.Meta.Name)
		if !bytes.Equal(blob, exportBytes(t, src, cp.Meta.Name)) {
			t.Error("exporting the same checkpoint twice gave different bytes")
		}
		name, err := dst.Import(bytes.NewReader(blob), "")
		if err != nil || name != cp.Meta.Name {
			t.Fatalf("import: %q %v", name, err)
		}
		got, err := dst.Load(name, cp.Meta.Identity)
		if err != nil {
			t.Fatal(err)
		}
		sameCheckpoint(t, got, cp)
		if _, err := dst.Import(bytes.NewReader(blob), "copy"); err != nil {
			t.Fatal(err)
		}
		before := tree(t, dst.Root())
		if _, err := dst.Import(bytes.NewReader(blob), "copy"); !errors.Is(err, ErrExists) {
			t.Errorf("import over an existing name: %v", err)
		}
		if _, err := dst.Import(bytes.NewReader(blob), Autosave); !errors.Is(err, ErrInvalidName) {
			t.Errorf("import as the autosave: %v", err)
		}
		if tree(t, dst.Root()) != before {
			t.Error("a refused import changed the store")
		}
	}
}

// Damaged or hostile archives are refused before anything becomes visible.
func TestImportRefusals(t *testing.T) {
	src := openStore(t)
	cp := r1Checkpoint("chat", e2bDims(2), 6, 1)
	if err := src.Save(cp); err != nil {
		t.Fatal(err)
	}
	blob := exportBytes(t, src, "chat")
	entries := readTar(t, blob)
	dataAt := bytes.Index(blob, cp.Cache.Buffers[1].Data[:64])
	if dataAt < 0 {
		t.Fatal("buffer data not found in the archive")
	}

	for _, c := range []struct {
		what, want string
		blob       []byte
	}{
		{"flipped data byte", "v_0.bin: sha256 mismatch", flipAt(blob, dataAt+10)},
		{"truncated", "v_0.bin: the archive ends early", blob[:len(blob)/2]},
		{"empty", "not a usable checkpoint archive: it is empty", nil},
		{"only end marker", "it is empty", make([]byte, 1024)},
		{"not a tar", "it is not a tar archive", []byte(strings.Repeat("garbage ", 200))},
		{"missing file", "it lacks v_1.bin, which orchard.json lists", writeTar(t, entries, func(e *tarEntry) bool { return strings.HasSuffix(e.hdr.Name, "v_1.bin") }, nil)},
		{"extra file", "extra.bin is not listed in orchard.json", writeTar(t, entries, nil, []tarEntry{{&tar.Header{Name: "chat/extra.bin", Typeflag: tar.TypeReg, Size: 1, Mode: 0o600}, []byte{1}}})},
		{"path escape", `entry "chat/../evil" is outside the checkpoint's folder "chat"`, writeTar(t, entries, nil, []tarEntry{{&tar.Header{Name: "chat/../evil", Typeflag: tar.TypeReg, Size: 1, Mode: 0o600}, []byte{1}}})},
		{"symlink", "link is a symbolic link, not a file", writeTar(t, entries, nil, []tarEntry{{&tar.Header{Name: "chat/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, nil}})},
		{"hard link", "k_9.bin is a hard link, not a file", writeTar(t, entries, nil, []tarEntry{{&tar.Header{Name: "chat/k_9.bin", Typeflag: tar.TypeLink, Linkname: "chat/k_0.bin"}, nil}})},
		{"fifo", "p is a named pipe, not a file", writeTar(t, entries, nil, []tarEntry{{&tar.Header{Name: "chat/p", Typeflag: tar.TypeFifo}, nil}})},
		{"device", "zero is a character device, not a file", writeTar(t, entries, nil, []tarEntry{{&tar.Header{Name: "chat/zero", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5}, nil}})},
		{"second folder", `entry "other/" is outside the checkpoint's folder "chat"`, writeTar(t, entries, nil, []tarEntry{{&tar.Header{Name: "other/", Typeflag: tar.TypeDir, Mode: 0o700}, nil}})},
		{"orchard.json twice", "orchard.json appears twice", writeTar(t, entries, nil, []tarEntry{entries[1]})},
		{"a file twice", "k_0.bin appears twice", writeTar(t, entries, nil, []tarEntry{entries[2]})},
		{"orchard.json hard-linked", "orchard.json is a hard link, not a file", writeTar(t, entries, func(e *tarEntry) bool {
			if strings.HasSuffix(e.hdr.Name, "orchard.json") {
				e.hdr = &tar.Header{Name: e.hdr.Name, Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}
				e.data = nil
			}
			return false
		}, nil)},
		{"folder without orchard.json", `it holds the folder "chat" but no orchard.json`, writeTar(t, entries[:1], nil, nil)},
		{"starts elsewhere", `it must start with <folder>/orchard.json, not "chat/k_0.bin"`, writeTar(t, entries, func(e *tarEntry) bool { return strings.HasSuffix(e.hdr.Name, "orchard.json") }, nil)},
	} {
		t.Run(c.what, func(t *testing.T) {
			dst := openStore(t)
			before := tree(t, dst.Root())
			_, err := dst.Import(bytes.NewReader(c.blob), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
			if after := tree(t, dst.Root()); after != before {
				t.Errorf("a refused import changed the store:\n%s", after)
			}
		})
	}
}

// Export checks every file as it streams and leaves the stream unfinished
// when one is damaged.
func TestExportOfDamagedCheckpoint(t *testing.T) {
	s := openStore(t)
	if err := s.Save(v2Checkpoint("chat", 2, 1, 4, 1)); err != nil {
		t.Fatal(err)
	}
	flip(t, filepath.Join(s.Root(), "chat", "state_chunk_12_24_v_cache_1.bin"), 3)
	var buf bytes.Buffer
	err := s.Export("chat", &buf)
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != "state_chunk_12_24_v_cache_1.bin" {
		t.Fatalf("export: %v", err)
	}
	if _, err := openStore(t).Import(&buf, ""); err == nil {
		t.Error("the unfinished stream was imported")
	}
}

type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

func readTar(t *testing.T, blob []byte) []tarEntry {
	var out []tarEntry
	tr := tar.NewReader(bytes.NewReader(blob))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out = append(out, tarEntry{h, data})
	}
}

func writeTar(t *testing.T, entries []tarEntry, drop func(*tarEntry) bool, extra []tarEntry) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range append(entries, extra...) {
		if drop != nil && drop(&e) {
			continue
		}
		if err := tw.WriteHeader(e.hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write(e.data)
	}
	tw.Close()
	return buf.Bytes()
}

func flipAt(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x01
	return c
}
