//go:build darwin || linux || freebsd || netbsd || openbsd || dragonfly

package checkpoints

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// lockStore takes an flock on the store's lock file: shared for readers,
// exclusive for anything that renames or removes folders. Each call opens
// its own descriptor, so goroutines of one process exclude each other just
// as processes do. The lock goes with the descriptor, also when the
// process is killed.
//
// A reader of a store it cannot write (a read-only disk or folder) that
// has no lock file yet reads without one: nobody can be changing what it
// reads through this folder, and the lock file cannot be made.
func lockStore(root string, exclusive bool) (release func(), err error) {
	p := filepath.Join(root, lockFile)
	// O_NONBLOCK: a FIFO in the lock file's place must not hang the open.
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if !exclusive && readOnly(err) {
			if _, serr := os.Lstat(p); errors.Is(serr, fs.ErrNotExist) {
				return func() {}, nil
			}
		}
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lock file %s is not a regular file", p)
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

// readOnly reports whether err says a file cannot be created or changed
// there: a read-only file system or a folder without write permission.
func readOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
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

// openDir opens a folder without blocking, whatever is at p.
func openDir(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is not a folder", p)
	}
	return f, nil
}

// inodeOf is a file's inode number (0 if unknown).
func inodeOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
