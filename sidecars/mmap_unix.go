//go:build unix

package sidecars

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/orchard-llm/orchard/regfile"
)

// mapFile maps path, a regular file, read-only. The returned release
// unmaps it; the mapping outlives the descriptor, so the file is closed
// before returning.
func mapFile(path string) (data []byte, release func() error, err error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size == 0 {
		// mmap rejects empty mappings; an empty file is reported by the size check.
		return nil, func() error { return nil }, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("%s: file too large to map (%d bytes)", path, size)
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return data, func() error { return unix.Munmap(data) }, nil
}
