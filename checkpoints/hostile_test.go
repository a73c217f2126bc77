package checkpoints

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
)

// rawHeader is one ustar header block written by hand, for entries
// archive/tar refuses to write (PAX sparse records).
func rawHeader(name string, typeflag byte, size int64) []byte {
	h := make([]byte, 512)
	copy(h[0:100], name)
	copy(h[100:108], "0000600\x00")
	copy(h[108:116], "0000000\x00")
	copy(h[116:124], "0000000\x00")
	copy(h[124:136], fmt.Sprintf("%011o\x00", size))
	copy(h[136:148], fmt.Sprintf("%011o\x00", 0))
	h[156] = typeflag
	copy(h[257:263], "ustar\x00")
	copy(h[263:265], "00")
	copy(h[148:156], "        ")
	sum := 0
	for _, c := range h {
		sum += int(c)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return h
}

func pad512(b []byte) []byte {
	if r := len(b) % 512; r != 0 {
		b = append(b, make([]byte, 512-r)...)
	}
	return b
}

// sparseEntry is a PAX 1.0 sparse file: data stored, then a hole up to
// realSize; tar readers expand it to realSize bytes.
func sparseEntry(name string, realSize int64, data []byte) []byte {
	var recs strings.Builder
	for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", name},
		{"GNU.sparse.realsize", strconv.FormatInt(realSize, 10)}} {
		rec := " " + kv[0] + "=" + kv[1] + "\n"
		n := len(rec) + 1
		for len(strconv.Itoa(n))+len(rec) != n {
			n++
		}
		recs.WriteString(strconv.Itoa(n) + rec)
	}
	sparseMap := pad512([]byte(fmt.Sprintf("1\n0\n%d\n", len(data))))
	body := append(sparseMap, pad512(bytes.Clone(data))...)
	var out []byte
	out = append(out, rawHeader("PaxHeaders/x", 'x', int64(recs.Len()))...)
	out = append(out, pad512([]byte(recs.String()))...)
	out = append(out, rawHeader("GNUSparseFile.0/x", '0', int64(len(sparseMap)+len(data)))...)
	return append(out, body...)
}

// A sparse entry is refused before a byte of it is written, whatever
// size it claims: its holes would expand a small archive into a large
// checkpoint.
func TestImportRefusesSparseEntries(t *testing.T) {
	src := openStore(t)
	cp := r1Checkpoint("chat", e2bDims(2), 6, 1)
	if err := src.Save(cp); err != nil {
		t.Fatal(err)
	}
	entries := readTar(t, exportBytes(t, src, "chat"))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries[:2] {
		tw.WriteHeader(e.hdr)
		tw.Write(e.data)
	}
	tw.Flush()
	k0 := entries[2]
	blob := append(buf.Bytes(), sparseEntry(k0.hdr.Name, k0.hdr.Size, k0.data[:16])...)
	blob = append(blob, make([]byte, 1024)...)
	// The probe's bomb: a few kilobytes that expand to far more.
	bomb := append(bytes.Clone(buf.Bytes()), sparseEntry(k0.hdr.Name, 2<<30, nil)...)
	bomb = append(bomb, make([]byte, 1024)...)
	for _, b := range [][]byte{blob, bomb} {
		dst := openStore(t)
		before := tree(t, dst.Root())
		_, err := dst.Import(bytes.NewReader(b), "")
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "k_0.bin is a sparse file, not a file") {
			t.Fatalf("import of a %d-byte archive with a sparse entry: %v", len(b), err)
		}
		if tree(t, dst.Root()) != before {
			t.Error("a refused import changed the store")
		}
	}
}

// hostileMeta renders orchard.json for a checkpoint that Save would refuse.
func hostileMeta(t testing.TB, cp *Checkpoint) []byte {
	t.Helper()
	files, err := bufferFiles(&cp.Cache)
	if err != nil {
		t.Fatal(err)
	}
	cp.Meta.TokenSHA256 = TokenSHA256(cp.Tokens)
	cp.Meta.CacheBytes = 0
	cp.Meta.Files = nil
	for i, b := range cp.Cache.Buffers {
		n, _ := shapeBytes(b.Shape, b.DType)
		cp.Meta.CacheBytes += n
		cp.Meta.Files = append(cp.Meta.Files, FileSum{Name: files[i], Bytes: n, SHA256: strings.Repeat("0", 64)})
	}
	data, err := encodeMeta(cp, files)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// orchard.json is checked against its bundle's geometry before any size
// it declares is trusted: more buffers or bytes than the bundle's KV
// caches can hold, a position past the context, or a geometry past
// orchard's limits are refused at import, before any file is written.
func TestImportCapsTheCacheByTheGeometry(t *testing.T) {
	big := func(edit func(cp *Checkpoint)) []byte {
		cp := v2Checkpoint("x", 2, 1, 4, 1)
		cp.Cache.Buffers = cp.Cache.Buffers[:4]
		edit(cp)
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		meta := hostileMeta(t, cp)
		tw.WriteHeader(&tar.Header{Name: "x/orchard.json", Typeflag: tar.TypeReg, Size: int64(len(meta)), Mode: 0o600})
		tw.Write(meta)
		tw.Close()
		return buf.Bytes()
	}
	for _, c := range []struct {
		what, want string
		edit       func(cp *Checkpoint)
	}{
		{"one buffer of 2 GiB", "the cache buffers hold more than", func(cp *Checkpoint) {
			cp.Cache.Buffers[0].Shape = []int{1 << 30}
		}},
		{"13 buffers for a chain of 12", "more than k and v", func(cp *Checkpoint) {
			cp.Meta.Identity.Geometry.Layers, cp.Meta.Identity.Geometry.FirstShared = 2, 2
			for i := range 13 {
				cp.Cache.Buffers = append(cp.Cache.Buffers, Buffer{Name: fmt.Sprintf("c/s%d", i), Shape: []int{1, 4, 8}, DType: coreml.Float16})
			}
		}},
		{"position past the context", "past the bundle's context of 3", func(cp *Checkpoint) {
			cp.Meta.Identity.Geometry.Context = 3
		}},
		{"context of 10⁹", "context = 1000000000 is more than the 262144 orchard accepts", func(cp *Checkpoint) {
			cp.Meta.Identity.Geometry.Context = 1e9
		}},
		{"negative head dim", "head dim = -512 is negative", func(cp *Checkpoint) {
			cp.Meta.Identity.Geometry.HeadDim = -512
		}},
	} {
		t.Run(c.what, func(t *testing.T) {
			dst := openStore(t)
			before := tree(t, dst.Root())
			_, err := dst.Import(bytes.NewReader(big(c.edit)), "")
			var fe *FileError
			if !errors.As(err, &fe) || fe.File != metaFile || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want orchard.json refused with %q", err, c.want)
			}
			if tree(t, dst.Root()) != before {
				t.Error("a refused import changed the store")
			}
		})
	}
	// r1: corellm-chat's identity must describe the recorded geometry.
	cp := r1Checkpoint("x", e2bDims(2), 3, 1)
	cp.Meta.CoreLLM.Ctx = 1 << 20
	if err := openStore(t).Save(cp); err == nil || !strings.Contains(err.Error(), "ctx 1048576 ≠ 2048") {
		t.Errorf("r1 identity at odds with the geometry: %v", err)
	}
}

// The second process of issue 14: a long-lived Store (the chat) sees a
// replacement another process left half done, restores it before acting,
// and so neither hides the checkpoint nor lets its name be taken.
func TestLongLivedStoreRecoversBeforeEveryOperation(t *testing.T) {
	s := openStore(t) // the chat, opened once
	for _, n := range []string{"a", "main"} {
		if err := s.Save(v2Checkpoint(n, 1, 1, 2, 1)); err != nil {
			t.Fatal(err)
		}
	}
	killed := func() {
		// Another process was killed between the two renames of a save.
		if err := os.Rename(filepath.Join(s.Root(), "main"), filepath.Join(s.Root(), asideName("main", 12345))); err != nil {
			t.Fatal(err)
		}
	}
	killed()
	list, err := s.List()
	if err != nil || strings.Join(names(list), " ") != "a main" {
		t.Fatalf("list after the interrupted save: %v %v", names(list), err)
	}
	killed()
	if err := s.Rename("a", "main"); !errors.Is(err, ErrExists) {
		t.Fatalf("rename onto the interrupted name: %v", err)
	}
	killed()
	if _, err := s.Show("main"); err != nil {
		t.Fatalf("show: %v", err)
	}
	killed()
	if err := s.Verify("main"); err != nil {
		t.Fatalf("verify: %v", err)
	}
	killed()
	if err := s.Save(v2Checkpoint("main", 1, 1, 3, 2)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Show("main"); got.Cache.Position != 3 {
		t.Error("the save did not replace main")
	}
	if ents, _ := os.ReadDir(s.Root()); len(ents) != 3 {
		t.Errorf("entries left: %d, want .lock, a and main", len(ents))
	}
}

// Recovery removes an aside only when the folder of its name is the very
// replacement that set it aside; when the name was used again since (or
// the aside predates the tag), both are kept and the user is told.
func TestRecoveryKeepsAnAsideWhoseNameWasReused(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"done", "reused", "legacy"} {
		if err := s.Save(v2Checkpoint(n, 1, 1, 2, 1)); err != nil {
			t.Fatal(err)
		}
	}
	ino := func(n string) uint64 {
		st, err := os.Lstat(filepath.Join(root, n))
		if err != nil {
			t.Fatal(err)
		}
		return inodeOf(st)
	}
	// "done": the swap completed, the aside (of the new folder's inode) stayed.
	copyDir(t, filepath.Join(root, "done"), filepath.Join(root, asideName("done", ino("done"))))
	// "reused": the aside of an interrupted save, and a new "reused" since.
	copyDir(t, filepath.Join(root, "reused"), filepath.Join(root, asideName("reused", ino("reused")+1)))
	// "legacy": an untagged aside from an older orchard.
	copyDir(t, filepath.Join(root, "legacy"), filepath.Join(root, asidePrefix+"legacy"))

	s2, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := s2.List()
	want := "done legacy legacy (recovered) reused reused (recovered)"
	if got := strings.Join(names(list), " "); got != want {
		t.Fatalf("after recovery: %s, want %s", got, want)
	}
	notes := strings.Join(s2.Notices(), "\n")
	if !strings.Contains(notes, `checkpoint "reused"`) || !strings.Contains(notes, `kept as "reused (recovered)"`) || !strings.Contains(notes, `"legacy"`) {
		t.Errorf("notices: %s", notes)
	}
	if len(s2.Notices()) != 0 {
		t.Error("Notices did not forget")
	}
	for _, n := range []string{"reused (recovered)", "legacy (recovered)"} {
		if err := s2.Verify(n); err != nil {
			t.Error(err)
		}
	}
}

// A FIFO, a folder or a device in a file's place is refused at once,
// never read, so no command blocks while it holds the store lock.
func TestSpecialFilesRefused(t *testing.T) {
	for _, c := range []struct {
		what, file, reason string
		make               func(p string) error
	}{
		{"fifo for a buffer", "k_0.bin", "is a named pipe (FIFO), not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"folder for a buffer", "v_1.bin", "is a folder, not a regular file", func(p string) error { return os.Mkdir(p, 0o700) }},
		{"fifo for orchard.json", "orchard.json", "is a named pipe (FIFO), not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"device for manifest.json", "manifest.json", "is a character device, not a regular file", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		t.Run(c.what, func(t *testing.T) {
			s := openStore(t)
			if err := s.Save(r1Checkpoint("chat", e2bDims(2), 4, 1)); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(s.Root(), "chat", c.file)
			os.Remove(p)
			if err := c.make(p); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 4)
			go func() {
				_, err := s.List()
				done <- err
				done <- s.Verify("chat")
				done <- s.Export("chat", &bytes.Buffer{})
				_, err = s.Load("chat", identity(bundle.R1, "e2b"))
				done <- err
			}()
			for i := range 4 {
				select {
				case err := <-done:
					if i == 0 {
						if err != nil {
							t.Errorf("list: %v", err)
						}
						continue
					}
					if err == nil || !strings.Contains(err.Error(), c.file+": "+c.reason) {
						t.Errorf("operation %d: %v, want %s: %s", i, err, c.file, c.reason)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("an operation blocked on a special file")
				}
			}
			if err := s.Save(r1Checkpoint("other", e2bDims(2), 4, 1)); err != nil {
				t.Errorf("a writer after them: %v", err)
			}
		})
	}
}

// orchard.json with bytes appended is not "truncated"; damaged text says
// where; an empty file says so.
func TestOrchardJSONDamageWording(t *testing.T) {
	s := openStore(t)
	if err := s.Save(v2Checkpoint("chat", 1, 1, 2, 1)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.Root(), "chat", metaFile)
	good := mustRead(t, p)
	for _, c := range []struct {
		what, want string
		data       []byte
	}{
		{"one byte appended", "1 byte after the end of the JSON", append(bytes.Clone(good), 'x')},
		{"a newline appended", "1 byte after the end of the file orchard wrote", append(bytes.Clone(good), '\n')},
		{"cut short", "truncated", good[:len(good)/2]},
		{"empty", "empty (0 bytes)", nil},
		{"garbage inside", "damaged, not valid JSON at byte", bytes.Replace(good, []byte(`"format"`), []byte(`"form@t`), 1)},
	} {
		os.WriteFile(p, c.data, 0o600)
		_, err := s.Show("chat")
		if err == nil || !strings.Contains(err.Error(), c.want) || c.what != "cut short" && strings.Contains(err.Error(), "truncated") {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
}

// "café" typed precomposed and with a combining accent is one checkpoint.
func TestNamesAreNormalised(t *testing.T) {
	const nfc, nfd = "caf\u00e9", "cafe\u0301"
	s := openStore(t)
	cp := v2Checkpoint(nfd, 1, 1, 2, 1)
	if err := s.Save(cp); err != nil {
		t.Fatal(err)
	}
	if cp.Meta.Name != nfc {
		t.Errorf("saved as %q, want the NFC form", cp.Meta.Name)
	}
	if err := s.Save(v2Checkpoint(nfc, 1, 1, 3, 2)); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List()
	if len(list) != 1 || list[0].Name != nfc || list[0].Tokens != 3 {
		t.Fatalf("list: %+v", list)
	}
	if _, err := s.Show(nfd); err != nil {
		t.Errorf("show by the NFD form: %v", err)
	}
	if err := s.Rename(nfd, "other"); err != nil {
		t.Fatal(err)
	}
	// A folder written before names were normalised is still found.
	legacy := filepath.Join(s.Root(), folderName(nfd))
	if err := os.Rename(filepath.Join(s.Root(), "other"), legacy); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Show(nfc); err != nil {
		t.Errorf("show a legacy NFD folder by the NFC name: %v", err)
	}
	if err := s.Save(v2Checkpoint(nfc, 1, 1, 4, 3)); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(); len(list) != 1 {
		t.Errorf("saving over a legacy NFD folder made %d checkpoints", len(list))
	}
	if err := s.Delete(nfc); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Errorf("left after delete: %+v", list)
	}
}

// --kv-save and --kv-restore never remove what the operation did not
// create: a sibling ".DIR.old" (the old fixed aside name, or the user's
// own folder) survives both, and each write removes only its own aside.
func TestKVDirOperationsLeaveSiblingsAlone(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "kv")
	cp := r1Checkpoint("x", e2bDims(2), 3, 1)
	if err := WriteCoreLLM(dir, cp); err != nil {
		t.Fatal(err)
	}
	sibling := filepath.Join(parent, ".kv.old")
	os.MkdirAll(filepath.Join(sibling, "precious"), 0o700)
	os.WriteFile(filepath.Join(sibling, "precious", "notes.txt"), []byte("mine"), 0o600)
	before := tree(t, sibling)
	if _, err := ReadCoreLLM(dir, cp.Meta.CoreLLM); err != nil {
		t.Fatal(err)
	}
	if err := WriteCoreLLM(dir, r1Checkpoint("x", e2bDims(2), 5, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sibling); err != nil || tree(t, sibling) != before {
		t.Fatalf("the sibling %s was touched: %v", sibling, err)
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 2 {
		t.Errorf("entries beside the KV folder: %d, want kv and .kv.old", len(ents))
	}

	// An interrupted write left the previous folder aside and none in place:
	// the read changes nothing and says where the data went.
	aside := coreLLMAside(dir)
	if err := os.Rename(dir, aside); err != nil {
		t.Fatal(err)
	}
	_, err := ReadCoreLLM(dir, cp.Meta.CoreLLM)
	if err == nil || !strings.Contains(err.Error(), aside) || !strings.Contains(err.Error(), "rename it back") {
		t.Errorf("read of a folder an interrupted write set aside: %v", err)
	}
	if _, err := os.Stat(aside); err != nil {
		t.Errorf("the read removed the aside: %v", err)
	}
}

// --kv-save . (or any folder holding the current one) is refused with a
// sentence, not "rename . …: device or resource busy".
func TestKVSaveRefusesTheCurrentFolder(t *testing.T) {
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	dir := t.TempDir()
	os.Chdir(dir)
	for _, p := range []string{".", dir, filepath.Dir(dir), "/"} {
		err := WriteCoreLLM(p, r1Checkpoint("x", e2bDims(2), 3, 1))
		if err == nil || !strings.Contains(err.Error(), "name a folder of its own") {
			t.Errorf("--kv-save %s: %v", p, err)
		}
	}
	if err := WriteCoreLLM("kv", r1Checkpoint("x", e2bDims(2), 3, 1)); err != nil {
		t.Errorf("--kv-save kv: %v", err)
	}
}
