package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchard-llm/orchard/internal/mcpweather"
)

// The cli test binary is also the MCP weather server (mcpweather) over
// stdio: run with weatherEnv set, it serves instead of testing.
const weatherEnv = "ORCHARD_CLI_TEST_WEATHER"

func TestMain(m *testing.M) {
	if os.Getenv(weatherEnv) == "" {
		os.Exit(m.Run())
	}
	s := mcpweather.Server()
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "weather server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// weatherScript calls get_weather when asked about the weather, and
// answers from the result it gets back — or says it was refused.
const weatherScript = `{"replies":[
 {"match":"^<\\|tool_response>response:get_weather\\{value:","reply":"It is sunny in Paris."},
 {"match":"^<\\|tool_response>response:get_weather\\{error:","reply":"I may not look it up."},
 {"match":"(?i)weather","reply":"Let me look.<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|><|tool_response>"}
]}`

// TestRunTools: orchard run --tools starts the config's MCP server (this
// binary), declares its tool, and runs the call the script makes when
// --allow-tool allows it — the answer comes from the result; without it,
// the call is refused and the model is told.
func TestRunTools(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("ORCHARD_DEMO_PRESET", "tiny-long")
	cfg := filepath.Join(home, "config.toml")
	toml := fmt.Sprintf("[mcp.servers.weather]\ncommand = %q\nenv = { %s = \"1\" }\n", exe, weatherEnv)
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ORCHARD_CONFIG", cfg)
	script := writeScript(t, weatherScript)
	for _, c := range []struct {
		allow  []string
		answer string
		log    string
	}{
		{[]string{"--allow-tool", "weather.get_weather"}, "It is sunny in Paris.", "tool weather.get_weather {\"city\":\"Paris\"}: 22 bytes"},
		{nil, "I may not look it up.", "refused (not in chat.tools.allow"},
	} {
		args := append([]string{"run", "--demo", "--family", "v2", "--script", script, "--tools", "--prompt", "What is the weather in Paris?", "--json", "--spec", "off"}, c.allow...)
		code, out, stderr := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", c.allow, code, stderr)
		}
		var res struct {
			Reply string
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.Reply != c.answer {
			t.Fatalf("%v: reply %q (%v), want %q\n%s", c.allow, res.Reply, err, c.answer, stderr)
		}
		if !strings.Contains(stderr, c.log) || !strings.Contains(stderr, "tools: 1 declared") {
			t.Errorf("%v: stderr lacks %q:\n%s", c.allow, c.log, stderr)
		}
	}
}
