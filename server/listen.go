package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultAddr is where orchard serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:11535"

// SocketName is the unix socket's name in the runtime folder.
const SocketName = "orchard.sock"

// CheckExposure refuses to listen beyond this machine without an API
// key: anyone who can reach the port could use the model and read the
// conversations.
func CheckExposure(addr, key string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: want host:port (e.g. %s): %w", addr, DefaultAddr, err)
	}
	if key != "" || loopback(host) {
		return nil
	}
	return fmt.Errorf("listen address %q reaches beyond this machine: set an API key (--api-key, ORCHARD_API_KEY or server.api_key), or listen on 127.0.0.1 and use ssh -L", addr)
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ListenUnix listens on a unix socket readable only by its owner, in a
// folder only the owner may enter. A socket left by a server that died
// is replaced; one a live server answers on is refused.
func ListenUnix(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("socket folder %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("socket folder %s: %w", dir, err)
	}
	if _, err := os.Lstat(path); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var d net.Dialer
		if c, err := d.DialContext(ctx, "unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("socket %s: another orchard serve is running there; stop it or attach to it with orchard --attach", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("socket %s: removing a stale socket: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	return l, nil
}
