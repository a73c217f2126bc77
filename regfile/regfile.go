// Package regfile opens files that must be regular files. A named pipe, a
// device or a folder in a file's place is an error at once: opening a
// FIFO for reading would block until a writer came (while the caller
// holds a lock, say), and /dev/zero would never end.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped when the path is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped when a file is larger than the caller allows.
var ErrTooLarge = errors.New("too large")

// Open opens path for reading if it is a regular file (symbolic links are
// followed). The open itself cannot block: it does not wait for a FIFO's
// writer.
func Open(path string) (*os.File, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	return regular(f, path)
}

// regular returns f if it is a regular file, else closes it and says what
// it is.
func regular(f *os.File, path string) (*os.File, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: notRegular(st.Mode())}
	}
	return f, nil
}

// OpenAppend opens path for appending, creating it with perm, if it is or
// becomes a regular file: a log in a FIFO's place would block the open
// until a reader came, and one on a device would write who knows where.
func OpenAppend(path string, perm fs.FileMode) (*os.File, error) {
	f, err := openAppendNonBlocking(path, perm)
	if err != nil {
		// A FIFO without a reader fails the non-blocking open; say what it is.
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return nil, &fs.PathError{Op: "open", Path: path, Err: notRegular(st.Mode())}
		}
		return nil, err
	}
	return regular(f, path)
}

// kindError names what a non-regular file is.
type kindError struct{ kind string }

func (e kindError) Error() string { return "is " + e.kind + ", not a regular file" }
func (e kindError) Unwrap() error { return ErrNotRegular }

func notRegular(m fs.FileMode) error {
	kind := "a special file"
	switch {
	case m.IsDir():
		kind = "a folder"
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return kindError{kind}
}

// ReadFile reads a regular file of at most limit bytes. A larger file is
// an error wrapping ErrTooLarge that names the limit, read no further.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, limit)
}

// ReadAll reads an open file of at most limit bytes; path is for errors.
func ReadAll(f *os.File, path string, limit int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLarge(st.Size(), limit)}
	}
	// The size may change while we read; never read past limit+1.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLarge(int64(len(data)), limit)}
	}
	return data, nil
}

type sizeError struct{ size, limit int64 }

func (e sizeError) Error() string {
	return fmt.Sprintf("is %s, more than the %s allowed", Size(e.size), Size(e.limit))
}
func (e sizeError) Unwrap() error { return ErrTooLarge }

func tooLarge(size, limit int64) error { return sizeError{size, limit} }

// Size prints a byte count for messages: "1 MiB", "64 MiB", "1.5 GiB", "812 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Reason is err's message without the operation and path of an
// *fs.PathError ("is a named pipe (FIFO), not a regular file"), for
// callers whose message names the file already.
func Reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(err, fs.ErrNotExist) {
			return "missing"
		}
		return pe.Err.Error()
	}
	return err.Error()
}
