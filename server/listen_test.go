package server

import (
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestListenUnixFolderModes: ListenUnix makes a missing folder 0700 and
// leaves an existing one's mode alone (a shared 1777 folder stays 1777);
// the socket is 0600 either way, and a second server on it is refused.
func TestListenUnixFolderModes(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(t.TempDir(), "a", "b")
	for _, tc := range []struct {
		dir  string
		want os.FileMode
	}{
		{shared, 0o777 | os.ModeSticky},
		{open, 0o755},
		{made, 0o700},
	} {
		sock := filepath.Join(tc.dir, "o.sock")
		l, err := ListenUnix(sock)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (os.ModePerm | os.ModeSticky); got != tc.want {
			t.Errorf("%s: folder mode %v, want %v", tc.dir, got, tc.want)
		}
		if fi, err := os.Lstat(sock); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
			t.Errorf("%s: socket %v %v, want a 0600 socket", sock, fi.Mode(), err)
		}
		if c, err := net.Dial("unix", sock); err != nil {
			t.Errorf("%s: %v", sock, err)
		} else {
			c.Close()
		}
		if l2, err := ListenUnix(sock); err == nil {
			l2.Close()
			t.Errorf("%s: a second server listened on a live socket", sock)
		}
		if entries, _ := os.ReadDir(tc.dir); len(entries) != 1 {
			t.Errorf("%s holds %d entries, want the socket alone", tc.dir, len(entries))
		}
		l.Close()
	}
}

// TestListenUnixRace: of servers starting on one socket at once, one
// listens and the others are refused (none takes another's place).
func TestListenUnixRace(t *testing.T) {
	for range 20 {
		sock := filepath.Join(t.TempDir(), "o.sock")
		var wg sync.WaitGroup
		var won atomic.Int32
		for range 4 {
			wg.Go(func() {
				if l, err := ListenUnix(sock); err == nil {
					won.Add(1)
					t.Cleanup(func() { l.Close() })
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("%d servers listen on one socket", won.Load())
		}
	}
}
