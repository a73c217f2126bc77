//go:build unix

package mcpclient

import (
	"errors"
	"syscall"
)

// alive reports whether a process runs (or is a zombie not yet reaped).
func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
