//go:build !unix

package sidecars

import "os"

// mapFile reads path into memory where mmap is unavailable.
func mapFile(path string) (data []byte, release func() error, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
