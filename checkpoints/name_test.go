package checkpoints

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		name, why string // why "" = valid
	}{
		{"a", ""},
		{"My Chat (2)", ""},
		{"v1.2-final_b", ""},
		{"-starts-with-dash", ""},
		{"_private", ""},
		{"日本語のチャット", ""},
		{"emoji 👩‍💻 ok", ""}, // the zero-width joiner of an emoji sequence is fine
		{"colon: fine", ""},
		{strings.Repeat("x", MaxNameBytes), ""},
		{strings.Repeat("é", MaxNameBytes/2), ""},
		{"", "empty"},
		{strings.Repeat("x", MaxNameBytes+1), "bytes long"},
		{strings.Repeat("é", MaxNameBytes/2) + "x", "bytes long"},
		{".hidden", "starts with a dot"},
		{".", "starts with a dot"},
		{"..", "starts with a dot"},
		{"a..b", `contains ".."`},
		{"a/b", "path separator"},
		{`a\b`, "path separator"},
		{"/abs", "path separator"},
		{" lead", "space"},
		{"trail ", "space"},
		{"tab\there", "control"},
		{"nul\x00", "control"},
		{"line\nbreak", "control"},
		{"del\x7f", "control"},
		{"bidi\u202eevil", "control"},
		{"zero\u200bwidth", "control"},
		{"line\u2028sep", "control"},
		{"bad \xff utf8", "UTF-8"},
		{Autosave, "reserved"},
	} {
		err := CheckName(c.name)
		switch {
		case c.why == "" && err != nil:
			t.Errorf("%q: %v", c.name, err)
		case c.why != "" && (!errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), c.why)):
			t.Errorf("%q: %v, want a refusal saying %q", c.name, err, c.why)
		}
		if c.why == "" {
			f := folderName(c.name)
			if back, ok := nameOf(f); !ok || back != c.name {
				t.Errorf("%q → folder %q → %q, %v", c.name, f, back, ok)
			}
			if len(f) > 1+(8*MaxNameBytes+4)/5 || f != strings.ToLower(f) || strings.HasPrefix(f, ".") || strings.ContainsAny(f, `/\`) {
				t.Errorf("%q → unsafe folder %q", c.name, f)
			}
		}
	}
	if checkName(Autosave, true) != nil {
		t.Error("the store itself must accept the autosave name")
	}
}

func TestFolderNames(t *testing.T) {
	for name, folder := range map[string]string{
		"plain chat": "plain chat",
		"Chat":       "+inugc5a",
		"chat":       "chat",
		Autosave:     Autosave,
	} {
		if got := folderName(name); got != folder {
			t.Errorf("folderName(%q) = %q, want %q", name, got, folder)
		}
	}
	// Names differing only in case or Unicode normalisation get folders
	// that differ in more than case, so macOS keeps them apart.
	seen := map[string]string{}
	for _, n := range []string{"chat", "Chat", "CHAT", "caf\u00e9", "cafe\u0301", "Caf\u00e9"} {
		f := strings.ToLower(folderName(n))
		if other, dup := seen[f]; dup {
			t.Errorf("%q and %q share the folder %q", n, other, f)
		}
		seen[f] = n
	}
	for _, f := range []string{"Chat", "+", "+INUGC5A", "+inugc5b", "+inugc5a=", "+mzxw6", ".tmp-x", ".old-chat", "+fzrg", " x"} {
		// +mzxw6 is "foo", which is plain and so never encoded; +fzrg is ".b".
		if n, ok := nameOf(f); ok {
			t.Errorf("nameOf(%q) = %q, want no checkpoint", f, n)
		}
	}
}
