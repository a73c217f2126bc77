package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/orchard-llm/orchard/termsafe"
)

// Entry is one effective value and where it came from.
type Entry struct {
	Key    string
	Value  any // string, []string, int, int64, float64 or bool
	Source Source
}

// Entries lists every key in schema order, then the key bindings by
// action ("keys" alone when there are none), then the MCP servers' keys.
func (c *Config) Entries() []Entry {
	var out []Entry
	for _, s := range settings() {
		out = append(out, Entry{Key: s.key, Value: s.get(c), Source: c.Source(s.key)})
	}
	actions := make([]string, 0, len(c.Keys))
	for a := range c.Keys {
		actions = append(actions, a)
	}
	slices.Sort(actions)
	for _, a := range actions {
		k := keysKey + "." + a
		out = append(out, Entry{Key: k, Value: slices.Clone(c.Keys[a]), Source: c.Source(k)})
	}
	if len(actions) == 0 {
		out = append(out, Entry{Key: keysKey, Value: []string{}, Source: Source{}})
	}
	return append(out, c.mcpEntries()...)
}

// WriteText prints the config file and a table of key, value (as TOML
// would spell it) and source.
func (c *Config) WriteText(w io.Writer) error {
	state := "read"
	if !c.FileFound {
		state = "not found; defaults apply"
	}
	if _, err := fmt.Fprintf(w, "config file: %s (%s)\n\n", termsafe.Line(c.File), state); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, e := range c.Entries() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(e.Key), oneLine(tomlValue(e.Value), 60), termsafe.Line(e.Source.String()))
	}
	return tw.Flush()
}

// jsonEntry is an Entry as `config show --json` prints it.
type jsonEntry struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"` // as Source.String
	From   string `json:"from"`   // default, file, env or flag
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Name   string `json:"name,omitempty"` // variable or flag
}

// WriteJSON prints the file and every entry as one JSON object.
func (c *Config) WriteJSON(w io.Writer) error {
	doc := struct {
		File      string      `json:"file"`
		FileFound bool        `json:"file_found"`
		Values    []jsonEntry `json:"values"`
	}{File: c.File, FileFound: c.FileFound}
	for _, e := range c.Entries() {
		j := jsonEntry{Key: e.Key, Value: e.Value, Source: e.Source.String(), From: e.Source.Kind.String()}
		switch e.Source.Kind {
		case FromFile:
			j.File, j.Line = e.Source.Name, e.Source.Line
		case FromEnv, FromFlag:
			j.Name = e.Source.Name
		}
		doc.Values = append(doc.Values, j)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := w.Write(termsafe.JSON(buf.Bytes()))
	return err
}

// tomlValue spells v as a TOML value.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = tomlString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case float64:
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0" // keep it a TOML float
		}
		return s
	}
	return fmt.Sprint(v)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f || !termsafe.Safe(string(r)) {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// oneLine shortens s to n runes for the table.
func oneLine(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
