package checkpoints

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/bundle"
)

func TestRoundTrip(t *testing.T) {
	for _, cp := range []*Checkpoint{
		r1Checkpoint("e2b chat", e2bDims(5), 37, 1),
		v2Checkpoint("e4b", 6, 2, 19, 2),
		v2Checkpoint("empty", 0, 2, 0, 3),
	} {
		t.Run(cp.Meta.Name, func(t *testing.T) {
			s := openStore(t)
			if err := s.Save(cp); err != nil {
				t.Fatal(err)
			}
			if cp.Meta.SchemaVersion != SchemaVersion || cp.Meta.Bytes == 0 || len(cp.Meta.Files) == 0 && len(cp.Cache.Buffers) > 0 {
				t.Errorf("Save did not fill the computed fields: %+v", cp.Meta)
			}
			got, err := s.Load(cp.Meta.Name, cp.Meta.Identity)
			if err != nil {
				t.Fatal(err)
			}
			sameCheckpoint(t, got, cp)
			if err := s.Verify(cp.Meta.Name); err != nil {
				t.Error(err)
			}
			shown, err := s.Show(cp.Meta.Name)
			if err != nil {
				t.Fatal(err)
			}
			if len(shown.Cache.Buffers) != len(cp.Cache.Buffers) || len(shown.Cache.Buffers) > 0 && shown.Cache.Buffers[0].Data != nil {
				t.Error("Show must index the buffers without their data")
			}
			// Folders 0700, files 0600.
			dir := filepath.Join(s.Root(), folderName(cp.Meta.Name))
			if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
				t.Errorf("folder mode %v", st.Mode())
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if st, _ := e.Info(); st.Mode().Perm() != 0o600 {
					t.Errorf("%s mode %v", e.Name(), st.Mode())
				}
			}
		})
	}
}

func TestLayout(t *testing.T) {
	s := openStore(t)
	r1 := r1Checkpoint("r1", e2bDims(3), 4, 1)
	v2 := v2Checkpoint("v2", 2, 1, 4, 1)
	for _, cp := range []*Checkpoint{r1, v2} {
		if err := s.Save(cp); err != nil {
			t.Fatal(err)
		}
	}
	names := func(name string) string {
		ents, _ := os.ReadDir(filepath.Join(s.Root(), name))
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return strings.Join(out, " ")
	}
	if got := names("r1"); got != "k_0.bin k_1.bin k_2.bin manifest.json orchard.json v_0.bin v_1.bin v_2.bin" {
		t.Errorf("r1 folder: %s", got)
	}
	if got := names("v2"); got != "orchard.json state_chunk_0_12_k_cache_0.bin state_chunk_0_12_ring_pos.bin state_chunk_0_12_scale.bin state_chunk_0_12_v_cache_0.bin state_chunk_12_24_k_cache_1.bin state_chunk_12_24_v_cache_1.bin" {
		t.Errorf("v2 folder: %s", got)
	}
	// orchard.json is readable JSON with token ids on one line.
	data, _ := os.ReadFile(filepath.Join(s.Root(), "r1", metaFile))
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"ids": [`+strings.ReplaceAll(strings.Trim(js(r1.Tokens), "[]"), ",", ", ")+`]`) {
		t.Errorf("token ids are not on one line:\n%s", data)
	}
}

func TestSaveReplaces(t *testing.T) {
	s := openStore(t)
	old := r1Checkpoint("same", e2bDims(2), 5, 1)
	if err := s.Save(old); err != nil {
		t.Fatal(err)
	}
	next := r1Checkpoint("same", e2bDims(2), 9, 2)
	if err := s.Save(next); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("same", next.Meta.Identity)
	if err != nil {
		t.Fatal(err)
	}
	sameCheckpoint(t, got, next)
	ents, _ := os.ReadDir(s.Root())
	for _, e := range ents {
		if e.Name() != "same" && e.Name() != lockFile {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestSaveRefusesInconsistent(t *testing.T) {
	s := openStore(t)
	cases := map[string]func(cp *Checkpoint){
		"position":        func(cp *Checkpoint) { cp.Tokens = cp.Tokens[1:] },
		"data length":     func(cp *Checkpoint) { cp.Cache.Buffers[0].Data = cp.Cache.Buffers[0].Data[2:] },
		"no identity":     func(cp *Checkpoint) { cp.Meta.Identity = bundle.Identity{} },
		"no corellm":      func(cp *Checkpoint) { cp.Meta.CoreLLM = nil },
		"missing layer":   func(cp *Checkpoint) { cp.Cache.Buffers = cp.Cache.Buffers[:3] },
		"wrong head dim":  func(cp *Checkpoint) { cp.Meta.CoreLLM.OwnLayerHeadDims[0] = 128 },
		"family mismatch": func(cp *Checkpoint) { cp.Cache.Family = bundle.V2 },
		"duplicate":       func(cp *Checkpoint) { cp.Cache.Buffers[1].Name = cp.Cache.Buffers[0].Name },
	}
	for what, spoil := range cases {
		cp := r1Checkpoint("x", e2bDims(2), 3, 1)
		spoil(cp)
		if err := s.Save(cp); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", what, err)
		}
	}
	cp := v2Checkpoint("x", 2, 1, 3, 1)
	cp.Cache.Buffers[1].Name = "chunk_0_12/K_CACHE_0" // the same file as k_cache_0 on macOS
	if err := s.Save(cp); !errors.Is(err, ErrInvalid) {
		t.Errorf("colliding files: %v", err)
	}
	if l, _ := s.List(); len(l) != 0 {
		t.Errorf("a refused save left %v", l)
	}
}

func TestStoreOperations(t *testing.T) {
	s := openStore(t)
	a := r1Checkpoint("Älter Chat", e2bDims(2), 3, 1)
	b := v2Checkpoint("b", 2, 1, 4, 2)
	b.Meta.Created = a.Meta.Created.Add(1e9)
	for _, cp := range []*Checkpoint{a, b} {
		if err := s.Save(cp); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Save(&Checkpoint{Meta: Meta{Name: Autosave}}); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Save under the autosave name: %v", err)
	}
	auto := r1Checkpoint("ignored", e2bDims(2), 2, 3)
	auto.Meta.Created = a.Meta.Created.Add(-1e9)
	if err := s.SaveAutosave(auto); err != nil {
		t.Fatal(err)
	}
	if auto.Meta.Name != "ignored" {
		t.Error("SaveAutosave changed the caller's name")
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if got := js(names(list)); got != `["b","Älter Chat","_autosave"]` {
		t.Errorf("List order %s, want newest first", got)
	}
	if i := list[1]; i.Turns != 2 || i.Tokens != 3 || i.Bundle != a.Meta.BundleName || i.BundleID != a.Meta.Identity.ID || i.Bytes != a.Meta.Bytes || i.Family != bundle.R1 {
		t.Errorf("info %+v", i)
	}

	if err := s.Rename("Älter Chat", "b"); !errors.Is(err, ErrExists) {
		t.Errorf("rename onto an existing name: %v", err)
	}
	if err := s.Rename("nope", "c"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rename of an unknown name: %v", err)
	}
	if err := s.Rename("b", Autosave); !errors.Is(err, ErrInvalidName) {
		t.Errorf("rename to the autosave: %v", err)
	}
	if err := s.Rename(Autosave, "kept"); err != nil {
		t.Error(err)
	}
	if err := s.Rename("Älter Chat", "älter chat"); err != nil {
		t.Error(err)
	}
	if _, err := s.Load("älter chat", a.Meta.Identity); err != nil {
		t.Error(err)
	}
	if err := s.Delete("nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("delete of an unknown name: %v", err)
	}
	if err := s.Delete("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("b", b.Meta.Identity); !errors.Is(err, ErrNotFound) {
		t.Errorf("load after delete: %v", err)
	}
	list, _ = s.List()
	if got := js(names(list)); got != `["älter chat","kept"]` {
		t.Errorf("after rename and delete: %s", got)
	}
	ents, _ := os.ReadDir(s.Root())
	if len(ents) != 3 { // two checkpoints and the lock file
		t.Errorf("store holds %d entries", len(ents))
	}
}

func names(l []Info) []string {
	var n []string
	for _, i := range l {
		n = append(n, i.Name)
	}
	return n
}

func TestListShowsBrokenCheckpoints(t *testing.T) {
	s := openStore(t)
	if err := s.Save(v2Checkpoint("ok", 1, 1, 2, 1)); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(s.Root(), "broken"), 0o700)
	os.Mkdir(filepath.Join(s.Root(), "NotOurs"), 0o700) // not a canonical folder name
	os.WriteFile(filepath.Join(s.Root(), "stray.txt"), nil, 0o600)
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[1].Name != "broken" || !strings.Contains(list[1].Problem, "orchard.json: missing") {
		t.Errorf("list %+v", list)
	}
}

// Every file of a checkpoint, damaged in every way, is refused with a
// message naming the file and the reason, and nothing on disk changes.
func TestCorruptionRefused(t *testing.T) {
	for _, mk := range []func() *Checkpoint{
		func() *Checkpoint { return r1Checkpoint("r1 chat", e2bDims(3), 6, 1) },
		func() *Checkpoint { return v2Checkpoint("v2 chat", 2, 2, 5, 1) },
	} {
		probe := mk()
		s := openStore(t)
		if err := s.Save(probe); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(s.Root(), folderName(probe.Meta.Name))
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			file := e.Name()
			size := fileSize(t, filepath.Join(dir, file))
			type damage struct {
				what, reason string
				do           func(p string)
			}
			damages := []damage{
				{"delete", "missing", func(p string) { os.Remove(p) }},
				{"truncate to half", "truncated", func(p string) { os.Truncate(p, size/2) }},
				{"truncate by one", "truncated", func(p string) { os.Truncate(p, size-1) }},
				{"flip first byte", "", func(p string) { flip(t, p, 0) }},
				{"flip middle byte", "", func(p string) { flip(t, p, size/2) }},
				{"flip last byte", "", func(p string) { flip(t, p, size-1) }},
			}
			for _, d := range damages {
				if size == 0 && d.what != "delete" {
					continue
				}
				t.Run(probe.Meta.Name+"/"+file+"/"+d.what, func(t *testing.T) {
					s := openStore(t)
					cp := mk()
					if err := s.Save(cp); err != nil {
						t.Fatal(err)
					}
					p := filepath.Join(s.Root(), folderName(cp.Meta.Name), file)
					d.do(p)
					before := tree(t, s.Root())
					_, err := s.Load(cp.Meta.Name, cp.Meta.Identity)
					wantRefusal(t, err, cp.Meta.Name, file, d.reason, ErrCorrupt)
					wantRefusal(t, s.Verify(cp.Meta.Name), cp.Meta.Name, file, d.reason, ErrCorrupt)
					if after := tree(t, s.Root()); after != before {
						t.Errorf("a refused load changed the store:\n%s\n---\n%s", before, after)
					}
					if _, err := Open(s.Root()); err != nil { // recovery must not touch it either
						t.Fatal(err)
					}
					if after := tree(t, s.Root()); after != before {
						t.Error("Open changed a damaged checkpoint")
					}
				})
			}
		}
	}
}

func fileSize(t testing.TB, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func flip(t testing.TB, p string, at int64) {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[at] ^= 0x01
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func wantRefusal(t *testing.T, err error, name, file, reason string, kind error) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, kind) {
		t.Fatalf("got %v, want a %v *FileError", err, kind)
	}
	msg := err.Error()
	if fe.File != file || !strings.Contains(msg, file) || !strings.Contains(msg, name) || fe.Reason == "" || !strings.Contains(msg, reason) {
		t.Errorf("message %q should name checkpoint %q, file %s and reason %q", msg, name, file, reason)
	}
}

func TestForeignBundleRefused(t *testing.T) {
	s := openStore(t)
	cp := r1Checkpoint("chat", e2bDims(2), 3, 1)
	if err := s.Save(cp); err != nil {
		t.Fatal(err)
	}
	before := tree(t, s.Root())
	other := identity(bundle.R1, "another conversion")
	_, err := s.Load("chat", other)
	var ie *IdentityError
	if !errors.As(err, &ie) {
		t.Fatalf("got %v, want *IdentityError", err)
	}
	msg := err.Error()
	for _, want := range []string{`"chat"`, cp.Meta.BundleName, short(cp.Meta.Identity.ID), short(other.ID), "convert_config.json sha256"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if _, err := s.Load("chat", identity(bundle.V2, "e2b")); !errors.As(err, &ie) || !strings.Contains(err.Error(), "family r1 ≠ v2") {
		t.Errorf("other family: %v", err)
	}
	if tree(t, s.Root()) != before {
		t.Error("a refused load changed the store")
	}
}

func TestFutureVersionRefused(t *testing.T) {
	s := openStore(t)
	cp := v2Checkpoint("chat", 1, 1, 2, 1)
	if err := s.Save(cp); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.Root(), "chat", metaFile)
	setVersion(t, p, 2)
	before := tree(t, s.Root())
	_, err := s.Load("chat", cp.Meta.Identity)
	wantRefusal(t, err, "chat", metaFile, "newer orchard", ErrNewerVersion)
	if tree(t, s.Root()) != before {
		t.Error("a refused load changed the store")
	}
	setVersion(t, p, 0)
	_, err = s.Load("chat", cp.Meta.Identity)
	wantRefusal(t, err, "chat", metaFile, "schema version 0", ErrCorrupt)
}

// setVersion rewrites orchard.json with another schema version, keeping
// it otherwise well-formed.
func setVersion(t *testing.T, p string, v int) {
	data, _ := os.ReadFile(p)
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, encodeEnvelope(v, env.Body), 0o600)
}

// A manifest.json that checks out by its sum but says something else than
// orchard.json (a tool rewrote both) is refused.
func TestManifestDisagreementRefused(t *testing.T) {
	s := openStore(t)
	cp := r1Checkpoint("chat", e2bDims(2), 3, 1)
	if err := s.Save(cp); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.Root(), "chat")
	rec, err := readMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := parseCoreLLMManifest(mustRead(t, filepath.Join(dir, coreLLMManifest)))
	p := 999
	m.PendingNextToken = &p
	data, _ := m.encode()
	os.Remove(filepath.Join(dir, coreLLMManifest))
	sum, _ := writeFile(filepath.Join(dir, coreLLMManifest), data, false)
	for i, f := range rec.cp.Meta.Files {
		if f.Name == coreLLMManifest {
			rec.cp.Meta.Files[i] = sum
		}
	}
	meta, err := encodeMeta(rec.cp, rec.bufFiles)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, metaFile), meta, 0o600)
	_, err = s.Load("chat", cp.Meta.Identity)
	wantRefusal(t, err, "chat", coreLLMManifest, "pendingNextToken", ErrCorrupt)
}

func mustRead(t testing.TB, p string) []byte {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRecovery(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"kept", "replaced", "orphan"} {
		if err := s.Save(v2Checkpoint(n, 1, 1, 2, 1)); err != nil {
			t.Fatal(err)
		}
	}
	// "replaced": crash after the new one went in, before the old was
	// removed; the aside carries the new folder's inode.
	st, _ := os.Lstat(filepath.Join(root, "replaced"))
	copyDir(t, filepath.Join(root, "replaced"), filepath.Join(root, asideName("replaced", inodeOf(st))))
	// "orphan": crash after the old one went aside, before the new went in.
	os.Rename(filepath.Join(root, "orphan"), filepath.Join(root, asideName("orphan", 99)))
	os.MkdirAll(filepath.Join(root, tempPrefix+"abandoned", "x"), 0o700)
	os.Rename(filepath.Join(root, "kept"), filepath.Join(root, tempPrefix+"deleting"))
	// A live writer's temp folder (another Store in flight) must survive.
	live, err := s.newTemp()
	if err != nil {
		t.Fatal(err)
	}
	defer live.close()

	if _, err := Open(root); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(root)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	want := []string{lockFile, filepath.Base(live.path), "orphan", "replaced"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after recovery: %v, want %v", got, want)
	}
	for _, n := range []string{"orphan", "replaced"} {
		if err := s.Verify(n); err != nil {
			t.Error(err)
		}
	}
}

func copyDir(t *testing.T, from, to string) {
	os.Mkdir(to, 0o700)
	ents, _ := os.ReadDir(from)
	for _, e := range ents {
		os.WriteFile(filepath.Join(to, e.Name()), mustRead(t, filepath.Join(from, e.Name())), 0o600)
	}
}

// An error in the middle of a save (a full disk, a failed fsync) leaves the
// previous checkpoint as it was and nothing half-written behind.
func TestFailedSaveKeepsOld(t *testing.T) {
	for _, step := range []string{"files", "swap"} {
		t.Run(step, func(t *testing.T) {
			s := openStore(t)
			old := r1Checkpoint("chat", e2bDims(2), 3, 1)
			if err := s.Save(old); err != nil {
				t.Fatal(err)
			}
			before := tree(t, s.Root())
			full := errors.New("no space left on device")
			s.fail = func(at string) error {
				if at == step {
					return full
				}
				return nil
			}
			if err := s.Save(r1Checkpoint("chat", e2bDims(2), 5, 2)); !errors.Is(err, full) {
				t.Fatalf("save: %v", err)
			}
			unchangedBy(t, "a failed save", s, before, old)
		})
	}
}
