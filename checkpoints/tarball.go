package checkpoints

import (
	"archive/tar"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

// Export writes a checkpoint to w as one tar stream: the folder entry, then
// orchard.json, then every other file, under the checkpoint's folder name.
// Each file is checked against its sha256 while it streams; on a mismatch
// Export stops before the end-of-archive marker, so the stream cannot be
// imported.
func (s *Store) Export(name string, w io.Writer) error {
	snap, err := s.open(name, true)
	if err != nil {
		return err
	}
	defer snap.close()
	folder := folderName(name)
	mtime := snap.rec.cp.Meta.Created.Truncate(1e9) // whole seconds: the same checkpoint exports to the same bytes
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: folder + "/", Mode: 0o700, ModTime: mtime}); err != nil {
		return fmt.Errorf("export %q: %w", name, err)
	}
	raw := snap.rec.raw
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: folder + "/" + metaFile, Mode: 0o600, Size: int64(len(raw)), ModTime: mtime}); err != nil {
		return fmt.Errorf("export %q: %w", name, err)
	}
	if _, err := tw.Write(raw); err != nil {
		return fmt.Errorf("export %q: %w", name, err)
	}
	for _, f := range snap.rec.cp.Meta.Files {
		h := snap.files[f.Name]
		fail := func(reason string) error {
			return &FileError{Name: name, Dir: snap.dir, File: f.Name, Reason: reason, Err: ErrCorrupt}
		}
		st, err := h.Stat()
		if err != nil {
			return fmt.Errorf("export %q: %w", name, err)
		}
		if st.Size() != f.Bytes {
			return fail(sizeReason(st.Size(), f.Bytes))
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: folder + "/" + f.Name, Mode: 0o600, Size: f.Bytes, ModTime: mtime}); err != nil {
			return fmt.Errorf("export %q: %w", name, err)
		}
		sum := sha256.New()
		n, err := io.Copy(io.MultiWriter(tw, sum), io.LimitReader(h, f.Bytes))
		if err != nil {
			return fmt.Errorf("export %q: %s: %w", name, f.Name, err)
		}
		if n != f.Bytes {
			return fail(sizeReason(n, f.Bytes))
		}
		if hex.EncodeToString(sum.Sum(nil)) != f.SHA256 {
			return fail("sha256 mismatch: the contents are damaged")
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("export %q: %w", name, err)
	}
	return nil
}

// Import reads a stream written by Export and stores it as name ("" keeps
// the exported name), which must not exist yet. The archive may hold
// exactly one folder with orchard.json and the files it lists, nothing
// else: no links, devices, FIFOs or sparse entries, no file twice, every
// file exactly the size orchard.json gives it, and orchard.json's cache
// no larger than its bundle's geometry allows. Everything is written to a
// temp folder and verified as Load verifies it (except the bundle
// identity: a checkpoint may be imported on a machine without its bundle)
// before it becomes visible. It returns the name stored. Refused archives
// are an *ArchiveError or a *FileError, both wrapping ErrCorrupt. Errors
// do not name the operation or the archive: the caller knows both.
func (s *Store) Import(r io.Reader, name string) (_ string, err error) {
	defer func() {
		if full, ok := diskFull(s.root, err); ok {
			err = fmt.Errorf("import: %w", full)
		}
	}()
	tr := tar.NewReader(r)
	hdr, err := nextEntry(tr)
	if errors.Is(err, io.EOF) {
		return "", badArchive("it is empty")
	}
	if err != nil {
		return "", badArchive("%s", readReason(err))
	}
	var folder string
	if hdr.Typeflag == tar.TypeDir {
		folder = strings.TrimSuffix(hdr.Name, "/")
		if hdr, err = nextEntry(tr); errors.Is(err, io.EOF) {
			return "", badArchive("it holds the folder %s but no %s", termsafe.Quote(folder), metaFile)
		} else if err != nil {
			return "", badArchive("%s", readReason(err))
		}
	}
	dir, file, ok := splitEntry(hdr.Name)
	if folder == "" {
		folder = dir
	}
	if !ok || dir != folder || file != metaFile {
		return "", badArchive("it must start with <folder>/%s, not %s", metaFile, termsafe.Quote(hdr.Name))
	}
	if kind := entryKind(hdr); kind != "" {
		return "", badArchive("%s is %s, not a file", metaFile, kind)
	}
	if hdr.Size > maxMetaSize {
		return "", badArchive("%s is %d bytes, more than the %d MiB orchard.json may have", metaFile, hdr.Size, maxMetaSize>>20)
	}
	raw, err := io.ReadAll(tr)
	if err != nil {
		return "", badArchive("%s: %s", metaFile, readReason(err))
	}
	if name == "" {
		if name, ok = nameOf(folder); !ok {
			return "", fmt.Errorf("%w: the archive's folder %s is not a checkpoint name; give one", ErrInvalidName, termsafe.Quote(folder))
		}
	}
	name = normName(name)
	if err := checkName(name, false); err != nil {
		return "", err
	}
	rec, err := decodeMeta(raw)
	if err != nil {
		return "", named(err, name)
	}
	if _, err := os.Lstat(filepath.Join(s.root, folderName(name))); err == nil {
		return "", fmt.Errorf("%w: %q", ErrExists, name)
	}

	t, err := s.newTemp()
	if err != nil {
		return "", fmt.Errorf("checkpoint %q: %w", name, err)
	}
	defer t.close()
	if _, err := writeFile(filepath.Join(t.path, metaFile), raw, !s.nosync); err != nil {
		return "", fmt.Errorf("checkpoint %q: %w", name, err)
	}
	want := map[string]int64{}
	for _, f := range rec.cp.Meta.Files {
		want[f.Name] = f.Bytes
	}
	seen := map[string]bool{metaFile: true}
	for {
		hdr, err := nextEntry(tr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", badArchive("%s", readReason(err))
		}
		dir, file, ok := splitEntry(hdr.Name)
		size, listed := want[file]
		switch {
		case !ok || dir != folder:
			return "", badArchive("entry %s is outside the checkpoint's folder %s", termsafe.Quote(hdr.Name), termsafe.Quote(folder))
		case seen[file]:
			return "", badArchive("%s appears twice", file)
		case entryKind(hdr) != "":
			return "", badArchive("%s is %s, not a file", file, entryKind(hdr))
		case !listed:
			return "", badArchive("%s is not listed in %s", file, metaFile)
		case hdr.Size != size:
			return "", badArchive("%s is %d bytes, %s says %d", file, hdr.Size, metaFile, size)
		}
		seen[file] = true
		src := &archiveReader{r: tr}
		if err := copyFile(filepath.Join(t.path, file), src, size, !s.nosync); err != nil {
			if src.err != nil || errors.Is(err, errShort) {
				return "", badArchive("%s: %s", file, readReason(cmp.Or(src.err, err)))
			}
			return "", fmt.Errorf("checkpoint %q: %s: %w", name, file, err)
		}
	}
	for _, f := range rec.cp.Meta.Files {
		if !seen[f.Name] {
			return "", badArchive("it lacks %s, which %s lists", f.Name, metaFile)
		}
	}
	if !s.nosync {
		if err := syncDir(t.path); err != nil {
			return "", fmt.Errorf("checkpoint %q: %w", name, err)
		}
	}
	snap, err := openFiles(name, t.path, rec)
	if err != nil {
		return "", err
	}
	_, err = snap.readFiles(false)
	snap.close()
	if err != nil {
		return "", err
	}
	if err := s.commit(t, name, false); err != nil {
		return "", err
	}
	return name, nil
}

// ArchiveError refuses an archive to import and says why; it wraps
// ErrCorrupt.
type ArchiveError struct{ Reason string }

func (e *ArchiveError) Error() string { return "not a usable checkpoint archive: " + e.Reason }
func (e *ArchiveError) Unwrap() error { return ErrCorrupt }

func badArchive(format string, a ...any) error {
	return &ArchiveError{Reason: fmt.Sprintf(format, a...)}
}

// readReason words a tar reading error.
func readReason(err error) string {
	switch {
	case errors.Is(err, tar.ErrHeader):
		return "it is not a tar archive, or a header is damaged"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, errShort):
		return "the archive ends early (cut off in transfer?)"
	}
	return err.Error()
}

// entryKind names what a tar entry is when it is not a plain regular
// file; "" for a regular file. Sparse entries are refused because their
// holes expand: a few kilobytes could claim gigabytes.
func entryKind(h *tar.Header) string {
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return "a sparse file"
		}
	}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeRegA:
		return ""
	case tar.TypeGNUSparse:
		return "a sparse file"
	case tar.TypeSymlink:
		return "a symbolic link"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar:
		return "a character device"
	case tar.TypeBlock:
		return "a block device"
	case tar.TypeFifo:
		return "a named pipe"
	case tar.TypeDir:
		return "a folder"
	}
	return fmt.Sprintf("an entry of type %q", h.Typeflag)
}

// nextEntry returns the next tar entry, skipping PAX global headers.
func nextEntry(tr *tar.Reader) (*tar.Header, error) {
	for {
		hdr, err := tr.Next()
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeXGlobalHeader {
			return hdr, nil
		}
	}
}

// splitEntry splits "folder/file" into its two plain parts.
func splitEntry(p string) (dir, file string, ok bool) {
	dir, file, ok = strings.Cut(p, "/")
	if !ok || dir == "" || strings.HasPrefix(dir, ".") || !validFileName(file) {
		return "", "", false
	}
	return dir, file, true
}

// archiveReader remembers a read error, so that a damaged archive is told
// apart from a failing disk.
type archiveReader struct {
	r   io.Reader
	err error
}

func (a *archiveReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if err != nil && err != io.EOF {
		a.err = err
	}
	return n, err
}

// errShort: the stream ended before a file's last byte.
var errShort = errors.New("the archive ends early")

// copyFile writes exactly n bytes from r to a new file (0600).
func copyFile(path string, r io.Reader, n int64, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if got, err := io.Copy(f, io.LimitReader(r, n)); err != nil || got != n {
		f.Close()
		return cmp.Or(err, fmt.Errorf("%w: after %d of %d bytes", errShort, got, n))
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
