// Package scratch makes orchard's own folders for files that live only as
// long as the process that writes them (the conversations orchard serve
// spills to disk). Each process gets a folder of its own, made 0700 under
// a parent that may hold anything else, and marked as orchard's by a
// marker file the process keeps locked. Nothing is ever removed but the
// files the owner names (by pattern), the marker and the folder itself
// when it is empty; the folder of a process that died (its marker no
// longer locked) is cleaned the same way by the next process that opens
// one beside it.
package scratch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// markerName is the file that marks a folder as orchard's; markerText
// begins it, and its process id follows.
const (
	markerName = ".orchard-scratch"
	markerText = "orchard scratch folder: its process removes it at exit\n"
)

// Folder is a process's own folder.
type Folder struct {
	dir   string
	owned []string
	lock  *os.File // the marker, held locked while the folder is in use
}

// Open makes a folder of this process's own in parent (made 0700 when
// missing; an existing parent is left as it is), named prefix-PID-N.
// owned are the filepath.Match patterns of the files the owner writes
// there: Close removes those, and so does the cleaning of a dead
// process's folder, which Open does first for the folders named prefix-*
// beside it.
func Open(parent, prefix string, owned ...string) (*Folder, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("scratch folder: %w", err)
	}
	Clean(parent, prefix, owned...)
	dir, err := os.MkdirTemp(parent, fmt.Sprintf("%s-%d-", prefix, os.Getpid())) // 0700
	if err != nil {
		return nil, fmt.Errorf("scratch folder: %w", err)
	}
	// The marker is locked before it says anything: a cleaner that opens
	// it first finds it empty (not provably orchard's) and leaves it.
	m, err := os.OpenFile(filepath.Join(dir, markerName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		var ok bool
		if ok, err = tryLock(m); err == nil && !ok {
			err = errors.New("its marker is locked by another process")
		}
		if err == nil {
			_, err = fmt.Fprintf(m, "%spid %d\n", markerText, os.Getpid())
		}
		if err != nil {
			m.Close()
			os.Remove(m.Name())
		}
	}
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("scratch folder %s: %w", dir, err)
	}
	return &Folder{dir: dir, owned: owned, lock: m}, nil
}

// Dir is the folder's path.
func (f *Folder) Dir() string { return f.dir }

// Close removes the owner's files, the marker and the folder (unless
// something else was put in it, which stays, with the folder).
func (f *Folder) Close() error {
	if f.lock == nil {
		return nil
	}
	err := removeOwned(f.dir, f.owned)
	os.Remove(f.lock.Name())
	f.lock.Close()
	f.lock = nil
	os.Remove(f.dir) // fails, and leaves it, when something else was put there
	return err
}

// Clean empties the folders named prefix-* in parent whose process has
// died: only a folder (not a link) of this user whose marker reads as
// orchard's and is not locked; only the files matching owned, the marker
// and then the folder if nothing else is left. It reports how many it
// removed whole.
func Clean(parent, prefix string, owned ...string) int {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix+"-") {
			continue // ReadDir does not follow links: a link is no folder here
		}
		if cleanDead(filepath.Join(parent, e.Name()), owned) {
			n++
		}
	}
	return n
}

// cleanDead cleans one folder if it is provably a dead process's.
func cleanDead(dir string, owned []string) bool {
	m, err := openMarker(filepath.Join(dir, markerName))
	if err != nil {
		return false
	}
	defer m.Close()
	if ok, err := tryLock(m); err != nil || !ok {
		return false // its process lives (or locks cannot be taken here)
	}
	head := make([]byte, len(markerText))
	if _, err := io.ReadFull(m, head); err != nil || string(head) != markerText {
		return false
	}
	if removeOwned(dir, owned) != nil {
		return false
	}
	os.Remove(m.Name())
	return os.Remove(dir) == nil
}

// removeOwned removes the regular files in dir whose names match owned.
func removeOwned(dir string, owned []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var first error
	for _, e := range entries {
		if !e.Type().IsRegular() || !matches(e.Name(), owned) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

func matches(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := filepath.Match(p, name); ok {
			return true
		}
	}
	return false
}
