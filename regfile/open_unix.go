//go:build unix

package regfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens with O_NONBLOCK so that a FIFO without a writer
// does not block the open; for a regular file the flag changes nothing.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// openAppendNonBlocking opens for appending with O_NONBLOCK: a FIFO
// without a reader fails at once (ENXIO) instead of blocking the open.
func openAppendNonBlocking(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NONBLOCK, perm)
}
