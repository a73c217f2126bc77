package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const mcpFile = `[chat.tools]
allow = ["files.read_file", "search.*"]
max_calls = 3

[mcp.servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/notes"]
env = { NODE_OPTIONS = "--max-old-space-size=256", TOKEN = "s3cret" }

[mcp.servers.search]
url = "https://mcp.example.com/mcp"
headers = { Authorization = "Bearer k3y" }

[mcp.servers.local]
command = "~/bin/weather-mcp"
enabled = false
`

func TestMCPServers(t *testing.T) {
	c, err := load(t, mcpFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Chat.Tools; !reflect.DeepEqual(got, Tools{Allow: []string{"files.read_file", "search.*"}, MaxCalls: 3}) {
		t.Errorf("chat.tools = %+v", got)
	}
	home := strings.TrimSuffix(c.File, "/.config/orchard/config.toml")
	want := map[string]MCPServer{
		"files": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/notes"},
			Env: map[string]string{"NODE_OPTIONS": "--max-old-space-size=256", "TOKEN": "s3cret"}, Enabled: true},
		"search": {URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer k3y"}, Enabled: true},
		"local":  {Command: home + "/bin/weather-mcp", Enabled: false},
	}
	if !reflect.DeepEqual(c.MCP.Servers, want) {
		t.Errorf("servers =\n%#v\nwant\n%#v", c.MCP.Servers, want)
	}
	if src := c.Source("mcp.servers.search").String(); !strings.HasSuffix(src, "config.toml:10") {
		t.Errorf("source of search = %s", src)
	}
	if src := c.Source("chat.tools.max_calls").String(); !strings.HasSuffix(src, "config.toml:3") {
		t.Errorf("source of max_calls = %s", src)
	}
	var show strings.Builder
	if err := c.WriteText(&show); err != nil {
		t.Fatal(err)
	}
	text := show.String()
	for _, s := range []string{`mcp.servers.files.command`, `"NODE_OPTIONS=(set, not shown)"`, `mcp.servers.search.headers`, `mcp.servers.local.enabled`} {
		if !strings.Contains(text, s) {
			t.Errorf("show lacks %s:\n%s", s, text)
		}
	}
	for _, secret := range []string{"s3cret", "k3y"} {
		if strings.Contains(text, secret) {
			t.Errorf("show prints a secret %q", secret)
		}
	}
}

func TestMCPErrors(t *testing.T) {
	cases := []struct {
		name, file string
		is         error
		want       string
	}{
		{"both", "[mcp.servers.x]\ncommand = \"a\"\nurl = \"http://h/\"\n", ErrInvalid, "config.toml:1: mcp.servers.x: invalid value: both command and url are set"},
		{"neither", "[mcp.servers.x]\nenabled = true\n", ErrInvalid, "mcp.servers.x: invalid value: neither command nor url"},
		{"name with a dot", "[mcp.servers.\"my.server\"]\ncommand = \"a\"\n", ErrInvalid, `config.toml:1: mcp.servers.my.server: invalid value: "my.server" is not a server name`},
		{"typo", "[mcp.servers.x]\n\ncomand = \"a\"\n", ErrUnknownKey, "config.toml:3: mcp.servers.x.comand: unknown key (did you mean command?)"},
		{"env value", "[mcp.servers.x]\ncommand = \"a\"\nenv = { N = 1 }\n", ErrWrongType, `config.toml:3: mcp.servers.x.env: wrong type: want a string for "N", got the integer 1`},
		{"args", "[mcp.servers.x]\ncommand = \"a\"\nargs = \"-y\"\n", ErrWrongType, "config.toml:3: mcp.servers.x.args: wrong type: want an array of strings"},
		{"url scheme", "[mcp.servers.x]\nurl = \"ftp://h/\"\n", ErrInvalid, `want http:// or https:// and a host`},
		{"headers on a command", "[mcp.servers.x]\ncommand = \"a\"\nheaders = { A = \"b\" }\n", ErrInvalid, "headers are for a url"},
		{"header name", "[mcp.servers.x]\nurl = \"http://h/\"\nheaders = { \"A B\" = \"b\" }\n", ErrInvalid, `"A B" is not a valid name`},
		{"other mcp key", "[mcp]\nclients = 1\n", ErrUnknownKey, "config.toml:2: mcp.clients: unknown key (the table is [mcp.servers.NAME])"},
		{"servers not tables", "[mcp]\nservers = 1\n", ErrWrongType, "mcp.servers: wrong type"},
		{"allow without a server", "[chat]\ntools.allow = [\"read_file\"]\n", ErrInvalid, `chat.tools.allow: invalid value: "read_file": want server.tool`},
		{"allow bad tool", "[chat.tools]\nallow = [\"fs.read file\"]\n", ErrInvalid, `"fs.read file": a tool's name holds`},
		{"max calls", "[chat.tools]\nmax_calls = 0\n", ErrInvalid, "config.toml:2: chat.tools.max_calls: invalid value: 0 is outside 1…100"},
		{"tools typo", "[chat.tools]\nmax_call = 3\n", ErrUnknownKey, "chat.tools.max_call: unknown key (did you mean chat.tools.max_calls?)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.file, nil)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant %v with %q", err, tc.is, tc.want)
			}
		})
	}
}
