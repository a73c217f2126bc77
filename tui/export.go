package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
)

type exportedMsg struct {
	path string
	err  error
}

// exportTranscript writes the conversation as markdown in a Cmd.
func exportTranscript(path string, info engine.ModelInfo, set engine.Settings, msgs []engine.Message, now time.Time, home string) tea.Cmd {
	return func() tea.Msg {
		p, err := expandHome(path, home)
		if err == nil {
			err = writeFileAtomic(p, []byte(transcriptMarkdown(info, set, msgs, now)), 0o600)
		}
		return exportedMsg{path: p, err: err}
	}
}

// transcriptMarkdown is the /export format: a title, the model and
// date, then one section per turn. Thinking blocks become quotes.
func transcriptMarkdown(info engine.ModelInfo, set engine.Settings, msgs []engine.Message, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Conversation with %s\n\n", orDefault(info.Name, "orchard"))
	fmt.Fprintf(&b, "_%s · %s · exported %s by orchard_\n\n", orDefault(info.Family, "unknown family"), settingsSummary(set), now.Format("2006-01-02 15:04"))
	if set.System != "" {
		fmt.Fprintf(&b, "**System:** %s\n\n", set.System)
	}
	for _, m := range msgs {
		if m.Role == "user" {
			b.WriteString("## You\n\n")
			b.WriteString(strings.TrimSpace(m.Content))
			b.WriteString("\n\n")
			continue
		}
		b.WriteString("## Model\n\n")
		for _, p := range splitThinking(m.Content) {
			t := strings.TrimSpace(m.Content[p.start:p.end])
			if p.thinking {
				t = thinkingBody(t)
				if t == "" {
					continue
				}
				b.WriteString("> **Thinking**\n>\n> ")
				b.WriteString(strings.ReplaceAll(t, "\n", "\n> "))
				b.WriteString("\n\n")
				continue
			}
			if t != "" {
				b.WriteString(t)
				b.WriteString("\n\n")
			}
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func settingsSummary(s engine.Settings) string {
	parts := []string{"greedy"}
	if !s.Sampling.Greedy() {
		parts = []string{fmt.Sprintf("temperature %g", s.Sampling.Temperature)}
		if s.Sampling.TopK > 0 {
			parts = append(parts, fmt.Sprintf("top-k %d", s.Sampling.TopK))
		}
		if s.Sampling.TopP > 0 && s.Sampling.TopP < 1 {
			parts = append(parts, fmt.Sprintf("top-p %g", s.Sampling.TopP))
		}
		parts = append(parts, fmt.Sprintf("seed %d", s.Sampling.Seed))
	}
	if s.Speculation != "" {
		parts = append(parts, "speculation "+string(s.Speculation))
	}
	return strings.Join(parts, ", ")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func expandHome(p, home string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return "", fmt.Errorf("cannot expand %q: HOME is not set", p)
		}
		return filepath.Join(home, p[1:]), nil
	}
	return p, nil
}

// writeFileAtomic writes data to a temporary file beside path and
// renames it into place, so a crash never leaves half a file and an
// existing file is replaced whole.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
