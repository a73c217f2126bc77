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

// ListenUnix listens on a unix socket readable only by its owner. A
// missing folder is made 0700; an existing one keeps its mode (it may be
// a shared /tmp). The socket is bound in a private folder of its own,
// made 0600 and only then linked into place, so nobody else can connect
// in between, whatever the folder's mode. A socket left by a server that
// died is replaced; one a live server answers on is refused.
func ListenUnix(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
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
	private, err := os.MkdirTemp(dir, ".orchard-")
	if err != nil {
		return nil, fmt.Errorf("socket folder %s: %w", dir, err)
	}
	defer os.Remove(private)
	bound := filepath.Join(private, "s")
	l, err := net.Listen("unix", bound)
	if err != nil {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	// The listener would remove the name it was bound to at Close; the
	// socket lives at path now, which the caller removes.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	err = os.Chmod(bound, 0o600)
	if err == nil {
		// A link, not a rename: it fails if another server put its socket
		// at path meanwhile, where a rename would take its place.
		if err = os.Link(bound, path); errors.Is(err, os.ErrExist) {
			err = errors.New("another orchard serve started there just now")
		} else if err != nil {
			err = os.Rename(bound, path) // a file system without links
		}
	}
	os.Remove(bound)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	return l, nil
}
