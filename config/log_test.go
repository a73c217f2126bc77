package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenLog(t *testing.T) {
	for _, debug := range []bool{false, true} {
		data := filepath.Join(t.TempDir(), "data")
		log, closer, err := OpenLog(data, debug)
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("detail", "n", 1)
		log.Info("started", "model", "/m")
		if err := closer.Close(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(data, "logs", "orchard.log")
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), "level=INFO msg=started model=/m") {
			t.Errorf("debug %v: log lacks the info line:\n%s", debug, got)
		}
		if strings.Contains(string(got), "msg=detail") != debug {
			t.Errorf("debug %v: debug line present = %v:\n%s", debug, !debug, got)
		}
		for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
			if st, err := os.Stat(p); err != nil || st.Mode() != want {
				t.Errorf("%s: mode %v, want %v", p, st.Mode(), want)
			}
		}
	}
	if _, _, err := OpenLog("", false); err == nil {
		t.Error("no data folder: no error")
	}
}

func TestOpenLogAppendsAndRotates(t *testing.T) {
	data := t.TempDir()
	path := filepath.Join(data, "logs", "orchard.log")
	for i := range 2 {
		log, c, err := OpenLog(data, false)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("run", "i", i)
		c.Close()
	}
	if got, _ := os.ReadFile(path); strings.Count(string(got), "msg=run") != 2 {
		t.Errorf("second open did not append:\n%s", got)
	}
	if err := os.Truncate(path, maxLogSize+1); err != nil {
		t.Fatal(err)
	}
	_, c, err := OpenLog(data, false)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if st, err := os.Stat(path + ".1"); err != nil || st.Size() != maxLogSize+1 {
		t.Errorf("big log not kept as orchard.log.1: %v", err)
	}
	if st, _ := os.Stat(path); st.Size() != 0 {
		t.Errorf("new log has %d bytes", st.Size())
	}
}
