package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// claudeDesktop is a claude_desktop_config.json with the kinds of server
// people have in theirs.
const claudeDesktop = `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/notes"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret" },
      "alwaysAllow": ["get_me"]
    },
    "remote search": { "type": "http", "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer ${SEARCH_KEY}" } },
    "remote-search": { "url": "https://other.example.com/mcp" },
    "old": { "type": "sse", "url": "https://sse.example.com/sse" },
    "broken": { "args": ["x"] },
    "paused": { "command": "uvx", "args": ["mcp-server-time"], "disabled": true }
  }
}`

func TestParseMCPServers(t *testing.T) {
	got, err := ParseMCPServers([]byte(claudeDesktop))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ImportedServer{}
	var names []string
	for _, s := range got {
		byName[s.Name] = s
		names = append(names, s.Name)
	}
	// "remote search" sorts first, yet "remote-search" keeps its name.
	if want := []string{"broken", "filesystem", "github", "old", "paused", "remote-search-2", "remote-search"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}
	gh := byName["github"]
	if gh.Skip != "" || gh.Server.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp_secret" || !gh.Server.Enabled || len(gh.Server.Args) != 6 {
		t.Errorf("github = %+v", gh)
	}
	if !reflect.DeepEqual(gh.Notes, []string{"left out alwaysAllow"}) {
		t.Errorf("github notes = %q", gh.Notes)
	}
	rs := byName["remote-search-2"]
	if rs.From != "remote search" || rs.Server.URL != "https://mcp.example.com/mcp" || len(rs.Notes) != 2 || !strings.Contains(rs.Notes[1], "${VARIABLES}") {
		t.Errorf("remote search = %+v", rs)
	}
	if byName["remote-search"].From != "" {
		t.Errorf("a valid name changed: %+v", byName["remote-search"])
	}
	if s := byName["old"].Skip; !strings.Contains(s, "SSE") {
		t.Errorf("sse: %q", s)
	}
	if s := byName["broken"].Skip; !strings.Contains(s, "neither command nor url") {
		t.Errorf("broken: %q", s)
	}
	if p := byName["paused"]; p.Skip != "" || p.Server.Enabled {
		t.Errorf("paused = %+v", p)
	}

	for _, bad := range []string{`[]`, `{"globalShortcut": "x"}`, `{"mcpServers": []}`, `{`} {
		if _, err := ParseMCPServers([]byte(bad)); err == nil {
			t.Errorf("ParseMCPServers(%s): no error", bad)
		}
	}
	// VS Code names the object "servers".
	if got, err := ParseMCPServers([]byte(`{"servers": {"t": {"command": "t"}}}`)); err != nil || len(got) != 1 {
		t.Errorf("servers: %v %v", got, err)
	}
}

// TestAddMCPServers: the servers are appended to the user's file, which
// keeps every line it had; a server the file already has stays as it is;
// the result loads.
func TestAddMCPServers(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "dotfiles")
	os.MkdirAll(dir, 0o700)
	real := filepath.Join(dir, "config.toml")
	before := "# my settings\n[sampling]\ntop_k = 40 # keep\n\n[mcp.servers.filesystem]\ncommand = \"/opt/fs-server\"\n"
	if err := os.WriteFile(real, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	servers, err := ParseMCPServers([]byte(claudeDesktop))
	if err != nil {
		t.Fatal(err)
	}
	added, kept, err := AddMCPServers(link, servers, "/Users/me/claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"github", "paused", "remote-search-2", "remote-search"}; !reflect.DeepEqual(added, want) {
		t.Errorf("added = %v, want %v", added, want)
	}
	if !strings.Contains(kept["filesystem"], "already has") || kept["old"] == "" || kept["broken"] == "" || len(kept) != 3 {
		t.Errorf("kept = %v", kept)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the linked config file is no longer a link")
	}
	data, _ := os.ReadFile(real)
	if !strings.HasPrefix(string(data), before) {
		t.Errorf("the file's own lines changed:\n%s", data)
	}
	if st, _ := os.Stat(real); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	c, err := Load(Options{Env: mapEnv(map[string]string{"HOME": home, ConfigEnv: link})})
	if err != nil {
		t.Fatalf("the file does not load:\n%s\n%v", data, err)
	}
	if c.Sampling.TopK != 40 || c.MCP.Servers["filesystem"].Command != "/opt/fs-server" {
		t.Errorf("settings the file had changed: %+v %+v", c.Sampling, c.MCP.Servers["filesystem"])
	}
	for _, name := range added {
		var im ImportedServer
		for _, s := range servers {
			if s.Name == name {
				im = s
			}
		}
		if got := c.MCP.Servers[name]; !reflect.DeepEqual(normalServer(got), normalServer(im.Server)) {
			t.Errorf("%s reads back as %+v, want %+v", name, got, im.Server)
		}
	}

	// Importing again adds nothing and leaves the file alone.
	added, _, err = AddMCPServers(link, servers, "again")
	if err != nil || len(added) != 0 {
		t.Errorf("second import: %v %v", added, err)
	}
	if again, _ := os.ReadFile(real); string(again) != string(data) {
		t.Error("a second import changed the file")
	}
}

func TestAddMCPServersRefuses(t *testing.T) {
	servers, err := ParseMCPServers([]byte(`{"mcpServers": {"t": {"command": "t"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{
		"not TOML":            "[sampling\n",
		"inline servers":      "mcp = { servers = { a = { command = \"a\" } } }\n",
		"servers not a table": "[mcp]\nservers = 3\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			os.WriteFile(path, []byte(file), 0o600)
			if added, _, err := AddMCPServers(path, servers, "x"); err == nil {
				t.Errorf("added %v to %q", added, file)
			}
			if data, _ := os.ReadFile(path); string(data) != file {
				t.Errorf("the file changed: %q", data)
			}
		})
	}
	// No file yet: it is made.
	path := filepath.Join(t.TempDir(), "new", "config.toml")
	if added, _, err := AddMCPServers(path, servers, "x"); err != nil || len(added) != 1 {
		t.Fatalf("new file: %v %v", added, err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "[mcp.servers.t]\ncommand = \"t\"\n") {
		t.Errorf("new file:\n%s", data)
	}
}

func TestClaudeDesktopFile(t *testing.T) {
	env := mapEnv(map[string]string{"HOME": "/home/me"})
	if p, _ := ClaudeDesktopFile(env, "darwin"); p != "/home/me/Library/Application Support/Claude/claude_desktop_config.json" {
		t.Errorf("darwin: %s", p)
	}
	if p, _ := ClaudeDesktopFile(env, "linux"); p != "/home/me/.config/Claude/claude_desktop_config.json" {
		t.Errorf("linux: %s", p)
	}
}
