package checkpoints

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// Names inside the store root that are not checkpoints. Valid checkpoint
// folders never start with a dot.
const (
	tempPrefix  = ".tmp-" // a folder being written, or one being deleted
	asidePrefix = ".old-" // a replaced checkpoint, until the new one is in place
	lockFile    = ".lock"
)

// writeFile creates path (0600; it must not exist), writes data and, when
// sync is set, fsyncs it. It returns the file's sum.
func writeFile(path string, data []byte, sync bool) (FileSum, error) {
	sum := sha256.Sum256(data)
	fsum := FileSum{Name: filepath.Base(path), Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fsum, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fsum, err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return fsum, fmt.Errorf("fsync %s: %w", path, err)
		}
	}
	return fsum, f.Close()
}

// fileJob is one file to write.
type fileJob struct {
	name string
	data []byte
}

// writeFiles writes the jobs into dir concurrently (fsync latency overlaps
// across files) and returns their sums in job order.
func writeFiles(dir string, jobs []fileJob, sync bool) ([]FileSum, error) {
	sums := make([]FileSum, len(jobs))
	errs := make([]error, len(jobs))
	parallel(len(jobs), func(i int) {
		sums[i], errs[i] = writeFile(filepath.Join(dir, jobs[i].name), jobs[i].data, sync)
	})
	// The first failure says why; a full disk fails every file alike.
	var first error
	failed := 0
	for _, err := range errs {
		if err != nil {
			first = cmp.Or(first, err)
			failed++
		}
	}
	if failed > 1 {
		return sums, fmt.Errorf("%w (and %d more files)", first, failed-1)
	}
	return sums, first
}

// parallel runs f(0..n-1) on up to GOMAXPROCS (at most 8) goroutines.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0), 8)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// syncDir fsyncs a folder so the entries created or renamed in it are
// durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// replaceDir moves the finished folder tmp to dest so that a crash at any
// point leaves either the old dest or the new one: the old one is renamed
// to aside, the new one renamed in, then the old one removed. aside is a
// name of this operation's own (it must not exist), so nothing another
// operation left behind is ever removed. With replace false an existing
// dest is ErrExists. between, if not nil, runs while the old folder is
// aside (tests inject failures there).
func replaceDir(tmp, dest, aside string, replace, sync bool, between func() error) error {
	parent := filepath.Dir(dest)
	syncParent := func() error {
		if sync {
			return syncDir(parent)
		}
		return nil
	}
	_, err := os.Lstat(dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Rename(tmp, dest); err != nil {
			return err
		}
		return syncParent()
	case err != nil:
		return err
	case !replace:
		return ErrExists
	}
	if _, err := os.Lstat(aside); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("set %s aside: %s is in the way", filepath.Base(dest), aside)
	}
	if err := os.Rename(dest, aside); err != nil {
		return err
	}
	if err := syncParent(); err != nil {
		return errors.Join(err, os.Rename(aside, dest))
	}
	if between != nil {
		if err := between(); err != nil {
			return errors.Join(err, os.Rename(aside, dest))
		}
	}
	if err := os.Rename(tmp, dest); err != nil {
		return errors.Join(err, os.Rename(aside, dest))
	}
	if err := syncParent(); err != nil {
		// The new folder is in place; only its durability is in doubt.
		return err
	}
	// The replacement is complete; a leftover aside is resolved by the
	// next recovery.
	os.RemoveAll(aside)
	return nil
}
