//go:build !unix

package mcpclient

import "os/exec"

func ownProcessGroup(*exec.Cmd) {}

// killGroup ends the server's process; what it started is left to exit
// when its input closes.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
