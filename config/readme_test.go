package config

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeListsEveryKey: the README's configuration table has a row for
// every key of the schema, naming its variable and flag, and no row for a
// key the schema does not have.
func TestReadmeListsEveryKey(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const header = "| key | default | environment | flag | meaning |\n"
	_, table, ok := strings.Cut(string(data), header)
	if !ok {
		t.Fatalf("README has no %q table", strings.TrimSpace(header))
	}
	rows := map[string]string{}
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			key, _, _ := strings.Cut(rest, "`")
			rows[key] = line
		}
	}
	known := map[string]bool{"keys.<action>": true, "mcp.servers.<name>": true}
	for _, s := range settings() {
		known[s.key] = true
		row, ok := rows[s.key]
		switch {
		case !ok:
			t.Errorf("README lacks a row for %s", s.key)
		case !strings.Contains(row, "`"+envName(s.key)+"`") && !strings.Contains(row, "`ORCHARD_API_KEY`"):
			t.Errorf("README's row for %s does not name %s", s.key, envName(s.key))
		case !strings.Contains(row, "`--"+s.flag+"`"):
			t.Errorf("README's row for %s does not name --%s", s.key, s.flag)
		}
	}
	for key := range rows {
		if !known[key] {
			t.Errorf("README has a row for %s, which is not a key", key)
		}
	}
}
