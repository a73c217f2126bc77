//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts a server in a process group of its own, so that
// stopping it also stops what it started (npx runs node, uvx python).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup ends whatever is left of a server's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
