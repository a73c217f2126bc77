package tui

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	xansi "github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/kitty"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/testmedia"
	"github.com/orchard-llm/orchard/termimg"
)

func writeTestPNG(t *testing.T, path string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 32, 16))
	for y := range 16 {
		for x := range 32 {
			img.Set(x, y, color.RGBA{uint8(x * 8), uint8(y * 16), 200, 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	png.Encode(f, img)
	f.Close()
}

// TestAttachments: /image queues a file for the next message (completing
// its path from a listing read outside Update), the message goes with it,
// the conversation shows its chip; a pasted path asks first; a bundle
// without the encoder refuses naming the file it lacks.
func TestAttachments(t *testing.T) {
	dir := t.TempDir()
	pic := filepath.Join(dir, "orchard photo.png")
	writeTestPNG(t, pic)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600)
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 100, 30, Options{})

	// Completion: the directory is listed by a command, then offered.
	var listed *dirListedMsg
	for _, r := range "/image " + dir + "/or" {
		_, cmd := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		for _, msg := range runCmds(cmd) {
			if d, ok := msg.(dirListedMsg); ok {
				listed = &d
			}
		}
	}
	if listed == nil || !slices.Contains(listed.entries, "orchard photo.png") {
		t.Fatalf("listing: %+v", listed)
	}
	m.input.SetValue("/image " + dir + "/or")
	m.Update(*listed)
	if !m.comp.Visible() || !strings.Contains(m.comp.items[0].label, "orchard photo.png") || len(m.comp.items) != 1 {
		t.Fatalf("completion %+v", m.comp.items)
	}
	m.Update(press("tab"))
	m.Update(press("enter"))
	if len(m.attached) != 1 || m.attached[0].Path != pic {
		t.Fatalf("attached %+v (input %q)", m.attached, m.input.Value())
	}
	if v := xansi.Strip(m.View().Content); !strings.Contains(v, "attached: ▣ orchard photo.png") {
		t.Errorf("the queue is not shown:\n%s", v)
	}

	typeText(m, "What is in it?")
	m.Update(press("enter"))
	pump(t, m, f, func() bool { return !m.replying() })
	calls := f.Calls()
	if !slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "Send What is in it? +image:"+pic) }) {
		t.Errorf("calls %q", calls)
	}
	if len(m.attached) != 0 {
		t.Errorf("the queue was not emptied: %+v", m.attached)
	}
	v := xansi.Strip(m.View().Content)
	if !strings.Contains(v, "▣ orchard photo.png") || !strings.Contains(v, "16 tokens") {
		t.Errorf("no chip in the conversation:\n%s", v)
	}

	// A pasted path asks; y attaches.
	m.Update(tea.PasteMsg{Content: "'" + pic + "'"})
	if m.focus != focusConfirm || !strings.Contains(m.confirm.prompt, "Attach orchard photo.png as an image") {
		t.Fatalf("focus %v prompt %q", m.focus, m.confirm.prompt)
	}
	m.Update(press("y"))
	if len(m.attached) != 1 {
		t.Errorf("y did not attach: %+v", m.attached)
	}
	m.runCommand("/detach")
	if len(m.attached) != 0 {
		t.Error("/detach left the queue")
	}

	// A text-only bundle refuses.
	g := testFake(t, FakeOptions{Info: engine.ModelInfo{Name: "text", Family: "stateful3", Context: 128}})
	n := newTestModel(t, g, 100, 30, Options{})
	n.runCommand("/image " + pic)
	if len(n.attached) != 0 || !strings.Contains(n.toast.text, "vision_fp16.mlmodelc") {
		t.Errorf("text-only bundle: attached %v, toast %q", n.attached, n.toast.text)
	}
}

// TestHalfBlockThumbnail: a PNG draws as coloured half blocks within the
// thumbnail box, keeping its aspect ratio.
func TestHalfBlockThumbnail(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.png")
	writeTestPNG(t, p)
	data, _ := os.ReadFile(p)
	lines := halfBlocks(data, 16)
	if len(lines) != 4 { // 32×16 into 16 columns: 16×8 pixels, 4 rows of half blocks
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if w := xansi.StringWidth(l); w != 16 || !strings.Contains(l, "▀") {
			t.Errorf("line width %d: %q", w, l)
		}
	}
	if halfBlocks([]byte("not a png"), 16) != nil {
		t.Error("garbage drew something")
	}
}

// runCmds runs a command (and batches) and returns the messages.
func runCmds(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmds(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// TestKittyThumbnails: where the terminal answers the kitty graphics query
// (and only then), a thumbnail is sent once as a virtual placement and the
// conversation draws its placeholder cells instead of half blocks.
func TestKittyThumbnails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.png")
	writeTestPNG(t, p)
	thumb, _ := os.ReadFile(p)
	att := engine.Attachment{Kind: engine.MediaImage, Name: "t.png", SHA256: "abc", Spans: []int{16}, Thumbnail: thumb}

	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 100, 30, Options{Env: []string{"HOME=" + dir, "TERM=xterm-256color"}})
	m.pics.enabled = true
	if q := runCmds(m.pics.query()); len(q) != 1 || !strings.Contains(fmt.Sprint(q[0]), "a=q") {
		t.Fatalf("query %v", q)
	}
	// Before any answer: half blocks.
	m.conv.AddUser("look")
	send(m, engine.Started{Turn: 0, Attachments: []engine.Attachment{att}})
	if v := m.View().Content; strings.Contains(v, "\U0010EEEE") || !strings.Contains(v, "▀") {
		t.Fatal("placeholders drawn before the terminal answered")
	}
	// The terminal answers: kitty OK, a kitty that draws placeholders, then DA1.
	m.Update(uv.KittyGraphicsEvent{Options: kitty.Options{ID: termimg.KittyQueryID}, Payload: []byte("OK")})
	m.Update(tea.TerminalVersionMsg{Name: "kitty(0.35.2)"})
	_, cmd := m.Update(uv.PrimaryDeviceAttributesEvent{62, 22})
	raws := runCmds(cmd)
	sent := false
	for _, r := range raws {
		if rm, ok := r.(tea.RawMsg); ok && strings.Contains(fmt.Sprint(rm.Msg), "U=1") {
			sent = true
		}
	}
	if !sent {
		t.Fatalf("no virtual placement sent: %v", raws)
	}
	m.Update(frameMsg{})
	if v := m.View().Content; !strings.Contains(v, "\U0010EEEE") {
		t.Error("no placeholder cells in the conversation")
	}
	// A second send of the same picture transmits nothing again.
	if cmd := m.pics.send([]engine.Attachment{att}); len(runCmds(cmd)) != 0 {
		t.Error("the picture was sent twice")
	}
}

// TestCheckpointsThumbnailFollowsSelection: the panel draws the selected
// checkpoint's picture from its cache, and a new selection (or width)
// draws the new one.
func TestCheckpointsThumbnailFollowsSelection(t *testing.T) {
	c := newCheckpoints(newStyles(true, false))
	c.SetSize(100, 30)
	a, b := testmedia.PNG(1, 64, 48), testmedia.PNG(5, 64, 48)
	c.SetList([]engine.CheckpointInfo{{Name: "a", Thumbnail: a, Media: 1}, {Name: "b", Thumbnail: b, Media: 1}}, "")
	c.focused = true
	first := c.View()
	if again := c.View(); again != first {
		t.Fatal("a redraw with nothing new differs")
	}
	c.cursor = 1
	second := c.View()
	if row := halfBlocks(b, thumbCols)[2]; !strings.Contains(second, row) || strings.Contains(first, row) {
		t.Error("the panel still draws the first checkpoint's picture")
	}
}
