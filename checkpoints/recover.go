package checkpoints

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A replacement sets the old folder aside as .old-<folder>+<inode>, where
// inode is the new folder's (a rename keeps it). Recovery tells by it
// whether the folder now under that name is the replacement (the crash
// came after the swap: the aside is stale) or something that took the
// name later (the crash came before the swap and nobody recovered since:
// both are kept). Asides without the tag were written by older versions.

// asideName is the aside of folder while the folder with inode ino
// replaces it.
func asideName(folder string, ino uint64) string {
	if ino == 0 {
		return asidePrefix + folder + "+" + randomSuffix()
	}
	return asidePrefix + folder + "+" + strconv.FormatUint(ino, 16)
}

// parseAside splits an aside's name. A '+' can only start a folder name,
// so the last one past the start separates the tag.
func parseAside(entry string) (folder string, ino uint64, tagged bool) {
	rest := strings.TrimPrefix(entry, asidePrefix)
	if i := strings.LastIndexByte(rest, '+'); i > 0 {
		if n, err := strconv.ParseUint(rest[i+1:], 16, 64); err == nil {
			return rest[:i], n, true
		}
		return rest[:i], 0, false
	}
	return rest, 0, false
}

// recover runs at Open, under the exclusive store lock: it resolves every
// interrupted replacement and removes temp folders no live writer holds.
//
// A store orchard cannot write (a read-only disk or folder) without its
// lock file is opened for reading: recovery waits for a writable one, and
// each reader reads what is there.
func (s *Store) recover() error {
	release, err := lockStore(s.root, true)
	if err != nil && readOnly(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoints %s: lock: %w", s.root, err)
	}
	defer release()
	return s.recoverLocked(true)
}

// recoverLocked resolves interrupted replacements (see recoverAside) and,
// with temps, removes abandoned temp folders. The caller holds the
// exclusive lock. Every operation that changes the store runs it first,
// so a long-lived process sees what a killed one left as the next start
// would.
func (s *Store) recoverLocked(temps bool) error {
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return fmt.Errorf("checkpoints %s: %w", s.root, err)
	}
	changed := false
	var errs []error
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, asidePrefix):
			ok, err := s.recoverAside(name)
			changed = changed || ok
			errs = append(errs, err)
		case temps && strings.HasPrefix(name, tempPrefix):
			ok, err := removeStaleTemp(filepath.Join(s.root, name))
			changed = changed || ok
			errs = append(errs, err)
		}
	}
	if changed && !s.nosync {
		errs = append(errs, syncDir(s.root))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("checkpoints %s: recovering interrupted writes: %w", s.root, err)
	}
	return nil
}

// interrupted reports whether a replacement awaits recovery.
func (s *Store) interrupted() bool {
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), asidePrefix) {
			if folder, _, _ := parseAside(e.Name()); validFolder(folder) {
				return true
			}
		}
	}
	return false
}

func validFolder(folder string) bool { _, ok := nameOf(folder); return ok }

// recoverAside resolves one aside: renamed back when its folder is
// missing (the new one never went in), removed when the folder is the
// replacement that set it aside, and otherwise kept under a new, visible
// name, because the name was used again since and both are someone's
// conversation.
func (s *Store) recoverAside(entry string) (bool, error) {
	folder, ino, tagged := parseAside(entry)
	name, ok := nameOf(folder)
	if !ok {
		return false, nil // not a name of ours: leave it for a person to judge
	}
	p, dest := filepath.Join(s.root, entry), filepath.Join(s.root, folder)
	st, err := os.Lstat(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, os.Rename(p, dest)
	case err != nil:
		return false, err
	case tagged && inodeOf(st) == ino:
		return true, os.RemoveAll(p)
	}
	kept, err := s.freeName(name)
	if err != nil {
		return false, err
	}
	if err := os.Rename(p, filepath.Join(s.root, folderName(kept))); err != nil {
		return false, err
	}
	s.notice(fmt.Sprintf("checkpoint %q: a save that was interrupted had set its previous version aside, and the name has been used again since; that version is kept as %q", name, kept))
	return true, nil
}

// freeName finds an unused name "<name> (recovered)", "<name> (recovered 2)",
// … within MaxNameBytes.
func (s *Store) freeName(name string) (string, error) {
	for n := 1; n < 1000; n++ {
		suffix := " (recovered)"
		if n > 1 {
			suffix = fmt.Sprintf(" (recovered %d)", n)
		}
		base := name
		for len(base)+len(suffix) > MaxNameBytes {
			_, size := utf8.DecodeLastRuneInString(base)
			base = base[:len(base)-size]
		}
		cand := strings.TrimRight(base, " ") + suffix
		if checkName(cand, false) != nil {
			cand = "checkpoint" + suffix
		}
		if _, err := os.Lstat(filepath.Join(s.root, folderName(cand))); errors.Is(err, fs.ErrNotExist) {
			return cand, nil
		}
	}
	return "", fmt.Errorf("no free name to keep a recovered copy of %q", name)
}

// notice records something recovery did that the user should hear of.
func (s *Store) notice(msg string) {
	s.mu.Lock()
	s.notices = append(s.notices, msg)
	s.mu.Unlock()
}

// Notices returns, and forgets, what recovery reported since the last
// call: checkpoints kept under a new name because theirs had been taken.
func (s *Store) Notices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notices
	s.notices = nil
	return n
}

// lockWrite takes the exclusive lock and recovers first.
func (s *Store) lockWrite() (func(), error) {
	release, err := lockStore(s.root, true)
	if err != nil {
		return nil, fmt.Errorf("checkpoints %s: lock: %w", s.root, err)
	}
	if err := s.recoverLocked(false); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// lockRead takes the shared lock, recovering first (under the exclusive
// lock) when a killed writer left a replacement half done, so a reader
// never misses a checkpoint that recovery would restore. If recovery
// cannot run (a read-only store), what is there is read.
func (s *Store) lockRead() (func(), error) {
	release, err := lockStore(s.root, false)
	if err != nil {
		return nil, fmt.Errorf("checkpoints %s: lock: %w", s.root, err)
	}
	if !s.interrupted() {
		return release, nil
	}
	release()
	if w, err := lockStore(s.root, true); err == nil {
		s.recoverLocked(false)
		w()
	}
	release, err = lockStore(s.root, false)
	if err != nil {
		return nil, fmt.Errorf("checkpoints %s: lock: %w", s.root, err)
	}
	return release, nil
}

// removeStaleTemp removes a temp folder unless a live writer holds its lock.
func removeStaleTemp(p string) (bool, error) {
	f, err := openDir(p)
	if err != nil {
		return false, nil // vanished, or a stray file: not ours to judge
	}
	defer f.Close()
	free, err := tryLockDir(f)
	if err != nil || !free {
		return false, err
	}
	return true, os.RemoveAll(p)
}
