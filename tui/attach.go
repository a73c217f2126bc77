package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// Attachments: /image PATH and /audio PATH queue files for the next
// message; a pasted or dropped path that names a picture or a clip offers
// to queue it. They are sent with the message (Engine.Send), encoded by
// the engine, and shown in the conversation as chips.

// imageExts and audioExts are what a pasted path is recognised by; the
// engine's decoders decide what really opens.
var (
	imageExts = []string{".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff", ".heic", ".heif"}
	audioExts = []string{".wav", ".flac", ".mp3", ".m4a", ".caf", ".aac", ".aif", ".aiff"}
)

// mediaKindOf guesses a file's kind from its extension: "" when neither.
func mediaKindOf(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case slices.Contains(imageExts, ext):
		return engine.MediaImage
	case slices.Contains(audioExts, ext):
		return engine.MediaAudio
	}
	return ""
}

// canAttach says whether the bundle takes a kind, as a sentence if not.
func (m *Model) canAttach(kind string) error {
	if slices.Contains(m.info.Media, kind) {
		return nil
	}
	file := "vision_fp16.mlmodelc"
	if kind == engine.MediaAudio {
		file = "audio_fp16.mlmodelc"
	}
	return fmt.Errorf("this bundle takes no %s: it has no %s next to its manifest", map[string]string{engine.MediaImage: "images", engine.MediaAudio: "audio"}[kind], file)
}

// expandPath resolves ~ and quotes in a typed or pasted path.
func expandPath(p string) string {
	p = strings.TrimSpace(p)
	if w, quoted := splitArgs(p); quoted && len(w) == 1 {
		p = w[0]
	}
	p = strings.ReplaceAll(p, `\ `, " ") // a path dropped on a terminal escapes its spaces
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if strings.HasPrefix(p, "file://") {
		p = strings.TrimPrefix(p, "file://")
	}
	return p
}

// attachFile queues a file for the next message.
func (m *Model) attachFile(kind, arg string) tea.Cmd {
	if err := m.canAttach(kind); err != nil {
		return m.errorToast(err.Error())
	}
	p := expandPath(arg)
	if p == "" {
		return m.errorToast(fmt.Sprintf("/%s needs a file: /%s PATH", kind, kind))
	}
	if slices.ContainsFunc(m.attached, func(f engine.MediaFile) bool { return f.Path == p }) {
		return m.infoToast(filepath.Base(p) + " is attached already.")
	}
	m.attached = append(m.attached, engine.MediaFile{Kind: kind, Path: p})
	return m.infoToast(fmt.Sprintf("Attached %s; it goes with your next message (/detach drops it).", filepath.Base(p)))
}

func (m *Model) cmdImage(arg string) tea.Cmd { return m.attachFile(engine.MediaImage, arg) }
func (m *Model) cmdAudio(arg string) tea.Cmd { return m.attachFile(engine.MediaAudio, arg) }

// offerPastedPath asks whether to attach a pasted or dropped path that
// names a picture or a clip the bundle takes; it reports whether it asked.
func (m *Model) offerPastedPath(text string) (tea.Cmd, bool) {
	if strings.Contains(strings.TrimSpace(text), "\n") {
		return nil, false
	}
	p := expandPath(text)
	kind := mediaKindOf(p)
	if kind == "" || m.canAttach(kind) != nil || !filepath.IsAbs(p) && !strings.HasPrefix(p, ".") {
		return nil, false
	}
	m.confirm.Ask(fmt.Sprintf("Attach %s as %s to your next message?", filepath.Base(p), map[string]string{engine.MediaImage: "an image", engine.MediaAudio: "a clip"}[kind]), m.focus,
		func(m *Model) tea.Cmd { return m.attachFile(kind, p) })
	m.setFocus(focusConfirm)
	return nil, true
}

// attachedView is the queue of files for the next message, one line.
func (m *Model) attachedView() string {
	if len(m.attached) == 0 {
		return ""
	}
	var parts []string
	for _, f := range m.attached {
		icon := "▣"
		if f.Kind == engine.MediaAudio {
			icon = "♪"
		}
		parts = append(parts, icon+" "+filepath.Base(f.Path))
	}
	line := " attached: " + strings.Join(parts, "  ") + "  (sent with the next message)"
	return m.st.Chip.Render(padRight(xansi.Truncate(line, m.width, "…"), m.width))
}

// pathCompletion lists files under the directory of a typed path, for the
// /image and /audio completion. The directory is read by a command, not in
// Update: the list arrives as a dirListedMsg and completion runs again.
type pathCompletion struct {
	dir     string   // the directory listed
	entries []string // its names; directories end in "/"
	want    string   // a directory to list next
	asked   string   // the directory a listing was requested for
}

type dirListedMsg struct {
	dir     string
	entries []string
}

// choices returns the completions of typed among files of a kind, or asks
// for the directory's listing.
func (p *pathCompletion) choices(typed, kind string) []string {
	raw := expandPath(typed)
	dir, base := filepath.Split(raw)
	if dir == "" {
		dir = "."
	}
	if dir != p.dir {
		p.want = dir
		return nil
	}
	prefix := typed[:len(typed)-len(base)]
	var out []string
	for _, e := range p.entries {
		if !strings.HasPrefix(e, base) || strings.HasPrefix(e, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if strings.HasSuffix(e, "/") || mediaKindOf(e) == kind {
			out = append(out, prefix+e)
		}
	}
	return out
}

// fetch returns the command that lists the wanted directory, once.
func (p *pathCompletion) fetch() tea.Cmd {
	dir := p.want
	if dir == "" || dir == p.asked {
		return nil
	}
	p.asked = dir
	return func() tea.Msg {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return dirListedMsg{dir: dir}
		}
		var names []string
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
			if len(names) == 2000 { // a huge folder: enough to complete from
				break
			}
		}
		slices.Sort(names)
		return dirListedMsg{dir: dir, entries: names}
	}
}

// listed takes a directory listing in.
func (p *pathCompletion) listed(msg dirListedMsg) {
	p.dir, p.entries = msg.dir, msg.entries
	if p.want == msg.dir {
		p.want = ""
	}
}

func (m *Model) cmdDetach(string) tea.Cmd {
	if len(m.attached) == 0 {
		return m.infoToast("Nothing is attached.")
	}
	n := len(m.attached)
	m.attached = nil
	return m.infoToast(fmt.Sprintf("Dropped %d queued attachment(s).", n))
}
