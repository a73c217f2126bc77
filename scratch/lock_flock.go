//go:build darwin || linux || freebsd || netbsd || openbsd || dragonfly

package scratch

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting; false means
// another open of the file (another process) holds it. The lock goes
// with the descriptor, also when the process is killed.
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

// openMarker opens a marker for reading: a regular file of this user,
// not through a link, never blocking (a FIFO in its place).
func openMarker(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		switch {
		case !fi.Mode().IsRegular():
			err = fmt.Errorf("%s is not a regular file", p)
		case !ok || int(st.Uid) != os.Getuid():
			err = fmt.Errorf("%s belongs to another user", p)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
