package config

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Template returns a config file listing every key, commented out, with
// its default value, its variable and its flag. Uncommenting a line keeps
// the default, so the file is a safe place to start editing.
func Template(env func(string) string) []byte {
	if env == nil {
		env = func(string) string { return "" }
	}
	c := defaults(env)
	homeDir, _ := home(env)
	c.Data.Dir = tildePath(c.Data.Dir, homeDir)
	byKey := map[string][]string{}
	for _, a := range aliases() {
		byKey[a.key] = append(byKey[a.key], a.name)
	}

	var b bytes.Buffer
	b.WriteString(`# orchard configuration.
#
# Every key is listed with its default value, commented out: delete the
# "# " before a key to set it. Precedence, lowest first: the defaults, this
# file, environment variables, command-line flags; each key names its
# variable and flag. "orchard config show" prints the effective values and
# where each came from. ~ is your home folder; relative paths are relative
# to this file's folder.
`)
	section := ""
	for _, s := range settings() {
		sec, name, _ := strings.Cut(s.key, ".")
		if sec != section {
			section = sec
			fmt.Fprintf(&b, "\n[%s]\n", sec)
		}
		b.WriteByte('\n')
		for _, l := range wrap(sentence(s.doc)+".", 74) {
			fmt.Fprintf(&b, "# %s\n", l)
		}
		fmt.Fprintf(&b, "# env %s", envName(s.key))
		for _, a := range byKey[s.key] {
			fmt.Fprintf(&b, " (or %s)", a)
		}
		fmt.Fprintf(&b, ", flag --%s\n", s.flag)
		fmt.Fprintf(&b, "# %s = %s\n", name, tomlValue(s.get(c)))
	}
	fmt.Fprintf(&b, `
[%s]

# Key-binding overrides: action = "key" or ["key", ...], replacing that
# action's default keys. The actions and their defaults are the chat
# screen's; the README lists them.
# env %s="quit=ctrl+c,ctrl+q;help=?", flag --key quit=ctrl+c,ctrl+q
# quit = ["ctrl+c", "ctrl+q"]

# MCP servers whose tools the chat may offer the model: one table each,
# a command that speaks MCP over stdin and stdout, or a url reached by
# streamable HTTP. "orchard config import-mcp FILE" adds the mcpServers of
# a Claude Desktop config. For example:
#
# [mcp.servers.files]
#   command = "npx"
#   args = ["-y", "@modelcontextprotocol/server-filesystem", "~/notes"]
#   env = { }
#   enabled = true
#
# [mcp.servers.search]
#   url = "https://mcp.example.com/mcp"
#   headers = { Authorization = "Bearer KEY" }
`, keysKey, envName(keysKey))
	return b.Bytes()
}

// sentence capitalises the first letter of a doc line.
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// wrap breaks s into lines of at most width bytes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// WriteTemplate writes Template to path (0600, its folder 0700) atomically.
// It refuses to replace an existing file unless force is set.
func WriteTemplate(path string, env func(string) string, force bool) error {
	if err := writeAtomic(path, Template(env), force); err != nil {
		return fmt.Errorf("config init: %w", err)
	}
	return nil
}
