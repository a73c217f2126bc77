package config

import (
	"errors"
	"os"
	"path/filepath"
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
