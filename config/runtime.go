package config

import "path/filepath"

// RuntimeDir is the folder of orchard serve's unix socket:
// $XDG_RUNTIME_DIR/orchard when that is an absolute path, else run/ in
// the data folder. Either way it is made 0700.
func (c *Config) RuntimeDir(env func(string) string) string {
	if d := env("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "orchard")
	}
	return filepath.Join(c.Data.Dir, "run")
}

// SocketFile is orchard serve's default unix socket.
func (c *Config) SocketFile(env func(string) string) string {
	return filepath.Join(c.RuntimeDir(env), "orchard.sock")
}
