package media

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"

	"github.com/orchard-llm/orchard/regfile"
)

// FileInfo identifies a media file: what a checkpoint stores to recognise
// it again and a chat chip shows.
type FileInfo struct {
	Path   string // as given
	Name   string // base name
	Bytes  int64  // file size
	SHA256 string // hex digest of the file's bytes
}

// Source is a media file's bytes and what identifies them: read from a
// path (ReadSource), or received without one (BytesSource: a file sent to
// a server by an API client or an attached screen).
type Source struct {
	Info FileInfo
	Data []byte
}

// ReadSource reads a whole media file, refusing one larger than o allows
// and anything but a regular file, and describes it.
func ReadSource(path string, o Options) (Source, error) {
	data, info, err := readFile(path, o.maxBytes())
	return Source{Info: info, Data: data}, err
}

// BytesSource describes data received without a file; name stands for
// it in messages and chips (a base name, or where the bytes came from,
// such as "messages[1].content[0]").
func BytesSource(name string, data []byte) Source {
	sum := sha256.Sum256(data)
	return Source{Info: FileInfo{Path: name, Name: filepath.Base(name), Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}, Data: data}
}

// checkSize refuses a source over o's byte limit (bytes that did not come
// from ReadSource were not checked yet).
func (src Source) checkSize(o Options) error {
	if int64(len(src.Data)) > o.maxBytes() {
		return tooBig(src.Info.Path, int64(len(src.Data)), o.maxBytes())
	}
	return nil
}

func tooBig(path string, size, limit int64) error {
	return &LimitError{Option: "MaxBytes", Err: fmt.Errorf("%s is %s, over the %s orchard reads for one attachment",
		path, formatBytes(size), formatBytes(limit))}
}

// readFile reads a whole media file (refusing one larger than limit) and
// describes it.
func readFile(path string, limit int64) ([]byte, FileInfo, error) {
	info := FileInfo{Path: path, Name: filepath.Base(path)}
	// regfile: a FIFO or a device in the file's place is refused at once,
	// where a plain open would wait for a writer or read forever.
	f, err := regfile.Open(path)
	if err != nil {
		return nil, info, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, info, err
	}
	if st.Size() > limit {
		return nil, info, tooBig(path, st.Size(), limit)
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, info, fmt.Errorf("%s changed while being read: %w", path, err)
	}
	sum := sha256.Sum256(data)
	info.Bytes, info.SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
	return data, info, nil
}

// formatBytes is a size for people: 812 B, 4.2 KB, 3.1 MB (powers of 1000,
// as file managers show them).
func formatBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}
