package checkpoints

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// smallDisk mounts a tmpfs of size bytes (a disk that fills up) on a new
// folder, or skips where mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a small file system here (%v)", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// A full disk fails a save with one sentence naming the store's folder and
// what to do, not one error per file (a save of 31 files listed all 31),
// and leaves the store as it was.
func TestSaveOnAFullDisk(t *testing.T) {
	disk := smallDisk(t, "256k")
	s, err := Open(filepath.Join(disk, "checkpoints"))
	if err != nil {
		t.Fatal(err)
	}
	old := r1Checkpoint("chat", e2bDims(2), 3, 1)
	if err := s.Save(old); err != nil {
		t.Fatal(err)
	}
	before := tree(t, s.Root())
	for _, name := range []string{"chat", "other"} {
		err := s.Save(r1Checkpoint(name, e2bDims(15), 64, 2)) // 1.2 MB in 31 files
		want := `save "` + name + `": the disk holding ` + s.Root() + ` is full: free some space there and try again (nothing was changed)`
		if err == nil || err.Error() != want {
			t.Fatalf("save: %v\nwant %s", err, want)
		}
		if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%v is not ErrDiskFull and ENOSPC", err)
		}
	}
	unchangedBy(t, "a failed save", s, before, old)

	// A corellm-chat directory (run --kv-save) says the same of its folder.
	err = WriteCoreLLM(filepath.Join(disk, "kv"), r1Checkpoint("x", e2bDims(15), 64, 2))
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "the disk holding "+disk+" is full") || strings.Contains(err.Error(), ".bin") {
		t.Errorf("WriteCoreLLM: %v", err)
	}
}

// A store orchard cannot write — a read-only disk, or a folder without
// write permission — and that has no lock file (copied, or restored from a
// backup) is listed and loaded; only writes fail.
func TestReadOnlyStoreWithoutLock(t *testing.T) {
	var root string
	if os.Geteuid() == 0 {
		root = filepath.Join(smallDisk(t, "4m"), "checkpoints")
	} else {
		root = filepath.Join(t.TempDir(), "checkpoints")
	}
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	a, b := r1Checkpoint("a", e2bDims(2), 3, 1), v2Checkpoint("b", 2, 1, 3, 1)
	for _, cp := range []*Checkpoint{a, b} {
		if err := s.Save(cp); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(root, lockFile))
	if os.Geteuid() == 0 {
		if err := syscall.Mount("", filepath.Dir(root), "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Skipf("cannot remount read-only: %v", err)
		}
	} else {
		os.Chmod(root, 0o500)
		t.Cleanup(func() { os.Chmod(root, 0o700) })
	}

	s, err = Open(root)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].Problem != "" || list[1].Problem != "" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	got, err := s.Load("a", a.Meta.Identity)
	if err != nil {
		t.Fatal(err)
	}
	sameCheckpoint(t, got, a)
	if err := s.Verify("b"); err != nil {
		t.Error(err)
	}
	if err := s.Save(r1Checkpoint("c", e2bDims(2), 3, 1)); err == nil {
		t.Error("saved into a read-only store")
	}
	if _, err := os.Lstat(filepath.Join(root, lockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lock file appeared: %v", err)
	}
}
