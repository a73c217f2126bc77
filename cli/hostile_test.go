package cli

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/reference"
)

// The probe's payloads: a window title, a screen clear, a clipboard
// write, an 8-bit CSI and a bidi override.
const (
	oscTitle  = "\x1b]0;pwned\x07"
	clear     = "\x1b[2J"
	clipboard = "\x1b]52;c;cm0gLXJmIH4=\x07"
	c1CSI     = "\u009b31m"
	bidi      = "\u202egnp.exe"
)

// rawControls reports the first character a terminal would obey.
func rawControls(s string) (rune, bool) {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || 0x80 <= r && r < 0xa0 || 0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069 {
			return r, true
		}
	}
	return 0, false
}

// hostileCkpt saves a checkpoint whose every free-text field carries
// escape sequences, as an imported archive can.
func hostileCkpt(t *testing.T, dir string) {
	t.Helper()
	s, err := checkpoints.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cp := &checkpoints.Checkpoint{
		Meta: checkpoints.Meta{Name: "evil", Created: time.Now(), BundleName: "gemma" + oscTitle, OS: "darwin" + clear,
			ComputeUnits: "all" + c1CSI, OrchardVersion: "v1" + clipboard,
			Identity: bundle.Identity{Family: bundle.V2, ConfigFile: "convert_config_v2.json" + bidi, ConfigSHA256: strings.Repeat("ab", 32),
				ID: strings.Repeat("cd", 32), Geometry: bundle.Geometry{Layers: 2, KVHeads: 2, HeadDim: 4, Context: 2048}}},
		Conversation: checkpoints.Conversation{System: "sys" + clear, Messages: []checkpoints.Message{
			{Role: "user" + oscTitle, Content: "hi " + clipboard}, {Role: "model", Content: "reply " + c1CSI + bidi}}},
		Tokens: []int{2, 105, 9},
		Cache: checkpoints.Cache{Family: bundle.V2, Position: 3, Buffers: []checkpoints.Buffer{
			{Name: "chunk_0/k_cache_0", Shape: []int{2, 3, 4}, DType: coreml.Float16, Data: make([]byte, 48)}}},
	}
	if err := s.Save(cp); err != nil {
		t.Fatal(err)
	}
}

// Issue 14, item 1: ckpt ls and show print metadata from files; nothing
// in it reaches the terminal as an escape, in text or in JSON.
func TestCkptOutputIsTerminalSafe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	hostileCkpt(t, dir)
	for _, args := range [][]string{
		{"ckpt", "ls", "--dir", dir},
		{"ckpt", "ls", "--dir", dir, "--json"},
		{"ckpt", "show", "evil", "--dir", dir},
		{"ckpt", "show", "evil", "--dir", dir, "--json", "--verify"},
	} {
		var out, errb bytes.Buffer
		code := Main(args, nil, &out, &errb)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errb.String())
		}
		if r, bad := rawControls(out.String() + errb.String()); bad {
			t.Errorf("%v: %U reached the terminal:\n%q", args, r, out.String())
		}
		if !slices.Contains(args, "--json") && !strings.Contains(out.String(), `gemma\x1b]0;pwned\x07`) {
			t.Errorf("%v: the escape is not shown visibly:\n%s", args, out.String())
		}
	}
	// The JSON still decodes to the exact values.
	var out bytes.Buffer
	Main([]string{"ckpt", "show", "evil", "--dir", dir, "--json"}, nil, &out, &bytes.Buffer{})
	var v struct {
		BundleName   string `json:"bundle_name"`
		Conversation checkpoints.Conversation
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.BundleName != "gemma"+oscTitle || v.Conversation.Messages[1].Content != "reply "+c1CSI+bidi {
		t.Errorf("JSON values changed: %v %q", err, v.BundleName)
	}
}

// Errors quote values from files; stderr never passes an escape either.
func TestErrorsAreTerminalSafe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	// An archive whose orchard.json names a buffer with escapes and a bad dtype.
	body := `{"created":"2026-01-01T00:00:00Z","os":"","compute_units":"","orchard_version":"","bundle":{"name":"x","identity":{"family":"v2","config_file":"c","config_sha256":"","geometry":{"layers":1,"hidden":0,"kv_heads":0,"head_dim":4,"global_head_dim":0,"context":8,"sliding_window":0,"ple_dim":0},"id":"x"}},"conversation":{"system":"","thinking":false,"messages":[]},"tokens":{"count":0,"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","ids":[]},"cache":{"family":"v2","position":0,"bytes":0,"buffers":[{"name":"` + "\\u001b]0;pwned\\u0007" + `","file":"a.bin","shape":[1],"dtype":"` + "\\u001b[2J" + `","bytes":2}]},"files":[]}`
	meta := checkpointsEnvelope(body)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "x/orchard.json", Typeflag: tar.TypeReg, Size: int64(len(meta)), Mode: 0o600})
	tw.Write(meta)
	tw.Close()
	archive := filepath.Join(t.TempDir(), "evil.tar")
	os.WriteFile(archive, buf.Bytes(), 0o600)
	var out, errb bytes.Buffer
	code := Main([]string{"ckpt", "import", "--dir", dir, archive}, nil, &out, &errb)
	msg := errb.String()
	if code != 2 || !strings.Contains(msg, archive+": ") || !strings.Contains(msg, `\x1b]0;pwned\x07`) {
		t.Errorf("import: exit %d: %q", code, msg)
	}
	if r, bad := rawControls(msg); bad {
		t.Errorf("%U reached stderr: %q", r, msg)
	}
	// An empty archive names the file and says it is empty.
	empty := filepath.Join(t.TempDir(), "empty.tar")
	os.WriteFile(empty, nil, 0o600)
	errb.Reset()
	if code := Main([]string{"ckpt", "import", "--dir", dir, empty}, nil, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), empty+": not a usable checkpoint archive: it is empty") {
		t.Errorf("import of an empty archive: %d %q", code, errb.String())
	}
}

// checkpointsEnvelope wraps a body as orchard.json does.
func checkpointsEnvelope(body string) []byte {
	var b bytes.Buffer
	sum := sha256hex([]byte(body))
	b.WriteString("{\n  \"format\": \"orchard-checkpoint\",\n  \"schema_version\": 1,\n  \"body_sha256\": \"" + sum + "\",\n  \"body\": ")
	b.WriteString(body)
	b.WriteString("\n}\n")
	return b.Bytes()
}

// config show refuses a key binding the chat would refuse.
func TestConfigShowRefusesUnknownAction(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(file, []byte("[keys]\nnonexistent = \"x\"\n"), 0o600)
	var out, errb bytes.Buffer
	code := Main([]string{"config", "show", "--config", file}, nil, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), `keys.nonexistent: unknown key: no action "nonexistent"`) {
		t.Errorf("config show: %d %s", code, errb.String())
	}
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// models and bundle inspect print names and problems from bundle files:
// shown visibly, in text and JSON; and a bad tokenizer is a problem.
func TestModelsAndInspectAreTerminalSafe(t *testing.T) {
	home := isolate(t)
	t.Setenv("HF_HUB_CACHE", filepath.Join(home, "hub"))
	search := filepath.Join(home, "models")
	dir, err := reference.Synthesize(reference.SynthOptions{Family: "r1", Preset: "tiny", Seed: 1, Out: filepath.Join(search, "evil")})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	json.Unmarshal(raw, &m)
	m["name"] = "gemma" + oscTitle + bidi
	m[clear+"unknown"] = 1
	raw, _ = json.Marshal(m)
	os.WriteFile(filepath.Join(dir, "manifest.json"), raw, 0o600)
	os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(`{"model":{"vocab":{"`+"\\u001b[2J"+`":2000000000}}}`), 0o600)

	for _, args := range [][]string{
		{"models", "--models-dir", search},
		{"models", "--models-dir", search, "--json"},
		{"bundle", "inspect", dir},
		{"bundle", "inspect", dir, "--json"},
	} {
		var out, errb bytes.Buffer
		code := Main(args, nil, &out, &errb)
		all := out.String() + errb.String()
		if r, bad := rawControls(all); bad {
			t.Errorf("%v: %U reached the terminal:\n%q", args, r, all)
		}
		if !strings.Contains(all, `token "\x1b[2J" has id 2000000000`) && !strings.Contains(all, `token \"\\x1b[2J\" has id 2000000000`) {
			t.Errorf("%v (exit %d): the tokenizer problem is not listed:\n%s", args, code, all)
		}
	}
}
