//go:build !unix

package regfile

import "os"

func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

func openAppendNonBlocking(path string, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, perm)
}
