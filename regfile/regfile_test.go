package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("hello"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	for _, c := range []struct {
		path, want string
	}{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{dir, "is a folder, not a regular file"},
		{"/dev/null", "is a character device, not a regular file"},
		{filepath.Join(dir, "absent"), "missing"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(c.path, 100); done <- err }()
		select {
		case err := <-done:
			if err == nil || Reason(err) != c.want {
				t.Errorf("%s: %v (reason %q), want %q", c.path, err, Reason(err), c.want)
			}
			if c.want != "missing" && !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s: %v does not wrap ErrNotRegular", c.path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadFile blocked", c.path)
		}
	}
	for _, p := range []string{file, link} {
		data, err := ReadFile(p, 5)
		if err != nil || string(data) != "hello" {
			t.Errorf("%s: %q, %v", p, data, err)
		}
	}
}

func TestReadFileLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	os.WriteFile(p, []byte(strings.Repeat("x", 2<<20+1)), 0o600)
	_, err := ReadFile(p, 1<<20)
	if !errors.Is(err, ErrTooLarge) || Reason(err) != "is 2.0 MiB, more than the 1 MiB allowed" {
		t.Fatalf("err = %v (%q)", err, Reason(err))
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != p {
		t.Fatalf("error does not name the file: %v", err)
	}
}

// OpenAppend (logs) creates and appends to regular files, and refuses a
// FIFO (whose open would wait for a reader), a device and a folder at once.
func TestOpenAppend(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{dir, "is a folder, not a regular file"},
		{"/dev/null", "is a character device, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() {
			f, err := OpenAppend(c.path, 0o600)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || Reason(err) != c.want {
				t.Errorf("%s: %v, want %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: OpenAppend blocked", c.path)
		}
	}
	p := filepath.Join(dir, "log")
	for _, s := range []string{"a", "b"} {
		f, err := OpenAppend(p, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	if data, _ := os.ReadFile(p); string(data) != "ab" {
		t.Errorf("appended %q", data)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}
