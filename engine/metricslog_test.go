package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

func TestMetricsLogRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d", "metrics.jsonl")
	l, err := OpenMetricsLog(path, ModelInfo{Name: "m", Family: "r1"}, "/x/bundle", 1e9)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(t, testbundle.Tiny(t, "r1"), Settings{MaxTokens: 4})
	s.Metrics = l.Record
	reply(t, s, "a")
	reply(t, s, "b")
	l.Close()
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	var first, second map[string]any
	json.Unmarshal(lines[0], &first)
	json.Unmarshal(lines[1], &second)
	for _, k := range []string{"kind", "timestamp", "promptTokens", "reusedTokens", "generatedTokens", "ttftSeconds", "decodeTokPerSec", "modelID", "bundleFolder", "modelLoadSeconds"} {
		if _, ok := first[k]; !ok {
			t.Errorf("first record lacks %s", k)
		}
	}
	if _, ok := second["modelLoadSeconds"]; ok {
		t.Error("load time logged twice")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}
