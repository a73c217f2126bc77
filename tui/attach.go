package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/media"
	"github.com/orchard-llm/orchard/regfile"
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
	return engine.NoEncoder(kind, m.info.Family, "")
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

// attachFile checks a file and queues it for the next message. The check
// (the file opens and its first bytes are a picture or a clip of the
// kind asked) reads the file, so it runs in a command; the file joins the
// queue when attachChecked says so.
func (m *Model) attachFile(kind, arg string) tea.Cmd {
	if err := m.canAttach(kind); err != nil {
		return m.errorToast(err.Error())
	}
	p := expandPath(arg)
	if p == "" {
		return m.errorToast(fmt.Sprintf("/%s needs a file: /%s PATH", kind, kind))
	}
	same := func(f engine.MediaFile) bool { return f.Path == p }
	if slices.ContainsFunc(m.attached, same) || slices.ContainsFunc(m.checking, same) {
		return m.infoToast(filepath.Base(p) + " is attached already.")
	}
	f := engine.MediaFile{Kind: kind, Path: p}
	m.checking = append(m.checking, f)
	return func() tea.Msg {
		format, err := probeFile(f)
		return attachCheckedMsg{file: f, format: format, err: err}
	}
}

// attachCheckedMsg is the verdict on a file being attached.
type attachCheckedMsg struct {
	file   engine.MediaFile
	format string
	err    error
}

// probeFile opens a file to attach (a regular file only: a FIFO never
// blocks) and judges its first bytes as the engine's decoders will.
func probeFile(f engine.MediaFile) (string, error) {
	name := filepath.Base(f.Path)
	fh, err := regfile.Open(f.Path)
	if err != nil {
		return "", fmt.Errorf("%s: %s", f.Path, regfile.Reason(err))
	}
	defer fh.Close()
	head := make([]byte, media.ProbeBytes)
	n, err := io.ReadFull(fh, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("%s: %s", f.Path, regfile.Reason(err))
	}
	return media.Probe(f.Kind, name, head[:n], media.DefaultOptions())
}

// attachChecked queues a checked file, or says why it was not attached.
func (m *Model) attachChecked(msg attachCheckedMsg) tea.Cmd {
	i := slices.IndexFunc(m.checking, func(f engine.MediaFile) bool { return f.Path == msg.file.Path })
	if i < 0 {
		return nil // dropped meanwhile (/detach)
	}
	m.checking = slices.Delete(m.checking, i, i+1)
	name := filepath.Base(msg.file.Path)
	if msg.err != nil {
		return m.errorToast(fmt.Sprintf("%s was not attached: %s", name, msg.err))
	}
	m.attached = append(m.attached, msg.file)
	what := ""
	if msg.format != "system" {
		what = " (" + strings.ToUpper(msg.format) + ")"
	}
	return m.infoToast(fmt.Sprintf("Attached %s%s; it goes with your next message (/detach %s drops it).", name, what, quoteName(name)))
}

func (m *Model) cmdImage(arg string) tea.Cmd { return m.attachFile(engine.MediaImage, arg) }
func (m *Model) cmdAudio(arg string) tea.Cmd { return m.attachFile(engine.MediaAudio, arg) }

// offerPastedPath asks whether to attach a pasted or dropped path that
// names a picture or a clip the bundle takes; it reports whether it asked.
// y attaches it, esc drops it, n (any other key) pastes it as text.
func (m *Model) offerPastedPath(text string) (tea.Cmd, bool) {
	if strings.Contains(strings.TrimSpace(text), "\n") {
		return nil, false
	}
	p := expandPath(text)
	kind := mediaKindOf(p)
	if kind == "" || m.canAttach(kind) != nil || !filepath.IsAbs(p) && !strings.HasPrefix(p, ".") {
		return nil, false
	}
	m.confirm.Ask(fmt.Sprintf("Attach %s as %s to your next message?", filepath.Base(p), map[string]string{engine.MediaImage: "an image", engine.MediaAudio: "a clip"}[kind]),
		func(m *Model) tea.Cmd { return m.attachFile(kind, p) })
	m.confirm.Otherwise("y attaches · n pastes the text · esc neither", func(m *Model) tea.Cmd {
		_, cmd := m.input.Update(tea.PasteMsg{Content: text})
		m.updateCompletion()
		return cmd
	})
	m.open(focusConfirm)
	return nil, true
}

// attachedView is the queue of files for the next message, one line;
// files still being checked say so.
func (m *Model) attachedView() string {
	if len(m.attached)+len(m.checking) == 0 {
		return ""
	}
	var parts []string
	for _, f := range m.attached {
		parts = append(parts, mediaIcon(f.Kind)+" "+safeLine(filepath.Base(f.Path)))
	}
	for _, f := range m.checking {
		parts = append(parts, mediaIcon(f.Kind)+" "+safeLine(filepath.Base(f.Path))+" (checking…)")
	}
	line := " attached: " + strings.Join(parts, "  ") + "  (sent with the next message)"
	return m.st.Chip.Render(padRight(xansi.Truncate(line, m.width, "…"), m.width))
}

func mediaIcon(kind string) string {
	if kind == engine.MediaAudio {
		return "♪"
	}
	return "▣"
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

// Choices returns the completions of typed among files of a kind, or asks
// for the directory's listing.
func (p *pathCompletion) Choices(typed, kind string) []string {
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

// Fetch returns the command that lists the wanted directory, once.
func (p *pathCompletion) Fetch() tea.Cmd {
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

// Listed takes a directory listing in.
func (p *pathCompletion) Listed(msg dirListedMsg) {
	p.dir, p.entries = msg.dir, msg.entries
	if p.want == msg.dir {
		p.want = ""
	}
}

// cmdDetach drops one queued file (by name, as its chip shows it, or by
// path), or all of them.
func (m *Model) cmdDetach(arg string) tea.Cmd {
	if len(m.attached)+len(m.checking) == 0 {
		return m.infoToast("Nothing is attached.")
	}
	name := oneName(arg)
	if name == "" {
		n := len(m.attached) + len(m.checking)
		m.attached, m.checking = nil, nil
		return m.infoToast(fmt.Sprintf("Dropped %s.", plural(n, "attachment")))
	}
	named := func(f engine.MediaFile) bool {
		return f.Path == name || filepath.Base(f.Path) == name || f.Path == expandPath(name)
	}
	if i := slices.IndexFunc(m.attached, named); i >= 0 {
		m.attached = slices.Delete(m.attached, i, i+1)
	} else if i := slices.IndexFunc(m.checking, named); i >= 0 {
		m.checking = slices.Delete(m.checking, i, i+1)
	} else {
		return m.errorToast(fmt.Sprintf("No attachment is called %s; attached: %s.", name, strings.Join(m.attachmentNames(), ", ")))
	}
	return m.infoToast(fmt.Sprintf("Dropped %s; %s.", name, m.queueText()))
}

// attachmentNames are the queued files as their chips name them.
func (m *Model) attachmentNames() []string {
	var names []string
	for _, f := range slices.Concat(m.attached, m.checking) {
		names = append(names, filepath.Base(f.Path))
	}
	return names
}

// queueText says what the next message takes.
func (m *Model) queueText() string {
	names := m.attachmentNames()
	switch len(names) {
	case 0:
		return "nothing is attached now"
	case 1:
		return names[0] + " stays attached"
	}
	return listNames(names) + " stay attached"
}

// keepAttachments puts the files of a message that was not sent back in
// the queue, but the one the error names (a file the engine could not
// read), and says which were kept and which dropped.
func (m *Model) keepAttachments(files []engine.MediaFile, err error) string {
	if len(files) == 0 {
		return ""
	}
	bad := badAttachment(files, err)
	var dropped string
	if bad >= 0 {
		dropped = filepath.Base(files[bad].Path)
		files = slices.Delete(slices.Clone(files), bad, bad+1)
	}
	for _, f := range slices.Backward(files) {
		if !slices.ContainsFunc(m.attached, func(g engine.MediaFile) bool { return g.Path == f.Path }) {
			m.attached = slices.Insert(m.attached, 0, f)
		}
	}
	kept := "kept for the next message: " + listNames(m.attachmentNames()) + " (/detach NAME drops one)."
	switch {
	case dropped == "":
		return " K" + kept[1:]
	case len(m.attached) == 0:
		return " " + dropped + " was dropped."
	}
	return " " + dropped + " was dropped; " + kept
}

// listNames joins names as a sentence does: a, b and c.
func listNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// badAttachment is the index of the file an error is about, −1 when it
// names none: the engine's FileError in process, the file's path or name
// in the text of an error from a server.
func badAttachment(files []engine.MediaFile, err error) int {
	var fe *engine.FileError
	if errors.As(err, &fe) {
		for i, f := range files {
			if fe.Path == f.Path || fe.Path == f.Name || fe.Path == filepath.Base(f.Path) {
				return i
			}
		}
	}
	if err == nil {
		return -1
	}
	msg := err.Error()
	for i, f := range files {
		if f.Path != "" && strings.Contains(msg, f.Path) {
			return i
		}
	}
	// By name: the one named, or the longest of names inside one another
	// (apple.png in apple.png.wav).
	var named []int
	for i, f := range files {
		if strings.Contains(msg, filepath.Base(f.Path)) {
			named = append(named, i)
		}
	}
	named = slices.DeleteFunc(named, func(i int) bool {
		return slices.ContainsFunc(named, func(j int) bool {
			a, b := filepath.Base(files[i].Path), filepath.Base(files[j].Path)
			return len(b) > len(a) && strings.Contains(b, a)
		})
	})
	if len(named) != 1 {
		return -1 // none, or two: which one is unclear
	}
	return named[0]
}
