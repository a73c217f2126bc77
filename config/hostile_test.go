package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileTOML are config files that used to give errors that did not say
// what was wrong; each must now name the key. They seed FuzzConfigTOML.
var hostileTOML = []struct {
	name, file string
	is         error
	want       string
}{
	{"top_k past int32", "[sampling]\ntop_k = 3000000000\n", ErrInvalid,
		"config.toml:2: sampling.top_k: invalid value: 3000000000 is outside 0…2147483647"},
	{"unclosed table", "[sampling\ntop_k = 3\n", nil, "config.toml:1: sampling: expected ']' to close table name"},
	{"unterminated string", "[chat]\nsystem_prompt = \"abc\nthinking = true\n", nil,
		"config.toml:2: chat.system_prompt: basic strings cannot have new lines"},
	{"unterminated literal string", "[chat]\n\"system_prompt\" = 'x\n", nil, "config.toml:2: chat.system_prompt: literal strings"},
	{"seed past int64", "[sampling]\nseed = 99999999999999999999\n", nil,
		"config.toml:2: sampling.seed: decimal number is too large to fit in a 64-bit signed integer"},
	{"duplicate key", "[chat]\nthinking = true\nthinking = false\n", nil, "config.toml:3: chat.thinking: key thinking is already defined"},
	{"value missing", "[sampling]\ntop_k = \n", nil, "config.toml:2: sampling.top_k: unexpected character"},
	{"unterminated array", "[keys]\nquit = [\"a\",\n", nil, "config.toml:2: keys.quit: array is incomplete"},
	{"escape in a key", "[sampling]\n\"\\u001b]0;x\\u0007\" = 1\n", ErrUnknownKey, `config.toml:2: "sampling.\x1b]0;x\a": unknown key`},
	{"newline in a key", "\"\\n\" = 1\n", ErrUnknownKey, `config.toml:1: "\n": unknown key`},
	{"huge string for a number", "[sampling]\ntop_k = \"" + strings.Repeat("9", 100000) + "\"\n", ErrWrongType,
		`got the string "99999`},
}

func TestHostileConfigFiles(t *testing.T) {
	for _, c := range hostileTOML {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, c.file, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error\n  %v\nlacks\n  %s", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("%v holds no *Error", err)
			}
			if len(err.Error()) > 400 || strings.ContainsAny(err.Error(), "\x1b\x07") {
				t.Errorf("error of %d bytes, or with control characters: %q", len(err.Error()), err)
			}
		})
	}
}

// A UTF-8 byte order mark at the start of the file is skipped.
func TestConfigWithByteOrderMark(t *testing.T) {
	c, err := load(t, "\ufeff[chat]\nthinking = true\n", nil)
	if err != nil || !c.Chat.Thinking || c.Source("chat.thinking").Line != 2 {
		t.Fatalf("%v %+v", err, c)
	}
}

// --config and ORCHARD_CONFIG read regular files of at most a megabyte:
// /dev/zero, /dev/urandom, a FIFO and a huge file are refused at once.
func TestConfigFileBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	syscall.Mkfifo(fifo, 0o600)
	big := filepath.Join(dir, "big.toml")
	os.WriteFile(big, []byte("# "+strings.Repeat("x", MaxFileBytes)+"\n"), 0o600)
	for _, c := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: invalid value: the config file is a character device, not a regular file"},
		{"/dev/urandom", "the config file is a character device"},
		{fifo, "the config file is a named pipe (FIFO), not a regular file"},
		{big, "the config file is 1.0 MiB, more than the 1 MiB allowed"},
		{dir, "the config file is a folder"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := load(t, "", map[string]string{ConfigEnv: c.path})
			done <- err
		}()
		select {
		case err := <-done:
			var ce *Error
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ce) {
				t.Errorf("%s: %v, want %q", c.path, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Load blocked", c.path)
		}
	}
}

// bigTOML are config files the size of MaxFileBytes or less built to make a
// reader do more than linear work: the probe's 200,000-part dotted key
// (keyLines built every prefix: out of memory) and 60,000 unknown keys
// (26.6 s: go-toml checks each key against every one before it, and each
// line number was counted from the start of the file). Each makes one of
// about n bytes.
var bigTOML = []struct {
	name string
	make func(n int) []byte
	want string // in the error
}{
	{"dotted key", func(n int) []byte { return []byte(strings.Repeat("a.", n/2-1) + "a = 1\n") },
		"config.toml:1: invalid value: the file has more than 1000 keys"},
	{"unknown keys", func(n int) []byte {
		b := []byte("[sampling]\n")
		for i := 0; len(b) < n; i++ {
			b = fmt.Appendf(b, "k%d = 1\n", i)
		}
		return b
	}, "config.toml:1001: invalid value: the file has more than 1000 keys"},
	{"unknown tables", func(n int) []byte {
		var b []byte
		for i := 0; len(b) < n; i++ {
			b = fmt.Appendf(b, "[t%d]\n", i)
		}
		return b
	}, "config.toml:1001: invalid value"},
	{"array tables", func(n int) []byte { return []byte(strings.Repeat("[[a]]\n", n/6)) }, "config.toml:1001: invalid value"},
	{"inline tables in an array", func(n int) []byte { return []byte("a = [" + strings.Repeat("{b=1},", n/6) + "]\n") },
		"config.toml:1: invalid value: the file has more than 1000 keys"},
	{"long array", func(n int) []byte { return []byte("[sampling]\ntop_k = [" + strings.Repeat("1,", n/2) + "]\n") },
		"sampling.top_k: wrong type: want an integer, got an array"},
	{"empty arrays in an array", func(n int) []byte { return []byte("a = [" + strings.Repeat("[],", n/3) + "]\n") }, "config.toml:1: invalid value"},
	{"empty tables in an array", func(n int) []byte { return []byte("a = [\n" + strings.Repeat("{},\n", n/4) + "]\n") }, "config.toml:1001: invalid value"},
	{"long key", func(n int) []byte { return []byte("[sampling]\n\"" + strings.Repeat("k", n) + "\" = 1\n") },
		"unknown key"},
	{"long string", func(n int) []byte { return []byte("[chat]\nsystem_prompt = \"" + strings.Repeat("x", n) + "\"\n") }, ""},
	{"deep arrays", func(n int) []byte { return []byte("a = " + strings.Repeat("[", n/2) + strings.Repeat("]", n/2) + "\n") },
		"nested more than the maximum of 10000 levels deep"},
	{"deep inline tables", func(n int) []byte {
		return []byte("a = " + strings.Repeat("{b=", n/4) + "1" + strings.Repeat("}", n/4) + "\n")
	},
		"config.toml:1: "},
	{"blank lines", func(n int) []byte { return []byte(strings.Repeat("\n", n) + "[chat]\nthinking = true\n") }, ""},
}

// The config reader is linear in the file: every big file is read, or
// refused with one error naming the file and line, allocating at most
// what FuzzConfigTOML allows (maxTOMLAlloc); and its work does not grow
// faster than the file: a 16× larger file allocates no more than 32× as
// much (16× and the growth of go-toml's node arena, whose appends copy
// more of a large one; the dotted key allocated 256× and more).
// BenchmarkConfigReader shows the time.
func TestConfigReaderLinear(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }
	read := func(data []byte) (errs []error, alloc uint64) {
		c := defaults(env)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		errs = c.applyTOML(data, "/c/config.toml", pathCtx{home: "/home/u", base: "/c"}, nil)
		runtime.ReadMemStats(&after)
		return errs, after.TotalAlloc - before.TotalAlloc
	}
	for _, c := range bigTOML {
		t.Run(c.name, func(t *testing.T) {
			big := c.make(MaxFileBytes - 64)
			if len(big) > MaxFileBytes {
				t.Fatalf("the case makes %d bytes, over MaxFileBytes", len(big))
			}
			errs, alloc := read(big)
			if c.want == "" && len(errs) > 0 {
				t.Fatalf("refused: %v", errs)
			}
			if c.want != "" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
					t.Fatalf("%d errors, the first %.300v; want one with %q", len(errs), errors.Join(errs...), c.want)
				}
				if msg := errs[0].Error(); len(msg) > 400 {
					t.Errorf("error of %d bytes: %.300s", len(msg), msg)
				}
			}
			if limit := maxTOMLAlloc(len(big)); alloc > limit {
				t.Errorf("allocated %d bytes for %d, more than %d", alloc, len(big), limit)
			}
			_, small := read(c.make(len(big) / 16))
			if alloc > 32*small+1<<20 {
				t.Errorf("allocated %d bytes for %d, %d for a 16th of it: more than linear", alloc, len(big), small)
			}
		})
	}
}

// BenchmarkConfigReader reads each of bigTOML at 64 KiB and 1 MiB: ns/B
// (and B/B) staying flat from the small to the large file is the reader
// being linear. go test -run '^$' -bench ConfigReader ./config/
func BenchmarkConfigReader(b *testing.B) {
	env := func(string) string { return "" }
	for _, c := range bigTOML {
		for _, n := range []int{64 << 10, MaxFileBytes - 64} {
			data := c.make(n)
			b.Run(fmt.Sprintf("%s/%dKiB", strings.ReplaceAll(c.name, " ", "-"), n>>10), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					defaults(env).applyTOML(data, "/c/config.toml", pathCtx{base: "/c"}, nil)
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(data)), "ns/B")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(len(data)), "alloc-B/B")
			})
		}
	}
}

// The remembered choices (state.json) and the log are read and opened
// through regfile: a FIFO in their place is an error at once, not a chat
// that never starts.
func TestStateAndLogRefuseFIFOs(t *testing.T) {
	data := t.TempDir()
	c := &Config{Data: Data{Dir: data}}
	os.MkdirAll(filepath.Join(data, "logs"), 0o700)
	for _, p := range []string{c.StateFile(), filepath.Join(data, "logs", "orchard.log")} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip(err)
		}
	}
	done := make(chan error, 2)
	go func() { _, err := c.Remembered(); done <- err }()
	go func() { _, _, err := OpenLog(data, false); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "named pipe (FIFO), not a regular file") {
				t.Errorf("%v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("blocked on a FIFO")
		}
	}
	// Choosing a model replaces a state file that cannot be read.
	os.Remove(c.StateFile())
	if err := c.RememberModel("/m"); err != nil {
		t.Fatal(err)
	}
	if m, err := c.Remembered(); err != nil || m != "/m" {
		t.Errorf("remembered %q, %v", m, err)
	}
}
