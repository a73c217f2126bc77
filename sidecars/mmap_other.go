//go:build !unix

package sidecars

import (
	"io"

	"github.com/orchard-llm/orchard/regfile"
)

// mapFile reads path, a regular file, into memory where mmap is unavailable.
func mapFile(path string) (data []byte, release func() error, err error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if data, err = io.ReadAll(f); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
