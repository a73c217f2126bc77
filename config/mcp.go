package config

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

// mcpKey is the [mcp.servers.NAME] tables; like [keys], their names are
// the user's, so they are not settings of the schema.
const mcpKey = "mcp"

// MCP holds the MCP servers whose tools the chat may offer the model.
type MCP struct {
	Servers map[string]MCPServer
}

// MCPServer is one [mcp.servers.NAME] table: a Command run with Args and
// Env that speaks MCP over its stdin and stdout, or a URL reached by
// streamable HTTP with Headers. Its fields are mcpclient.Server's.
type MCPServer struct {
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	Enabled bool
}

// mcpFields are a server table's keys, in the order show lists them.
var mcpFields = []string{"command", "args", "env", "url", "headers", "enabled"}

// MaxServerName bounds a server's name.
const MaxServerName = 64

// ValidServerName accepts 1…MaxServerName letters, digits, '-' and '_':
// a server's name is the first part of the tools' names ("server.tool"),
// so it holds no dot.
func ValidServerName(name string) bool {
	return len(name) <= MaxServerName && isBare(name)
}

// isBare reports whether s is a TOML bare key: letters, digits, - and _
// (an action's name, a server's).
func isBare(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !bareRune(r) {
			return false
		}
	}
	return true
}

func bareRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// applyMCP reads the [mcp] table: servers = { NAME = { … } }.
func (c *Config) applyMCP(table map[string]any, at func(string) Source, order func(map[string]any, string) []string, pc pathCtx) []error {
	var errs []error
	for _, k := range order(table, mcpKey+".") {
		key := mcpKey + "." + k
		if k != "servers" {
			errs = append(errs, &Error{Key: key, Source: at(key), Err: fmt.Errorf("%w (the table is [mcp.servers.NAME])", ErrUnknownKey)})
			continue
		}
		servers, ok := table[k].(map[string]any)
		if !ok {
			errs = append(errs, &Error{Key: key, Source: at(key), Err: wrongType("tables [mcp.servers.NAME]", table[k])})
			continue
		}
		for _, name := range order(servers, key+".") {
			skey := key + "." + name
			if !ValidServerName(name) {
				errs = append(errs, &Error{Key: skey, Source: at(skey),
					Err: invalid("%s is not a server name (1…%d letters, digits, - and _)", termsafe.Quote(name), MaxServerName)})
				continue
			}
			fields, ok := servers[name].(map[string]any)
			if !ok {
				errs = append(errs, &Error{Key: skey, Source: at(skey), Err: wrongType("a table [mcp.servers."+name+"]", servers[name])})
				continue
			}
			s, ferrs := mcpServerFromTOML(skey, fields, at, order, pc)
			if len(ferrs) > 0 {
				errs = append(errs, ferrs...)
				continue
			}
			c.MCP.Servers[name] = s
			c.sources[skey] = at(skey)
		}
	}
	return errs
}

// mcpServerFromTOML reads one server's table.
func mcpServerFromTOML(skey string, fields map[string]any, at func(string) Source, order func(map[string]any, string) []string, pc pathCtx) (MCPServer, []error) {
	s := MCPServer{Enabled: true}
	var errs []error
	fail := func(key string, err error) { errs = append(errs, &Error{Key: key, Source: at(key), Err: err}) }
	for _, f := range order(fields, skey+".") {
		key := skey + "." + f
		v := fields[f]
		var err error
		switch f {
		case "command":
			if s.Command, err = asString(v); err == nil {
				s.Command = expandCommand(s.Command, pc)
			}
		case "args":
			s.Args, err = stringArray(v)
		case "env":
			s.Env, err = stringTable(v, validEnvName)
		case "url":
			s.URL, err = asString(v)
		case "headers":
			s.Headers, err = stringTable(v, validHeaderName)
		case "enabled":
			s.Enabled, err = asBool(v)
		default:
			err = ErrUnknownKey
			if best := Nearest(f, mcpFields); best != "" {
				err = fmt.Errorf("%w (did you mean %s?)", ErrUnknownKey, best)
			}
		}
		if err != nil {
			fail(key, err)
		}
	}
	if len(errs) > 0 {
		return s, errs
	}
	if err := s.check(); err != nil {
		fail(skey, err)
	}
	return s, errs
}

// check applies the rules across a server's keys.
func (s MCPServer) check() error {
	switch {
	case s.Command != "" && s.URL != "":
		return invalid("both command and url are set: a server is run (command) or reached (url)")
	case s.Command == "" && s.URL == "":
		return invalid("neither command nor url is set")
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid("url %s: want http:// or https:// and a host", termsafe.Quote(s.URL))
		}
		if len(s.Args) > 0 || len(s.Env) > 0 {
			return invalid("args and env are for a command; a url server takes headers")
		}
	case len(s.Headers) > 0:
		return invalid("headers are for a url; a command server takes env")
	}
	for k, v := range s.Headers {
		if strings.ContainsAny(v, "\r\n") {
			return invalid("header %s: a value holds a line break", termsafe.Quote(k))
		}
	}
	return nil
}

// expandCommand expands a command given as a path (~/bin/server,
// ./server relative to the config file); a bare name is looked up in
// PATH when the server starts.
func expandCommand(cmd string, pc pathCtx) string {
	if cmd == "~" || strings.HasPrefix(cmd, "~/") || strings.ContainsRune(cmd, '/') {
		return expandPath(cmd, pc.home, pc.base)
	}
	return cmd
}

func stringArray(v any) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, wrongType("an array of strings", v)
	}
	out := make([]string, 0, len(a))
	for _, e := range a {
		s, ok := e.(string)
		if !ok {
			return nil, wrongType("an array of strings", e)
		}
		out = append(out, s)
	}
	return out, nil
}

// stringTable reads { NAME = "value", … } with names valid says.
func stringTable(v any, valid func(string) bool) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType("a table of strings such as { NAME = \"value\" }", v)
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		if !valid(k) {
			return nil, invalid("%s is not a valid name here", termsafe.Quote(k))
		}
		s, ok := e.(string)
		if !ok {
			return nil, wrongType("a string for "+termsafe.Quote(k), e)
		}
		out[k] = s
	}
	return out, nil
}

func validEnvName(k string) bool { return k != "" && !strings.ContainsAny(k, "=\x00") }

// validHeaderName accepts an HTTP field name (RFC 9110's token).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// mcpEntries lists the servers for show, values of env and headers not
// shown (they hold keys).
func (c *Config) mcpEntries() []Entry {
	var out []Entry
	for _, name := range slices.Sorted(maps.Keys(c.MCP.Servers)) {
		s := c.MCP.Servers[name]
		key := mcpKey + ".servers." + name
		src := c.Source(key)
		add := func(f string, v any) { out = append(out, Entry{Key: key + "." + f, Value: v, Source: src}) }
		if s.Command != "" {
			add("command", s.Command)
			add("args", slices.Clone(s.Args))
			add("env", hidden(s.Env))
		} else {
			add("url", s.URL)
			add("headers", hidden(s.Headers))
		}
		add("enabled", s.Enabled)
	}
	return out
}

// hidden names a table's entries without their values.
func hidden(m map[string]string) []string {
	out := []string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"=(set, not shown)")
	}
	return out
}

// toolNameSetting holds "server.tool" names (or "server.*", every tool of
// a server): an array in the file, a comma-separated list in a variable,
// one name per use of its (repeatable) flag.
func toolNameSetting(key, flag, doc string, field func(*Config) *[]string) setting {
	return setting{key: key, flag: flag, doc: doc, list: true,
		set: func(c *Config, v any, _ pathCtx) error {
			var names []string
			switch v := v.(type) {
			case text:
				names = strings.FieldsFunc(string(v), func(r rune) bool { return r == ',' || r == filepath.ListSeparator })
			default:
				var err error
				if names, err = stringArray(v); err != nil {
					return err
				}
			}
			out := make([]string, 0, len(names))
			for _, n := range names {
				n = strings.TrimSpace(n)
				if err := checkToolName(n); err != nil {
					return err
				}
				out = append(out, n)
			}
			*field(c) = out
			return nil
		},
		get: func(c *Config) any { return slices.Clone(*field(c)) },
	}
}

// checkToolName accepts "server.tool" and "server.*".
func checkToolName(n string) error {
	server, tool, ok := strings.Cut(n, ".")
	if !ok || !ValidServerName(server) || tool == "" {
		return invalid("%s: want server.tool (or server.* for all its tools)", termsafe.Quote(n))
	}
	if tool == "*" {
		return nil
	}
	for _, r := range tool {
		if !bareRune(r) && r != '.' {
			return invalid("%s: a tool's name holds letters, digits, -, _ and .", termsafe.Quote(n))
		}
	}
	return nil
}
