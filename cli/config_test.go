package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
)

// isolate points HOME and the XDG and Hugging Face variables into a temp
// folder and clears every ORCHARD_* and CORELLM_* variable, so a test sees
// neither the user's files nor their settings.
func isolate(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ORCHARD_") || strings.HasPrefix(k, "CORELLM_") {
			t.Setenv(k, "")
		}
	}
	t.Setenv("HOME", home)
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE"} {
		t.Setenv(k, "")
	}
	return home
}

func call(run func([]string, io.Writer, io.Writer) int, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

type showDoc struct {
	File      string
	FileFound bool `json:"file_found"`
	Values    []struct {
		Key, Source, From string
		Line              int
		Value             any
	}
}

func showJSON(t *testing.T, args ...string) showDoc {
	t.Helper()
	code, out, errs := call(runConfig, append([]string{"show", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("config show --json %v: exit %d: %s", args, code, errs)
	}
	var doc showDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("config show --json: %v\n%s", err, out)
	}
	return doc
}

func entry(t *testing.T, doc showDoc, key string) (any, string) {
	t.Helper()
	for _, v := range doc.Values {
		if v.Key == key {
			return v.Value, v.Source
		}
	}
	t.Fatalf("config show has no %s", key)
	return nil, ""
}

// config.Sampling converts to the engine's, so the two cannot drift apart.
var _ = engine.Sampling(config.Sampling{})

func TestConfigCommand(t *testing.T) {
	home := isolate(t)
	path := filepath.Join(home, ".config", "orchard", "config.toml")

	for _, args := range [][]string{{}, {"nope"}, {"show", "extra"}, {"init", "--nope"}} {
		if code, _, _ := call(runConfig, args...); code != 2 {
			t.Errorf("config %q: exit %d, want 2", args, code)
		}
	}

	code, out, _ := call(runConfig, "show")
	if code != 0 || !strings.Contains(out, path+" (not found; defaults apply)") || !strings.Contains(out, "sampling.top_p") {
		t.Fatalf("show without a file: %d\n%s", code, out)
	}

	code, out, errs := call(runConfig, "init")
	if code != 0 || strings.TrimSpace(out) != "wrote "+path {
		t.Fatalf("init: %d %q %s", code, out, errs)
	}
	if st, err := os.Stat(path); err != nil || st.Mode() != 0o600 {
		t.Fatalf("init wrote %v %v", st, err)
	}
	if code, _, errs := call(runConfig, "init"); code != 2 || !strings.Contains(errs, "--force") {
		t.Errorf("init over a file: %d %s", code, errs)
	}
	if code, _, errs := call(runConfig, "init", "--force"); code != 0 {
		t.Errorf("init --force: %d %s", code, errs)
	}

	// The fresh file changes nothing: every value is still the default.
	doc := showJSON(t)
	if doc.File != path || !doc.FileFound {
		t.Fatalf("show after init: file %q found %v", doc.File, doc.FileFound)
	}
	for _, v := range doc.Values {
		if v.From != "default" {
			t.Errorf("after init %s comes from %s", v.Key, v.Source)
		}
	}

	// Set temperature in the file, then the environment, then a flag.
	data, _ := os.ReadFile(path)
	edited := strings.Replace(string(data), "# temperature = 0.0", "temperature = 0.5", 1)
	os.WriteFile(path, []byte(edited), 0o600)
	line := 1 + strings.Count(edited[:strings.Index(edited, "temperature = 0.5")], "\n")
	if v, src := entry(t, showJSON(t), "sampling.temperature"); v != 0.5 || src != path+":"+strconv.Itoa(line) {
		t.Errorf("file: temperature %v from %s, want 0.5 from %s:%d", v, src, path, line)
	}
	t.Setenv("ORCHARD_SAMPLING_TEMPERATURE", "0.7")
	if v, src := entry(t, showJSON(t), "sampling.temperature"); v != 0.7 || src != "env ORCHARD_SAMPLING_TEMPERATURE" {
		t.Errorf("env: temperature %v from %s", v, src)
	}
	if v, src := entry(t, showJSON(t, "--temp", "0.9"), "sampling.temperature"); v != 0.9 || src != "flag --temp" {
		t.Errorf("flag: temperature %v from %s", v, src)
	}
	code, out, _ = call(runConfig, "show", "--temp=0.9")
	if code != 0 || !strings.Contains(out, "0.9") || !strings.Contains(out, "flag --temp") {
		t.Errorf("show text: %d\n%s", code, out)
	}

	// Bad values: exit 2 with the key and where it came from.
	code, _, errs = call(runConfig, "show", "--top-p", "7")
	if code != 2 || !strings.Contains(errs, "flag --top-p: sampling.top_p") {
		t.Errorf("bad flag: %d %s", code, errs)
	}
	os.WriteFile(path, []byte(edited+"\n[bogus]\nx = 1\n"), 0o600)
	bogus := strings.Count(edited, "\n") + 2
	code, _, errs = call(runConfig, "show")
	if code != 2 || !strings.Contains(errs, path+":"+strconv.Itoa(bogus)+": bogus: unknown key") {
		t.Errorf("bad file: %d %s", code, errs)
	}

	// --config names another file for both commands.
	other := filepath.Join(home, "elsewhere", "orchard.toml")
	if code, _, errs := call(runConfig, "init", "--config", other); code != 0 {
		t.Fatalf("init --config: %d %s", code, errs)
	}
	if doc := showJSON(t, "--config", other); doc.File != other || !doc.FileFound {
		t.Errorf("show --config: %+v", doc)
	}
}

// TestConfigImportMCP: orchard config import-mcp adds a Claude Desktop
// config's servers to config.toml and says what it did; config show then
// lists them, without the values of their env.
func TestConfigImportMCP(t *testing.T) {
	home := isolate(t)
	claude := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(claude), 0o700)
	os.WriteFile(claude, []byte(`{"mcpServers": {
		"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "Europe/Paris"}},
		"old": {"type": "sse", "url": "https://sse.example.com/sse"}}}`), 0o600)
	cfg := filepath.Join(home, ".config", "orchard", "config.toml")

	code, out, errs := call(runConfig, "import-mcp") // Claude Desktop's own file by default
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"added time: uvx mcp-server-time\n", "not added old: it speaks the older SSE transport", "wrote " + cfg + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	doc := showJSON(t)
	if v, src := entry(t, doc, "mcp.servers.time.command"); v != "uvx" || !strings.HasPrefix(src, cfg+":") {
		t.Errorf("show: command %v from %s", v, src)
	}
	if v, _ := entry(t, doc, "mcp.servers.time.env"); !reflect.DeepEqual(v, []any{"TZ=(set, not shown)"}) {
		t.Errorf("show: env %v", v)
	}

	code, out, _ = call(runConfig, "import-mcp", claude)
	if code != 0 || !strings.Contains(out, "not added time: the config file already has [mcp.servers.time]") || !strings.Contains(out, "is unchanged") {
		t.Errorf("again: exit %d\n%s", code, out)
	}

	bad := filepath.Join(home, "bad.json")
	os.WriteFile(bad, []byte(`{"servers": 3}`), 0o600)
	if code, _, errs := call(runConfig, "import-mcp", bad); code != 2 || !strings.Contains(errs, bad) {
		t.Errorf("a bad file: exit %d: %s", code, errs)
	}
	os.Remove(claude)
	if code, _, errs := call(runConfig, "import-mcp"); code != 2 || !strings.Contains(errs, "no Claude Desktop config at "+claude) {
		t.Errorf("no Claude Desktop config: exit %d: %s", code, errs)
	}
}
