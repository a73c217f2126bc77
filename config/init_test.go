package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestTemplateRoundTrip loads the file config init writes (every key
// commented out: all defaults), then the same file with every key
// uncommented (the same values, now from the file).
func TestTemplateRoundTrip(t *testing.T) {
	home := t.TempDir()
	env := mapEnv(map[string]string{"HOME": home})
	path := filepath.Join(home, "cfg", "config.toml")
	if err := WriteTemplate(path, env, false); err != nil {
		t.Fatal(err)
	}
	load := func() *Config {
		t.Helper()
		c, err := Load(Options{Env: mapEnv(map[string]string{"HOME": home, "ORCHARD_CONFIG": path})})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	def, err := Load(Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	c := load()
	if !c.FileFound {
		t.Fatal("template not read")
	}
	if !reflect.DeepEqual(c.Entries(), def.Entries()) {
		t.Errorf("template changed a value:\n%v\nwant\n%v", c.Entries(), def.Entries())
	}

	data, _ := os.ReadFile(path)
	keyLine := regexp.MustCompile(`(?m)^# ([a-z_.]+ = .*)$`)
	uncommented := keyLine.ReplaceAll(data, []byte("$1"))
	if n := len(keyLine.FindAll(data, -1)); n != len(settings())+1 {
		t.Errorf("template has %d key lines, want %d (every key and a binding)", n, len(settings())+1)
	}
	os.WriteFile(path, uncommented, 0o600)
	c = load()
	for i, e := range c.Entries() {
		if e.Key == "keys.quit" {
			continue // the example binding
		}
		if d := def.Entries()[i]; !reflect.DeepEqual(e.Value, d.Value) || e.Key != d.Key {
			t.Errorf("uncommented %s = %#v, default %#v", e.Key, e.Value, d.Value)
		}
		if e.Source.Kind != FromFile || e.Source.Line == 0 {
			t.Errorf("uncommented %s comes from %s", e.Key, e.Source)
		}
	}
	for _, s := range settings() {
		if !bytes.Contains(data, []byte("env "+envName(s.key))) || !bytes.Contains(data, []byte("flag --"+s.flag+"\n")) {
			t.Errorf("template does not name the variable and flag of %s", s.key)
		}
	}
	if !bytes.Contains(data, []byte(`# dir = "~/.local/share/orchard"`)) {
		t.Errorf("template does not write the data folder below ~:\n%s", data)
	}
}

func TestWriteTemplate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	path := filepath.Join(dir, "config.toml")
	env := mapEnv(map[string]string{"HOME": "/h"})
	if err := WriteTemplate(path, env, false); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700 | os.ModeDir} {
		if st, err := os.Stat(p); err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v, want %v (%v)", p, st.Mode(), want, err)
		}
	}
	os.WriteFile(path, []byte("# mine\n"), 0o600)
	err := WriteTemplate(path, env, false)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second init: %v, want fs.ErrExist naming --force", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "# mine\n" {
		t.Errorf("refused init changed the file: %q", data)
	}
	if err := WriteTemplate(path, env, true); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, Template(env)) {
		t.Error("forced init did not replace the file")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
}

func TestShow(t *testing.T) {
	c, err := load(t, "[sampling]\ntop_k = 5\n", map[string]string{"ORCHARD_CHAT_SYSTEM_PROMPT": "say \"hi\"\n"}, "--draft-len", "6", "--key", "quit=ctrl+q")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, re := range []string{
		`config file: .*config.toml \(read\)`,
		`(?m)^sampling\.top_k +5 +.*config\.toml:2$`,
		`(?m)^chat\.system_prompt +"say \\"hi\\"\\n" +env ORCHARD_CHAT_SYSTEM_PROMPT$`,
		`(?m)^speculation\.draft_length +6 +flag --draft-len$`,
		`(?m)^sampling\.top_p +1\.0 +default$`,
		`(?m)^sampling\.temperature +0\.0 +default$`,
		`(?m)^model\.search_dirs +\[\] +default$`,
		`(?m)^keys\.quit +\["ctrl\+q"\] +flag --key$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("show lacks %s:\n%s", re, text)
		}
	}

	b.Reset()
	if err := c.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		File      string
		FileFound bool `json:"file_found"`
		Values    []struct {
			Key, Source, From, File, Name string
			Line                          int
			Value                         any
		}
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.FileFound || len(doc.Values) != len(settings())+1 {
		t.Fatalf("json: %+v", doc)
	}
	for _, v := range doc.Values {
		switch v.Key {
		case "sampling.top_k":
			if v.Value != 5.0 || v.From != "file" || v.Line != 2 || v.File != doc.File {
				t.Errorf("json top_k %+v", v)
			}
		case "speculation.draft_length":
			if v.From != "flag" || v.Name != "draft-len" || v.Source != "flag --draft-len" {
				t.Errorf("json draft_length %+v", v)
			}
		case "model.search_dirs":
			if _, ok := v.Value.([]any); !ok {
				t.Errorf("json search_dirs %#v, want an array", v.Value)
			}
		}
	}
}
