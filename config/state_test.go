package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRememberModel(t *testing.T) {
	c := &Config{Data: Data{Dir: filepath.Join(t.TempDir(), "data")}}
	if got, err := c.Remembered(); got != "" || err != nil {
		t.Fatalf("nothing remembered yet: %q %v", got, err)
	}
	t.Chdir(t.TempDir())
	if err := c.RememberModel("bundles/e2b"); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if got, err := c.Remembered(); got != filepath.Join(wd, "bundles", "e2b") || err != nil {
		t.Errorf("remembered %q %v, want the absolute path", got, err)
	}
	if st, err := os.Stat(c.StateFile()); err != nil || st.Mode() != 0o600 {
		t.Errorf("state file mode %v %v", st.Mode(), err)
	}
	if err := c.RememberModel("/m/other"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Remembered(); got != "/m/other" {
		t.Errorf("remembered %q after a second choice", got)
	}

	os.WriteFile(c.StateFile(), []byte("{broken"), 0o600)
	if _, err := c.Remembered(); err == nil {
		t.Error("a broken state file reads without error")
	}
	if err := c.RememberModel("/m/again"); err != nil {
		t.Fatalf("remembering over a broken state file: %v", err)
	}
	if got, _ := c.Remembered(); got != "/m/again" {
		t.Errorf("remembered %q", got)
	}
	if ents, _ := os.ReadDir(c.Data.Dir); len(ents) != 1 {
		t.Errorf("data folder holds %v, want state.json alone", ents)
	}
}

// Choosing the demo is remembered as the demo (its family), not as a
// cache folder; choosing a bundle afterwards forgets it, and the other way
// round.
func TestRememberDemo(t *testing.T) {
	c := &Config{Data: Data{Dir: filepath.Join(t.TempDir(), "data")}}
	if err := c.RememberModel("/m/e2b"); err != nil {
		t.Fatal(err)
	}
	if err := c.RememberDemo("stateful3"); err != nil {
		t.Fatal(err)
	}
	if d, err := c.RememberedDemo(); d != "stateful3" || err != nil {
		t.Errorf("demo %q %v", d, err)
	}
	if m, _ := c.Remembered(); m != "" {
		t.Errorf("model %q still remembered after choosing the demo", m)
	}
	c.RememberModel("/m/e4b")
	if d, _ := c.RememberedDemo(); d != "" {
		t.Errorf("demo %q still remembered after choosing a bundle", d)
	}
}
