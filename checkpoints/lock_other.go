//go:build !(darwin || linux || freebsd || netbsd || openbsd || dragonfly)

package checkpoints

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Without flock the store does not guard against other processes: one
// orchard process per store.
func lockStore(root string, exclusive bool) (release func(), err error) { return func() {}, nil }

func tryLockDir(f *os.File) (bool, error) { return true, nil }

func readOnly(err error) bool { return errors.Is(err, fs.ErrPermission) }

func openDir(p string) (*os.File, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", p)
	}
	return os.Open(p)
}

func inodeOf(fs.FileInfo) uint64 { return 0 }
