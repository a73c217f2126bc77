package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/regfile"
)

// The places chat.tools.allow can be written on one line, by the table
// the line is in.
var (
	tableLine = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.\- ]+?)\s*\]\s*(#.*)?$`)
	allowLine = map[string]*regexp.Regexp{
		"":           regexp.MustCompile(`^\s*chat\s*\.\s*tools\s*\.\s*allow\s*=`),
		"chat":       regexp.MustCompile(`^\s*tools\s*\.\s*allow\s*=`),
		"chat.tools": regexp.MustCompile(`^\s*allow\s*=`),
	}
)

// AllowTool adds name ("server.tool") to chat.tools.allow in the config
// file at path (made if missing): the key's line is rewritten, or the
// key added to its table, every other line left as it is. The new file
// is read back before it replaces the old one, atomically (0600); a file
// where the key cannot be written so (an array over several lines) is
// left alone, with an error saying to add the name by hand.
func AllowTool(path, name string) error {
	if err := checkToolName(name); err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	old, err := regfile.ReadFile(path, MaxFileBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	c := defaults(func(string) string { return "" })
	if errs := c.applyTOML(old, path, pathCtx{base: filepath.Dir(path)}, nil); len(errs) > 0 {
		return fmt.Errorf("config file %s has errors; fix them first: %w", path, errors.Join(errs...))
	}
	allow := c.Chat.Tools.Allow
	if slices.Contains(allow, name) {
		return nil
	}
	allow = append(slices.Clone(allow), name)
	data := withAllow(old, allow)
	back := defaults(func(string) string { return "" })
	if errs := back.applyTOML(data, path, pathCtx{base: filepath.Dir(path)}, nil); len(errs) > 0 || !slices.Equal(back.Chat.Tools.Allow, allow) {
		return fmt.Errorf("config file %s: chat.tools.allow cannot be written on one line there; add %q to it by hand", path, name)
	}
	if len(old) == 0 {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("config file %s: %w", path, err)
		}
	}
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	return nil
}

// withAllow is the file with chat.tools.allow set to allow.
func withAllow(old []byte, allow []string) []byte {
	quoted := make([]string, len(allow))
	for i, a := range allow {
		quoted[i] = tomlString(a)
	}
	list := "[" + strings.Join(quoted, ", ") + "]"
	lines := strings.Split(string(old), "\n")
	table, headers := "", map[string]int{}
	for i, l := range lines {
		if m := tableLine.FindStringSubmatch(l); m != nil {
			table = strings.ReplaceAll(m[1], " ", "")
			headers[table] = i
			continue
		}
		if re, ok := allowLine[table]; ok && re.MatchString(l) {
			key := strings.TrimSpace(l[:strings.Index(l, "=")])
			lines[i] = key + " = " + list
			return []byte(strings.Join(lines, "\n"))
		}
	}
	insert := func(at int, line string) []byte {
		lines = slices.Insert(lines, at+1, line)
		return []byte(strings.Join(lines, "\n"))
	}
	if i, ok := headers["chat.tools"]; ok {
		return insert(i, "allow = "+list)
	}
	if i, ok := headers["chat"]; ok {
		return insert(i, "tools.allow = "+list)
	}
	table = "[chat.tools]\nallow = " + list + "\n"
	if len(bytes.TrimSpace(old)) == 0 {
		return []byte(table)
	}
	return append(append(bytes.TrimRight(old, "\n"), "\n\n"...), table...)
}
