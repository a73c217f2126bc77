package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAllowTool: a tool allowed "always" joins chat.tools.allow wherever
// the file has it (its line rewritten, or the key added to its table, or
// a table appended), the other lines stay, and the file reads back.
func TestAllowTool(t *testing.T) {
	for name, c := range map[string]struct{ in, want string }{
		"missing file":    {"", "[chat.tools]\nallow = [\"w.get\"]\n"},
		"no chat table":   {"[model]\npath = \"/m\"\n", "[model]\npath = \"/m\"\n\n[chat.tools]\nallow = [\"w.get\"]\n"},
		"chat table":      {"[chat]\ncontext_full = \"stop\"\n", "[chat]\ntools.allow = [\"w.get\"]\ncontext_full = \"stop\"\n"},
		"tools table":     {"# mine\n[chat.tools]\nmax_calls = 3\n", "# mine\n[chat.tools]\nallow = [\"w.get\"]\nmax_calls = 3\n"},
		"line rewritten":  {"[chat.tools]\nallow = [\"a.b\"] # kept\n", "[chat.tools]\nallow = [\"a.b\", \"w.get\"]\n"},
		"already allowed": {"[chat.tools]\nallow = [\"w.*\", \"w.get\"]\n", "[chat.tools]\nallow = [\"w.*\", \"w.get\"]\n"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "orchard", "config.toml")
			if c.in != "" {
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, []byte(c.in), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := AllowTool(path, "w.get"); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != c.want {
				t.Fatalf("file %q (%v), want %q", got, err, c.want)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v", st.Mode())
			}
		})
	}
	// An array over several lines is not rewritten by guess.
	path := filepath.Join(t.TempDir(), "config.toml")
	in := "[chat.tools]\nallow = [\n  \"a.b\",\n]\n"
	os.WriteFile(path, []byte(in), 0o600)
	if err := AllowTool(path, "w.get"); err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Fatalf("multi-line array: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != in {
		t.Fatalf("file changed: %q", got)
	}
	if err := AllowTool(path, "no dot"); err == nil {
		t.Fatal("a bad name was written")
	}
}
