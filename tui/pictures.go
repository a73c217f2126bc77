package tui

import (
	"bytes"
	"image/png"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/termimg"
)

// pictures shows attachment thumbnails as real pictures where the
// terminal says it can: it asks at start (the kitty graphics query,
// XTVERSION, DA1 — never assumed from the environment alone) and, on a
// terminal that draws kitty Unicode placeholders (kitty 0.28+, Ghostty;
// older kittys reject them), sends each thumbnail once as
// a virtual placement that the conversation draws over Unicode
// placeholder cells, which a cell-based screen redraws and scrolls like
// text. Elsewhere thumbnails are coloured half blocks (thumb.go).
type pictures struct {
	enabled bool // the output is a terminal that may answer
	det     *termimg.Detector
	kitty   bool
	tmux    bool
	ids     map[string]int // image sha256 → kitty image id, sent
	next    int
}

func newPictures(env []string, enabled bool) *pictures {
	e := termimg.EnvFrom(func(k string) string { return lookupEnv(env, k) })
	return &pictures{enabled: enabled, det: termimg.NewDetector(e), ids: map[string]int{}, next: 0x4f5200}
}

// Enable says whether pictures may be sent: only to a real terminal,
// in colour.
func (p *pictures) Enable(on bool) { p.enabled = on }

// Query asks the terminal, once, at start.
func (p *pictures) Query() tea.Cmd {
	if !p.enabled {
		return nil
	}
	if q := p.det.Query(); q != "" {
		return tea.Raw(q)
	}
	return nil
}

// Feed takes a terminal reply; it reports whether detection has just
// decided on the kitty protocol.
func (p *pictures) Feed(msg tea.Msg) bool {
	if !p.enabled || p.det.Done() {
		return false
	}
	switch e := msg.(type) {
	case uv.KittyGraphicsEvent:
		p.det.FeedKitty(e.Options.ID, string(e.Payload))
	case tea.TerminalVersionMsg:
		p.det.FeedVersion(e.Name)
	case uv.PrimaryDeviceAttributesEvent:
		p.det.FeedDA1(e)
		p.kitty, p.tmux = p.det.Placeholders(), p.det.Tmux()
		return p.kitty
	}
	return false
}

// thumbGrid is the cells a thumbnail takes: thumbCols wide, as many rows
// as keep its aspect (a cell is about twice as tall as wide).
func thumbGrid(pngData []byte) (rows, cols int, ok bool) {
	cfg, err := png.DecodeConfig(bytes.NewReader(pngData))
	if err != nil || cfg.Width == 0 || cfg.Height == 0 {
		return 0, 0, false
	}
	cols = thumbCols
	rows = max(1, min(thumbRows, (cfg.Height*cols+cfg.Width)/(2*cfg.Width)))
	return rows, cols, true
}

// Send transmits the thumbnails of atts not sent yet, as virtual
// placements; the conversation then draws their placeholders.
func (p *pictures) Send(atts []engine.Attachment) tea.Cmd {
	if !p.kitty {
		return nil
	}
	var out []tea.Cmd
	for _, a := range atts {
		if a.Kind != engine.MediaImage || len(a.Thumbnail) == 0 || a.SHA256 == "" {
			continue
		}
		if _, sent := p.ids[a.SHA256]; sent {
			continue
		}
		rows, cols, ok := thumbGrid(a.Thumbnail)
		if !ok {
			continue
		}
		p.next++
		p.ids[a.SHA256] = p.next
		out = append(out, tea.Raw(termimg.KittyImage(a.Thumbnail, termimg.Options{ID: p.next, Cols: cols, Rows: rows, Virtual: true, Tmux: p.tmux})))
	}
	return tea.Batch(out...)
}

// placeholder is the cells a sent thumbnail is drawn over, or nil.
func (p *pictures) placeholder(a engine.Attachment) []string {
	if p == nil || !p.kitty {
		return nil
	}
	id, ok := p.ids[a.SHA256]
	if !ok {
		return nil
	}
	rows, cols, _ := thumbGrid(a.Thumbnail)
	return termimg.KittyPlaceholder(id, rows, cols)
}

// SendAll transmits every thumbnail of a conversation (after detection
// decided, or a load).
func (p *pictures) SendAll(msgs []*chatMsg) tea.Cmd {
	var cmds []tea.Cmd
	for _, m := range msgs {
		cmds = append(cmds, p.Send(m.attachments))
	}
	return tea.Batch(cmds...)
}

// SendPictures transmits the pictures of every message to the terminal
// (after it said it shows them, or a conversation loaded).
func (c *conversation) SendPictures() tea.Cmd {
	if c.pics == nil {
		return nil
	}
	return c.pics.SendAll(c.msgs)
}
