package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeAtomic replaces path with data so that a crash leaves either the
// old file or the new one: a temp file in the same folder (0600), fsync,
// rename, fsync of the folder. Missing folders are made 0700. Without
// overwrite, an existing path is an error wrapping fs.ErrExist.
func writeAtomic(path string, data []byte, overwrite bool) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if !overwrite {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("%s: %w (use --force to replace it)", path, fs.ErrExist)
		}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*") // CreateTemp makes it 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable. Some file systems cannot sync a
// folder; the rename has happened all the same, so that is no error.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
