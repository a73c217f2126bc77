package config

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// load writes file (if not empty) as the config file and loads it with env
// and the flags args.
func load(t *testing.T, file string, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	home := t.TempDir()
	e := map[string]string{"HOME": home}
	for k, v := range env {
		e[k] = v
	}
	if file != "" {
		path := filepath.Join(home, ".config", "orchard", "config.toml")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	fl := RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("flags %q: %v", args, err)
	}
	return Load(Options{Env: mapEnv(e), Flags: fl})
}

func value(c *Config, key string) any {
	for _, e := range c.Entries() {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}

// TestPrecedence sets every key in each layer in turn and checks that the
// higher layer wins and that the source says which one it was.
func TestPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key          string
		file         string // "section]\nline" parts: the line under [section]
		env          [2]string
		flags        []string
		def, f, e, g any
	}{
		{"model.path", `path = "/m/file"`, [2]string{"ORCHARD_MODEL_PATH", "/m/env"}, []string{"--model", "/m/flag"},
			"", "/m/file", "/m/env", "/m/flag"},
		{"model.search_dirs", `search_dirs = ["/a", "/b"]`, [2]string{"ORCHARD_MODEL_SEARCH_DIRS", "/c" + string(filepath.ListSeparator) + "/d"}, []string{"--models-dir", "/e", "--models-dir", "/f"},
			[]string{}, []string{"/a", "/b"}, []string{"/c", "/d"}, []string{"/e", "/f"}},
		{"model.compute_units", `compute_units = "cpuOnly"`, [2]string{"ORCHARD_MODEL_COMPUTE_UNITS", "gpu"}, []string{"--compute", "all"},
			"default", "cpuOnly", "cpuAndGPU", "all"},
		{"model.verify_head_units", `verify_head_units = "cpu"`, [2]string{"CORELLM_VERIFY_HEAD_CU", "gpu"}, []string{"--verify-head-cu", "ane"},
			"default", "cpuOnly", "cpuAndGPU", "cpuAndNeuralEngine"},
		{"speculation.mode", `mode = "off"`, [2]string{"CORELLM_MTP_PLD", "1"}, []string{"--spec", "auto"},
			"auto", "off", "on", "auto"},
		{"speculation.draft_length", `draft_length = 8`, [2]string{"CORELLM_MTP_DRAFT_LEN", "12"}, []string{"--draft-len", "2"},
			4, 8, 12, 2},
		{"speculation.ngram_min", `ngram_min = 1`, [2]string{"CORELLM_MTP_PLD_MINN", "3"}, []string{"--ngram-min", "2"},
			2, 1, 3, 2},
		{"speculation.ngram_max", `ngram_max = 5`, [2]string{"ORCHARD_SPECULATION_NGRAM_MAX", "6"}, []string{"--ngram-max", "7"},
			3, 5, 6, 7},
		{"sampling.temperature", `temperature = 0.7`, [2]string{"ORCHARD_SAMPLING_TEMPERATURE", "1"}, []string{"--temp", "0.25"},
			0.0, 0.7, 1.0, 0.25},
		{"sampling.top_k", `top_k = 40`, [2]string{"ORCHARD_SAMPLING_TOP_K", "20"}, []string{"--top-k", "10"},
			0, 40, 20, 10},
		{"sampling.top_p", `top_p = 0.9`, [2]string{"ORCHARD_SAMPLING_TOP_P", "0.8"}, []string{"--top-p", "0.5"},
			1.0, 0.9, 0.8, 0.5},
		{"sampling.min_p", `min_p = 0.05`, [2]string{"ORCHARD_SAMPLING_MIN_P", "0.1"}, []string{"--min-p", "0"},
			0.0, 0.05, 0.1, 0.0},
		{"sampling.repetition_penalty", `repetition_penalty = 1.1`, [2]string{"ORCHARD_SAMPLING_REPETITION_PENALTY", "1.2"}, []string{"--repeat-penalty", "1.3"},
			1.0, 1.1, 1.2, 1.3},
		{"sampling.seed", `seed = 7`, [2]string{"ORCHARD_SAMPLING_SEED", "8"}, []string{"--seed", "9"},
			uint64(0), uint64(7), uint64(8), uint64(9)},
		{"chat.system_prompt", `system_prompt = "be brief"`, [2]string{"ORCHARD_CHAT_SYSTEM_PROMPT", "from env"}, []string{"--system", "from flag"},
			"", "be brief", "from env", "from flag"},
		{"chat.thinking", `thinking = true`, [2]string{"ORCHARD_CHAT_THINKING", "false"}, []string{"--thinking"},
			false, true, false, true},
		{"chat.context_full", `context_full = "drop-oldest"`, [2]string{"ORCHARD_CHAT_CONTEXT_FULL", "stop"}, []string{"--context-full", "drop-oldest"},
			"compact", "drop-oldest", "stop", "drop-oldest"},
		{"chat.tools.allow", `tools.allow = ["github.create_issue"]`, [2]string{"ORCHARD_CHAT_TOOLS_ALLOW", "files.read, files.*"}, []string{"--allow-tool", "a.b", "--allow-tool", "c.d"},
			[]string{}, []string{"github.create_issue"}, []string{"files.read", "files.*"}, []string{"a.b", "c.d"}},
		{"chat.tools.max_calls", `tools.max_calls = 3`, [2]string{"ORCHARD_CHAT_TOOLS_MAX_CALLS", "4"}, []string{"--max-tool-calls", "5"},
			8, 3, 4, 5},
		{"data.dir", `dir = "/d/file"`, [2]string{"ORCHARD_DATA_DIR", "/d/env"}, []string{"--data-dir", "/d/flag"},
			nil, "/d/file", "/d/env", "/d/flag"},
		{"log.debug", `debug = true`, [2]string{"ORCHARD_LOG_DEBUG", "0"}, []string{"--debug"},
			false, true, false, true},
		{"ui.theme", `theme = "dark"`, [2]string{"ORCHARD_UI_THEME", "light"}, []string{"--theme", "auto"},
			"auto", "dark", "light", "auto"},
		{"history.enabled", `enabled = false`, [2]string{"ORCHARD_HISTORY_ENABLED", "true"}, []string{"--history=false"},
			true, false, true, false},
		{"history.keep_kv", `keep_kv = 0`, [2]string{"ORCHARD_HISTORY_KEEP_KV", "3"}, []string{"--history-keep-kv", "9"},
			5, 0, 3, 9},
		{"history.kv_budget", `kv_budget = "500MB"`, [2]string{"ORCHARD_HISTORY_KV_BUDGET", "1g"}, []string{"--history-kv-budget", "4096"},
			"2GiB", "500000000B", "1GiB", "4KiB"},
		{"keys.quit", `quit = ["ctrl+q"]`, [2]string{"ORCHARD_KEYS", "quit=ctrl+x"}, []string{"--key", "quit=ctrl+c,ctrl+d"},
			nil, []string{"ctrl+q"}, []string{"ctrl+x"}, []string{"ctrl+c", "ctrl+d"}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			section, _, _ := strings.Cut(tt.key, ".")
			file := "# comment\n[" + section + "]\n" + tt.file + "\n"
			env := map[string]string{tt.env[0]: tt.env[1]}
			layers := []struct {
				name  string
				file  string
				env   map[string]string
				flags []string
				want  any
				src   string
			}{
				{"default", "", nil, nil, tt.def, "default"},
				{"file", file, nil, nil, tt.f, "config.toml:3"},
				{"env", file, env, nil, tt.e, "env " + tt.env[0]},
				{"flag", file, env, tt.flags, tt.g, "flag --" + strings.TrimPrefix(strings.SplitN(tt.flags[0], "=", 2)[0], "--")},
			}
			for _, l := range layers {
				c, err := load(t, l.file, l.env, l.flags...)
				if err != nil {
					t.Fatalf("%s: %v", l.name, err)
				}
				got := value(c, tt.key)
				if l.want != nil && !reflect.DeepEqual(got, l.want) {
					t.Errorf("%s: %s = %#v, want %#v", l.name, tt.key, got, l.want)
				}
				if src := c.Source(tt.key).String(); !strings.HasPrefix(src, l.src) && !strings.HasSuffix(src, l.src) {
					t.Errorf("%s: source of %s = %q, want %q", l.name, tt.key, src, l.src)
				}
			}
		})
	}
}

func TestDefaultsAndPaths(t *testing.T) {
	c, err := Load(Options{Env: mapEnv(map[string]string{"HOME": "/h"})})
	if err != nil {
		t.Fatal(err)
	}
	if c.File != "/h/.config/orchard/config.toml" || c.FileFound {
		t.Errorf("file %q found %v", c.File, c.FileFound)
	}
	for got, want := range map[string]string{
		c.Data.Dir:                    "/h/.local/share/orchard",
		c.CheckpointsDir():            "/h/.local/share/orchard/checkpoints",
		c.MetricsFile():               "/h/.local/share/orchard/metrics.jsonl",
		c.AutosaveFile():              "/h/.local/share/orchard/autosave",
		c.LogDir():                    "/h/.local/share/orchard/logs",
		c.StateFile():                 "/h/.local/share/orchard/state.json",
		c.Source("data.dir").String(): "default",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	// XDG homes are used when absolute and ignored when relative.
	env := map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/x/cfg", "XDG_DATA_HOME": "relative"}
	c, err = Load(Options{Env: mapEnv(env)})
	if err != nil {
		t.Fatal(err)
	}
	if c.File != "/x/cfg/orchard/config.toml" || c.Data.Dir != "/h/.local/share/orchard" {
		t.Errorf("XDG: file %q data %q", c.File, c.Data.Dir)
	}
	env["XDG_DATA_HOME"] = "/x/data"
	if c, _ = Load(Options{Env: mapEnv(env)}); c.Data.Dir != "/x/data/orchard" {
		t.Errorf("XDG_DATA_HOME: data %q", c.Data.Dir)
	}
}

func TestFilePaths(t *testing.T) {
	// ~ is the home folder; a relative path in the file is relative to the file.
	c, err := load(t, "[model]\npath = \"bundles/e2b\"\nsearch_dirs = [\"~/models\", \"/abs\"]\n[data]\ndir = \"~\"\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Dir(filepath.Dir(filepath.Dir(c.File)))
	if want := filepath.Join(home, ".config", "orchard", "bundles", "e2b"); c.Model.Path != want {
		t.Errorf("path %q, want %q", c.Model.Path, want)
	}
	if want := []string{filepath.Join(home, "models"), "/abs"}; !reflect.DeepEqual(c.Model.SearchDirs, want) {
		t.Errorf("search_dirs %q, want %q", c.Model.SearchDirs, want)
	}
	if c.Data.Dir != home {
		t.Errorf("data.dir %q, want %q", c.Data.Dir, home)
	}
	// Flags and variables keep relative paths relative to the working folder.
	if c, _ := load(t, "", map[string]string{"ORCHARD_MODEL_PATH": "b"}); c.Model.Path != "b" {
		t.Errorf("env relative path %q", c.Model.Path)
	}
}

func TestConfigFileChoice(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "named.toml")
	os.WriteFile(named, []byte("[ui]\ntheme = \"light\"\n"), 0o600)
	other := filepath.Join(dir, "other.toml")
	os.WriteFile(other, []byte("[ui]\ntheme = \"dark\"\n"), 0o600)

	c, err := load(t, "", map[string]string{"ORCHARD_CONFIG": named})
	if err != nil || c.UI.Theme != "light" || c.File != named || !c.FileFound {
		t.Fatalf("ORCHARD_CONFIG: %v %+v", err, c)
	}
	if got := c.Source("ui.theme").String(); got != named+":2" {
		t.Errorf("source %q", got)
	}
	c, err = load(t, "", map[string]string{"ORCHARD_CONFIG": named}, "--config", other)
	if err != nil || c.UI.Theme != "dark" {
		t.Fatalf("--config over ORCHARD_CONFIG: %v %+v", err, c)
	}
}

// TestAliases checks the published runtime's variables: how they are
// translated, and that ORCHARD_* wins when both are set.
func TestAliases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  map[string]string
		key  string
		want any
		src  string
	}{
		{map[string]string{"CORELLM_MTP_PLD": "yes"}, "speculation.mode", "on", "env CORELLM_MTP_PLD"},
		{map[string]string{"CORELLM_MTP_PLD": "0"}, "speculation.mode", "off", "env CORELLM_MTP_PLD"},
		{map[string]string{"CORELLM_MTP_PLD": "1", "ORCHARD_SPECULATION_MODE": "off"}, "speculation.mode", "off", "env ORCHARD_SPECULATION_MODE"},
		{map[string]string{"CORELLM_MTP_DRAFT_LEN": "2"}, "speculation.draft_length", 4, "env CORELLM_MTP_DRAFT_LEN (clamped from 2 to 4…16 as the published runtime does)"},
		{map[string]string{"CORELLM_MTP_DRAFT_LEN": "40"}, "speculation.draft_length", 16, "env CORELLM_MTP_DRAFT_LEN (clamped from 40 to 4…16 as the published runtime does)"},
		{map[string]string{"CORELLM_MTP_DRAFT_LEN": "6", "ORCHARD_SPECULATION_DRAFT_LENGTH": "2"}, "speculation.draft_length", 2, "env ORCHARD_SPECULATION_DRAFT_LENGTH"},
		{map[string]string{"CORELLM_MTP_PLD_MINN": "0"}, "speculation.ngram_min", 1, "env CORELLM_MTP_PLD_MINN (raised from 0 to 1 as the published runtime does)"},
		{map[string]string{"CORELLM_VERIFY_HEAD_CU": "ane"}, "model.verify_head_units", "cpuAndNeuralEngine", "env CORELLM_VERIFY_HEAD_CU"},
	}
	for _, tt := range tests {
		c, err := load(t, "", tt.env)
		if err != nil {
			t.Errorf("%v: %v", tt.env, err)
			continue
		}
		if got := value(c, tt.key); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v: %s = %#v, want %#v", tt.env, tt.key, got, tt.want)
		}
		if got := c.Source(tt.key).String(); got != tt.src {
			t.Errorf("%v: source %q, want %q", tt.env, got, tt.src)
		}
	}
}

func TestSpecSwitches(t *testing.T) {
	for _, args := range [][]string{{"--no-spec"}, {"--no-mtp"}, {"--spec", "on", "--no-spec"}} {
		c, err := load(t, "", map[string]string{"CORELLM_MTP_PLD": "1"}, args...)
		if err != nil || c.Speculation.Mode != SpecOff || c.Source("speculation.mode").String() != "flag "+args[len(args)-1] {
			t.Errorf("%q: %v %v from %s", args, err, c.Speculation.Mode, c.Source("speculation.mode"))
		}
	}
	if c, _ := load(t, "", nil, "--no-spec=false"); c.Speculation.Mode != SpecAuto {
		t.Errorf("--no-spec=false turned speculation %s", c.Speculation.Mode)
	}
}

func TestKeyBindings(t *testing.T) {
	file := "[keys]\nquit = \"ctrl+q\"\nhelp = [\"?\", \"f1\"]\nsend = \"ctrl+m\"\n"
	c, err := load(t, file, map[string]string{"ORCHARD_KEYS": "help=h; scroll-up=k,up"}, "--key", "send=enter", "--key=quit=ctrl+d")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"quit": {"ctrl+d"}, "help": {"h"}, "send": {"enter"}, "scroll-up": {"k", "up"}}
	if !reflect.DeepEqual(c.Keys, want) {
		t.Errorf("keys %q, want %q", c.Keys, want)
	}
	srcs := map[string]string{"quit": "flag --key", "help": "env ORCHARD_KEYS", "send": "flag --key", "scroll-up": "env ORCHARD_KEYS"}
	for a, s := range srcs {
		if got := c.Source("keys." + a).String(); got != s {
			t.Errorf("source of keys.%s = %q, want %q", a, got, s)
		}
	}
	c, _ = load(t, file, nil)
	if got := c.Source("keys.help").String(); !strings.HasSuffix(got, "config.toml:3") {
		t.Errorf("file source %q", got)
	}
}

// TestKeyActions checks bindings against the TUI's actions when Load is
// given them, in every source.
func TestKeyActions(t *testing.T) {
	actions := []string{"help", "quit"}
	home := t.TempDir()
	path := home + "/config.toml"
	os.WriteFile(path, []byte("[keys]\nquit = \"ctrl+q\"\nhlep = \"?\"\n"), 0o600)
	env := map[string]string{"HOME": home, "ORCHARD_CONFIG": path, "ORCHARD_KEYS": "sned=enter"}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fl := RegisterFlags(fs)
	fs.Parse([]string{"--key", "help=f1", "--key", "quiet=q"})
	_, err := Load(Options{Env: mapEnv(env), Flags: fl, Actions: actions})
	for _, want := range []string{
		path + `:3: keys.hlep: unknown key: no action "hlep" (known: help, quit)`,
		`env ORCHARD_KEYS: keys.sned: unknown key`,
		`flag --key: keys.quiet: unknown key`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	os.WriteFile(path, []byte("[keys]\nquit = \"ctrl+q\"\n"), 0o600)
	delete(env, "ORCHARD_KEYS")
	if c, err := Load(Options{Env: mapEnv(env), Actions: actions}); err != nil || c.Keys["quit"][0] != "ctrl+q" {
		t.Errorf("known action: %v", err)
	}
}

func TestSizes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false}, {"4096", 4096, false}, {"2GiB", 2 << 30, false}, {"2 gib", 2 << 30, false},
		{"500MB", 500e6, false}, {"1.5G", 3 << 29, false}, {"64k", 64 << 10, false}, {"12 B", 12, false},
		{"", 0, true}, {"lots", 0, true}, {"-1GB", 0, true}, {"1e30TB", 0, true}, {"NaN", 0, true},
	} {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d (error %v)", tt.in, got, err, tt.want, tt.err)
		}
		if err == nil {
			if back, err := ParseSize(FormatSize(got)); err != nil || back != got {
				t.Errorf("FormatSize(%d) = %q reads back as %d, %v", got, FormatSize(got), back, err)
			}
		}
	}
	_, err := load(t, "[history]\nkv_budget = true\n", nil)
	if err == nil || !strings.Contains(err.Error(), "history.kv_budget") {
		t.Fatalf("a boolean budget: %v", err)
	}
	_, err = load(t, "", map[string]string{"ORCHARD_HISTORY_KV_BUDGET": "lots"})
	if err == nil || !strings.Contains(err.Error(), `"lots" is not a size`) {
		t.Fatalf("a budget of lots: %v", err)
	}
}
