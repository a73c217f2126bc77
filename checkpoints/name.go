package checkpoints

import (
	"encoding/base32"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Autosave is the reserved name the TUI's autosave writes through
// SaveAutosave. Save refuses it; Load, Delete and Rename (from it) accept it.
const Autosave = "_autosave"

// MaxNameBytes bounds a name's UTF-8 length so that its folder name (at
// most 1+⌈8·100/5⌉ = 161 bytes) fits every file system's 255-byte limit.
const MaxNameBytes = 100

// CheckName reports whether name may be used for a new checkpoint: 1 to
// MaxNameBytes bytes of UTF-8, no path separator (/ or \), no "..", no
// leading dot, no leading or trailing space, no control or invisible
// formatting character, and not the reserved Autosave.
func CheckName(name string) error { return checkName(name, false) }

func checkName(name string, allowAutosave bool) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidName, name, why) }
	switch {
	case name == "":
		return fmt.Errorf("%w: the name is empty", ErrInvalidName)
	case len(name) > MaxNameBytes:
		return bad(fmt.Sprintf("%d bytes long, at most %d", len(name), MaxNameBytes))
	case !utf8.ValidString(name):
		return bad("not valid UTF-8")
	case strings.HasPrefix(name, "."):
		return bad("starts with a dot")
	case strings.Contains(name, ".."):
		return bad(`contains ".."`)
	case strings.ContainsAny(name, `/\`):
		return bad("contains a path separator")
	case strings.TrimSpace(name) != name:
		return bad("starts or ends with a space")
	case name == Autosave && !allowAutosave:
		return bad("reserved for the autosave")
	}
	for _, r := range name {
		// Control and invisible formatting characters (bidi overrides and
		// the like) would let two different names look the same in a list.
		// The zero-width joiner stays: emoji sequences need it.
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) && r != '\u200d' {
			return bad(fmt.Sprintf("contains the control character %U", r))
		}
	}
	return nil
}

// Folder names. A name made only of [a-z0-9._-] and spaces is its own
// folder name. Any other valid name becomes "+" followed by the lowercase,
// unpadded base32 of its bytes. Both forms are lowercase ASCII, so the
// mapping is one-to-one even on case-insensitive, normalisation-insensitive
// file systems (macOS); "+" never appears in the plain form, and no
// checkpoint folder starts with "." (the store's own temp folders do).
const encodedPrefix = "+"

var folderEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func isPlain(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == ' ') {
			return false
		}
	}
	return true
}

// folderName maps a valid name to its folder.
func folderName(name string) string {
	if isPlain(name) {
		return name
	}
	return encodedPrefix + folderEncoding.EncodeToString([]byte(name))
}

// nameOf maps a folder back to its checkpoint name; ok is false for
// folders that are not a canonical encoding of a valid name.
func nameOf(folder string) (string, bool) {
	name := folder
	if rest, ok := strings.CutPrefix(folder, encodedPrefix); ok {
		b, err := folderEncoding.DecodeString(rest)
		if err != nil {
			return "", false
		}
		name = string(b)
	}
	if checkName(name, true) != nil || folderName(name) != folder {
		return "", false
	}
	return name, true
}

// normName puts a name in Unicode normal form C, so that "café" typed
// with a combining accent (as macOS file dialogs and some keyboards
// produce) and with a precomposed é are one checkpoint, not two that look
// the same. Invalid UTF-8 is left for checkName to refuse.
func normName(name string) string {
	if !utf8.ValidString(name) {
		return name
	}
	return norm.NFC.String(name)
}

// locate returns the folder of a normalised name: its own folder, or a
// folder written before names were normalised whose name has the same
// normal form. The caller holds the store lock.
func (s *Store) locate(name string) string {
	folder := folderName(name)
	if isASCII(name) {
		return folder
	}
	if _, err := os.Lstat(filepath.Join(s.root, folder)); err == nil {
		return folder
	}
	ents, err := os.ReadDir(s.root)
	if err != nil {
		return folder
	}
	for _, e := range ents {
		if n, ok := nameOf(e.Name()); ok && n != name && normName(n) == name {
			return e.Name()
		}
	}
	return folder
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
