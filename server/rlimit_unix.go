//go:build unix

package server

import "syscall"

// defaultMaxConns is half the process's file descriptor limit (the rest
// is for the model's files, logs and checkpoints), between 16 and 1024.
func defaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 256
	}
	return int(min(max(rl.Cur/2, 16), 1024))
}
