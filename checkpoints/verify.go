package checkpoints

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/regfile"
)

// snapshot is a checkpoint's orchard.json with its files opened. The files
// are opened under the shared lock; once open they stay readable even if
// the checkpoint is replaced or deleted meanwhile, because nothing in the
// store is ever rewritten in place.
type snapshot struct {
	name  string
	dir   string
	rec   *record
	files map[string]*os.File
}

func (s *Store) open(name string, withFiles bool) (*snapshot, error) {
	name = normName(name)
	if err := checkName(name, true); err != nil {
		return nil, err
	}
	release, err := s.lockRead()
	if err != nil {
		return nil, err
	}
	defer release()
	dir := filepath.Join(s.root, s.locate(name))
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, s.notFound(name, cmp.Or(err, fs.ErrNotExist))
	}
	rec, err := readMeta(dir)
	if err != nil {
		return nil, named(err, name)
	}
	rec.cp.Meta.Name = name
	if !withFiles {
		return &snapshot{name: name, dir: dir, rec: rec}, nil
	}
	return openFiles(name, dir, rec)
}

// openFiles opens every file orchard.json lists.
func openFiles(name, dir string, rec *record) (*snapshot, error) {
	snap := &snapshot{name: name, dir: dir, rec: rec, files: map[string]*os.File{}}
	for _, f := range rec.cp.Meta.Files {
		h, err := regfile.Open(filepath.Join(dir, f.Name))
		if err != nil {
			snap.close()
			return nil, &FileError{Name: name, Dir: dir, File: f.Name, Reason: regfile.Reason(err), Err: ErrCorrupt}
		}
		snap.files[f.Name] = h
	}
	return snap, nil
}

func (sn *snapshot) close() {
	for _, f := range sn.files {
		f.Close()
	}
}

// readFiles checks every file's size and sha256 (concurrently) and, for r1,
// that manifest.json agrees with orchard.json. With keep it returns the
// contents by file name; without, it streams them through the hash only.
func (sn *snapshot) readFiles(keep bool) (map[string][]byte, error) {
	sums := sn.rec.cp.Meta.Files
	datas := make([][]byte, len(sums))
	errs := make([]error, len(sums))
	parallel(len(sums), func(i int) {
		f := sums[i]
		datas[i], errs[i] = checkFile(sn.files[f.Name], f, keep || f.Name == coreLLMManifest)
		if errs[i] != nil {
			errs[i] = &FileError{Name: sn.name, Dir: sn.dir, File: f.Name, Reason: errs[i].Error(), Err: ErrCorrupt}
		}
	})
	if err := firstError(errs); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for i, f := range sums {
		out[f.Name] = datas[i]
	}
	if sn.rec.cp.Cache.Family == bundle.R1 {
		if err := crossCheckR1(sn.rec, out[coreLLMManifest]); err != nil {
			err.Name, err.Dir = sn.name, sn.dir
			return nil, err
		}
	}
	return out, nil
}

// firstError picks the first failure in file order so messages are stable.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkFile reads an open file that must match sum, hashing each chunk
// while it is still in the CPU cache. With keep it returns the contents.
func checkFile(f *os.File, sum FileSum, keep bool) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != sum.Bytes {
		return nil, errors.New(sizeReason(st.Size(), sum.Bytes))
	}
	const chunk = 256 << 10
	var data, buf []byte
	if keep {
		data = make([]byte, sum.Bytes)
	} else {
		buf = make([]byte, min(chunk, sum.Bytes))
	}
	h := sha256.New()
	for off := int64(0); off < sum.Bytes; {
		n := min(chunk, sum.Bytes-off)
		var p []byte
		if keep {
			p = data[off : off+n]
		} else {
			p = buf[:n]
		}
		if _, err := io.ReadFull(f, p); err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
		h.Write(p)
		off += n
	}
	if hex.EncodeToString(h.Sum(nil)) != sum.SHA256 {
		return nil, errors.New("sha256 mismatch: the contents are damaged")
	}
	return data, nil
}

// crossCheckR1 requires an r1 checkpoint's manifest.json to pass
// corellm-chat's import checks and to describe the same checkpoint as
// orchard.json.
func crossCheckR1(rec *record, data []byte) *FileError {
	bad := func(format string, a ...any) *FileError {
		return &FileError{File: coreLLMManifest, Reason: "disagrees with orchard.json: " + fmt.Sprintf(format, a...), Err: ErrCorrupt}
	}
	m, err := parseCoreLLMManifest(data)
	if err != nil {
		return &FileError{File: coreLLMManifest, Reason: err.Error(), Err: ErrCorrupt}
	}
	if e := m.checkVersion(); e != nil {
		return e
	}
	sizes := map[string]int64{}
	for _, f := range rec.cp.Meta.Files {
		sizes[f.Name] = f.Bytes
	}
	if e := m.checkLayout(func(name string) (int64, error) {
		n, ok := sizes[name]
		if !ok {
			return 0, errors.New("not part of the checkpoint")
		}
		return n, nil
	}); e != nil {
		return e
	}
	cp := rec.cp
	if d := m.Identity.diff(cp.Meta.CoreLLM); len(d) > 0 {
		return bad("identity: %s", strings.Join(d, "; "))
	}
	if m.Position != cp.Cache.Position || !slices.Equal(m.ProcessedTokens, cp.Tokens) {
		return bad("position or tokens")
	}
	if (m.PendingNextToken == nil) != (cp.Pending == nil) || cp.Pending != nil && *m.PendingNextToken != *cp.Pending {
		return bad("pendingNextToken")
	}
	file := map[string]string{}
	for i, b := range cp.Cache.Buffers {
		file[b.Name] = rec.bufFiles[i]
	}
	for _, l := range m.Layers {
		if file[fmt.Sprintf("k_%d", l.Layer)] != l.KFile || file[fmt.Sprintf("v_%d", l.Layer)] != l.VFile {
			return bad("layer %d files", l.Layer)
		}
	}
	return nil
}

// readMeta reads and decodes a folder's orchard.json.
func readMeta(dir string) (*record, error) {
	data, err := readSmall(filepath.Join(dir, metaFile))
	if err != nil {
		return nil, &FileError{Dir: dir, File: metaFile, Reason: err.Error(), Err: ErrCorrupt}
	}
	rec, err := decodeMeta(data)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.Dir = dir
		}
		return nil, err
	}
	rec.raw = data
	return rec, nil
}

// named sets the checkpoint name of a *FileError.
func named(err error, name string) error {
	var fe *FileError
	if errors.As(err, &fe) {
		fe.Name = name
	}
	return err
}

// readSmall reads a metadata file, a regular file of at most maxMetaSize
// bytes; the error is the reason.
func readSmall(path string) ([]byte, error) {
	data, err := regfile.ReadFile(path, maxMetaSize)
	if err != nil {
		return nil, errors.New(regfile.Reason(err))
	}
	return data, nil
}

// readExactly reads a regular file that must be n bytes long.
func readExactly(path string, n int64) ([]byte, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, errors.New(regfile.Reason(err))
	}
	defer f.Close()
	return readAllSized(f, n)
}

// readAllSized reads an open file that must be n bytes long.
func readAllSized(f *os.File, n int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != n {
		return nil, errors.New(sizeReason(st.Size(), n))
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return data, nil
}
