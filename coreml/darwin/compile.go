package darwin

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchard-llm/orchard/coreml"
)

// CompiledPath is where the compiled twin of a .mlpackage or .mlmodel is
// cached: beside it, with the extension .mlmodelc. A path that already
// names a .mlmodelc is returned unchanged.
func CompiledPath(src string) string {
	src = filepath.Clean(src)
	ext := filepath.Ext(src)
	switch strings.ToLower(ext) {
	case ".mlpackage", ".mlmodel":
		return strings.TrimSuffix(src, ext) + ".mlmodelc"
	}
	return src
}

// CompileModel returns the compiled .mlmodelc for src, a .mlpackage or
// .mlmodel, compiling it with Core ML (MLModel compileModelAtURL:) when
// the cached twin at CompiledPath(src) does not exist yet. progress, if not
// nil, receives one-line messages for the user; compiling a chunk takes a
// while and happens once. Off macOS only an existing twin can be returned.
func CompileModel(src string, progress func(msg string)) (string, error) {
	dst := CompiledPath(src)
	if dst == filepath.Clean(src) {
		return dst, nil
	}
	if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
		return dst, nil
	}
	if _, err := os.Stat(src); err != nil {
		return "", &coreml.Error{Op: "compile", Path: src, Err: err}
	}
	say := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	say("compiling %s for this Mac (first run only)", filepath.Base(src))
	start := time.Now()
	tmp, err := compileToTemp(src)
	if err != nil {
		return "", err
	}
	if err := installCompiled(tmp, dst); err != nil {
		return "", &coreml.Error{Op: "compile", Path: src, Err: err}
	}
	say("compiled %s in %s", filepath.Base(dst), time.Since(start).Round(100*time.Millisecond))
	return dst, nil
}

// installCompiled moves the compiled model Core ML left in a temporary
// directory to dst. It renames when it can and copies otherwise (the
// temporary directory is often on another volume), publishing dst only
// once it is complete.
func installCompiled(tmp, dst string) error {
	if err := os.Rename(tmp, dst); err == nil {
		return nil
	}
	partial := dst + ".partial"
	if err := os.RemoveAll(partial); err != nil {
		return err
	}
	if err := copyTree(partial, tmp); err != nil {
		os.RemoveAll(partial)
		return fmt.Errorf("copying compiled model to %s: %w", dst, err)
	}
	if err := os.Rename(partial, dst); err != nil {
		os.RemoveAll(partial)
		return err
	}
	return os.RemoveAll(tmp)
}

// copyTree copies the directory tree src to dst, which must not exist.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case info.Mode().IsRegular():
			return copyFile(target, path, info.Mode().Perm())
		}
		return fmt.Errorf("%s: not a regular file or directory", path)
	})
}

func copyFile(dst, src string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
