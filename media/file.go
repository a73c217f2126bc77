package media

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// FileInfo identifies a media file: what a checkpoint stores to recognise
// it again and a chat chip shows.
type FileInfo struct {
	Path   string // as given
	Name   string // base name
	Bytes  int64  // file size
	SHA256 string // hex digest of the file's bytes
}

// readFile reads a whole media file (refusing one larger than limit) and
// describes it.
func readFile(path string, limit int64) ([]byte, FileInfo, error) {
	info := FileInfo{Path: path, Name: filepath.Base(path)}
	f, err := os.Open(path)
	if err != nil {
		return nil, info, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, info, err
	}
	if !st.Mode().IsRegular() {
		return nil, info, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > limit {
		return nil, info, fmt.Errorf("%s is %s, over the %s orchard reads for one attachment",
			path, formatBytes(st.Size()), formatBytes(limit))
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
