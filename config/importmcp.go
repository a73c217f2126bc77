package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/regfile"
	"github.com/orchard-llm/orchard/termsafe"
)

// ImportedServer is one server of an mcpServers document, as orchard
// will keep it.
type ImportedServer struct {
	Name   string // its [mcp.servers.NAME]
	From   string // its name in the document, when that had to change
	Server MCPServer
	Notes  []string // what was changed or left out
	Skip   string   // why it cannot be imported; "" when it can
}

// mcpEntry is a server as Claude Desktop, Claude Code (.mcp.json), Cursor
// and VS Code ("servers") write it.
type mcpEntry struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Disabled bool              `json:"disabled"`
}

// ParseMCPServers reads a document with an "mcpServers" (or "servers")
// object, as Claude Desktop's claude_desktop_config.json has, and returns
// its servers in name order. Names orchard cannot use are changed; a
// server orchard cannot reach (an SSE-only one, one with neither command
// nor url) comes back with Skip set.
func ParseMCPServers(data []byte) ([]ImportedServer, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	raw, ok := doc["mcpServers"]
	if !ok {
		raw, ok = doc["servers"]
	}
	if !ok {
		return nil, errors.New(`no "mcpServers" object in it`)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("mcpServers: %w", err)
	}
	// Names orchard can use keep them; the others take what is left.
	taken := map[string]bool{}
	for from := range entries {
		taken[from] = ValidServerName(from)
	}
	var out []ImportedServer
	for _, from := range slices.Sorted(maps.Keys(entries)) {
		name := from
		if !ValidServerName(from) {
			name = serverName(from, taken)
		}
		out = append(out, importOne(name, from, entries[from]))
	}
	return out, nil
}

func importOne(name, from string, raw json.RawMessage) ImportedServer {
	im := ImportedServer{Name: name}
	if name != from {
		im.From = from
		im.Notes = append(im.Notes, fmt.Sprintf("named %s (a name holds letters, digits, - and _)", name))
	}
	var e mcpEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		im.Skip = "not a server object: " + err.Error()
		return im
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields)
	var left []string
	for k := range fields {
		switch k {
		case "type", "command", "args", "env", "url", "headers", "disabled":
		default:
			left = append(left, k)
		}
	}
	if len(left) > 0 {
		slices.Sort(left)
		im.Notes = append(im.Notes, "left out "+strings.Join(left, ", "))
	}
	switch strings.ToLower(e.Type) {
	case "", "stdio", "http", "streamable-http", "streamablehttp", "streamable_http":
	case "sse":
		im.Skip = "it speaks the older SSE transport; orchard speaks streamable HTTP (the server may offer it at another URL, often …/mcp)"
		return im
	default:
		im.Skip = "unknown type " + termsafe.Quote(e.Type)
		return im
	}
	im.Server = MCPServer{Command: e.Command, Args: e.Args, Env: e.Env, URL: e.URL, Headers: e.Headers, Enabled: !e.Disabled}
	if err := im.Server.check(); err != nil {
		im.Skip = strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")
		return im
	}
	for _, m := range []map[string]string{e.Env, e.Headers} {
		for _, v := range m {
			if strings.Contains(v, "${") {
				im.Notes = append(im.Notes, "values are copied as written: orchard does not expand ${VARIABLES}")
				return im
			}
		}
	}
	return im
}

// serverName makes a document's name a server name, unique among taken.
func serverName(from string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range from {
		if bareRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > MaxServerName-4 {
		name = name[:MaxServerName-4]
	}
	if name == "" {
		name = "server"
	}
	base := name
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	taken[name] = true
	return name
}

// AddMCPServers appends the importable servers to the config file at
// path (made if missing), leaving every line already there as it is. A
// server whose name the file already has is not added. The new file is
// read back before it replaces the old one, atomically; its mode stays
// 0600. It returns the names added and, for the others, why not.
func AddMCPServers(path string, servers []ImportedServer, source string) (added []string, kept map[string]string, err error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a linked config file (dotfiles) stays linked
	}
	old, err := regfile.ReadFile(path, MaxFileBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("config file %s: %w", path, err)
	}
	var doc map[string]any
	if err := toml.Unmarshal(old, &doc); err != nil {
		return nil, nil, fmt.Errorf("config file %s does not read as TOML (%v): fix it first", path, err)
	}
	have := existingServers(doc)
	kept = map[string]string{}
	var add bytes.Buffer
	fmt.Fprintf(&add, "\n# MCP servers imported from %s by orchard config import-mcp.\n", tomlString(source))
	for _, im := range servers {
		switch {
		case im.Skip != "":
			kept[im.Name] = im.Skip
		case have[im.Name]:
			kept[im.Name] = "the config file already has [mcp.servers." + im.Name + "] (left as it is)"
		default:
			writeServerTOML(&add, im.Name, im.Server)
			added = append(added, im.Name)
		}
	}
	if len(added) == 0 {
		return nil, kept, nil
	}
	data := append(bytes.TrimRight(old, "\n"), '\n')
	if len(old) == 0 {
		data = nil
	}
	data = append(data, add.Bytes()...)
	if err := checkImported(data, path, servers, added); err != nil {
		return nil, nil, err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return nil, nil, fmt.Errorf("config file: %w", err)
	}
	return added, kept, nil
}

// existingServers names the [mcp.servers.NAME] tables of a decoded file.
func existingServers(doc map[string]any) map[string]bool {
	have := map[string]bool{}
	if m, ok := doc[mcpKey].(map[string]any); ok {
		if s, ok := m["servers"].(map[string]any); ok {
			for name := range s {
				have[name] = true
			}
		}
	}
	return have
}

// checkImported reads the new file as orchard will: it must decode, and
// the added servers must come back as they went in.
func checkImported(data []byte, path string, servers []ImportedServer, added []string) error {
	c := defaults(func(string) string { return "" })
	var mcpErrs []error
	for _, err := range c.applyTOML(data, path, pathCtx{base: filepath.Dir(path)}, nil) {
		var ce *Error
		if !errors.As(err, &ce) || strings.HasPrefix(ce.Key, mcpKey) || ce.Key == "" {
			mcpErrs = append(mcpErrs, err)
		}
	}
	if len(mcpErrs) > 0 {
		return fmt.Errorf("the servers cannot be added to %s as it is (add them by hand): %w", path, errors.Join(mcpErrs...))
	}
	for _, im := range servers {
		if !slices.Contains(added, im.Name) {
			continue
		}
		got, want := c.MCP.Servers[im.Name], im.Server
		want.Command = expandCommand(want.Command, pathCtx{base: filepath.Dir(path)})
		if !reflect.DeepEqual(normalServer(got), normalServer(want)) {
			return fmt.Errorf("the server %s does not read back from %s as imported: the file's other tables are in the way (add it by hand)", im.Name, path)
		}
	}
	return nil
}

// normalServer treats an empty list or table as none.
func normalServer(s MCPServer) MCPServer {
	if len(s.Args) == 0 {
		s.Args = nil
	}
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Headers) == 0 {
		s.Headers = nil
	}
	return s
}

// writeServerTOML writes one [mcp.servers.NAME] table.
func writeServerTOML(b *bytes.Buffer, name string, s MCPServer) {
	fmt.Fprintf(b, "\n[%s.servers.%s]\n", mcpKey, name)
	if s.Command != "" {
		fmt.Fprintf(b, "command = %s\n", tomlString(s.Command))
		if len(s.Args) > 0 {
			fmt.Fprintf(b, "args = %s\n", tomlValue(s.Args))
		}
		if len(s.Env) > 0 {
			fmt.Fprintf(b, "env = %s\n", inlineTable(s.Env))
		}
	} else {
		fmt.Fprintf(b, "url = %s\n", tomlString(s.URL))
		if len(s.Headers) > 0 {
			fmt.Fprintf(b, "headers = %s\n", inlineTable(s.Headers))
		}
	}
	if !s.Enabled {
		b.WriteString("enabled = false\n")
	}
}

// inlineTable writes { KEY = "value", … } in key order.
func inlineTable(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := k
		if !isBare(k) {
			key = tomlString(k)
		}
		parts = append(parts, key+" = "+tomlString(m[k]))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// ClaudeDesktopFile is where Claude Desktop keeps its configuration on
// goos: ~/Library/Application Support/Claude/claude_desktop_config.json on
// macOS, $XDG_CONFIG_HOME/Claude/claude_desktop_config.json elsewhere.
func ClaudeDesktopFile(env func(string) string, goos string) (string, error) {
	if goos == "darwin" {
		h, err := home(env)
		if err != nil {
			return "", err
		}
		return filepath.Join(h, "Library", "Application Support", "Claude", "claude_desktop_config.json"), nil
	}
	d, err := xdgHome(env, "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "Claude", "claude_desktop_config.json"), nil
}

// ReadMCPFile reads an mcpServers document from a file.
func ReadMCPFile(path string) ([]ImportedServer, error) {
	data, err := regfile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	servers, err := ParseMCPServers(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return servers, nil
}
