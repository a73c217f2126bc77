package checkpoints

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// recover runs at Open, under the exclusive store lock. It finishes or
// undoes every replacement a crash interrupted (an aside folder whose
// checkpoint is missing is renamed back, otherwise removed) and removes
// temp folders no live writer holds.
func (s *Store) recover() error {
	release, err := lockStore(s.root, true)
	if err != nil {
		return fmt.Errorf("checkpoints %s: lock: %w", s.root, err)
	}
	defer release()
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return fmt.Errorf("checkpoints %s: %w", s.root, err)
	}
	changed := false
	var errs []error
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(s.root, name)
		switch {
		case strings.HasPrefix(name, asidePrefix):
			ok, err := recoverAside(p, filepath.Join(s.root, strings.TrimPrefix(name, asidePrefix)))
			changed = changed || ok
			errs = append(errs, err)
		case strings.HasPrefix(name, tempPrefix):
			ok, err := removeStaleTemp(p)
			changed = changed || ok
			errs = append(errs, err)
		}
	}
	if changed {
		errs = append(errs, syncDir(s.root))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("checkpoints %s: recovering interrupted writes: %w", s.root, err)
	}
	return nil
}

// removeStaleTemp removes a temp folder unless a live writer holds its lock.
func removeStaleTemp(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, nil // vanished, or a stray file: not ours to judge
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.IsDir() {
		return false, nil
	}
	free, err := tryLockDir(f)
	if err != nil || !free {
		return false, err
	}
	return true, os.RemoveAll(p)
}
