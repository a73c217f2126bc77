//go:build darwin || linux || freebsd || netbsd || openbsd || dragonfly

package checkpoints

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockStore takes an flock on the store's lock file: shared for readers,
// exclusive for anything that renames or removes folders. Each call opens
// its own descriptor, so goroutines of one process exclude each other just
// as processes do. The lock goes with the descriptor, also when the
// process is killed.
func lockStore(root string, exclusive bool) (release func(), err error) {
	f, err := os.OpenFile(filepath.Join(root, lockFile), os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// tryLockDir takes an exclusive lock on an open folder without waiting; it
// marks a temp folder as in use by a live writer.
func tryLockDir(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}
