package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/engine"
)

type exportedMsg struct {
	path string
	err  error
}

// exportTranscript writes the conversation as markdown in a Cmd. A
// relative path is taken inside dir (the data folder's exports/, made on
// first use); an absolute or ~ path as it is, into a folder that exists.
func exportTranscript(path, dir string, info engine.ModelInfo, set engine.Settings, msgs []engine.Message, now time.Time, home string) tea.Cmd {
	return func() tea.Msg {
		p, err := exportPath(path, dir, home)
		if err == nil {
			err = writeFile(p, []byte(transcriptMarkdown(info, set, msgs, now)))
		}
		return exportedMsg{path: p, err: err}
	}
}

// exportPath resolves where /export writes.
func exportPath(path, dir, home string) (string, error) {
	p, err := expandHome(path, home)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) && dir != "" && p == path {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return p, fmt.Errorf("cannot make the folder %s: %w", filepath.Dir(p), plainError(err))
		}
	}
	if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
		return p, fmt.Errorf("the folder %s does not exist", filepath.Dir(p))
	}
	return p, nil
}

// writeFile replaces path whole with data, readable only by the user. An
// error names path and the reason, never the temporary file beside it.
func writeFile(path string, data []byte) error {
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, plainError(err))
	}
	return nil
}

// plainError is the reason of a file error without the file names in it
// (they may be temporary names the user never chose).
func plainError(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
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
		if m.Role == "tool" {
			writeToolCalls(&b, m)
			continue
		}
		if m.Role == "user" {
			b.WriteString("## You\n\n")
			for _, a := range m.Attachments {
				fmt.Fprintf(&b, "_[%s: %s]_\n\n", a.Kind, a.Name)
			}
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
