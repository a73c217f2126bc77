package tui

import (
	"errors"
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
	checkAttachments(m)
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
	if m.focused() != focusConfirm || !strings.Contains(m.confirm.prompt, "Attach orchard photo.png as an image") {
		t.Fatalf("focus %v prompt %q", m.focused(), m.confirm.prompt)
	}
	m.Update(press("y"))
	checkAttachments(m)
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
	if len(n.attached) != 0 || !strings.Contains(n.toast.text, "stateful3 bundles ship none") || !strings.Contains(n.toast.text, "vision_fp16.mlmodelc") {
		t.Errorf("text-only bundle: attached %v, toast %q", n.attached, n.toast.text)
	}
}

// checkAttachments runs the checks /image and /audio started, as the
// program runs their commands, and hands the verdicts to the model.
func checkAttachments(m *Model) {
	for len(m.checking) > 0 {
		f := m.checking[0]
		format, err := probeFile(f)
		m.Update(attachCheckedMsg{file: f, format: format, err: err})
	}
}

// pictureAndClip writes apple.png and hi.wav in a folder of their own.
func pictureAndClip(t *testing.T) (dir, pic, wav string) {
	t.Helper()
	dir = t.TempDir()
	pic, wav = filepath.Join(dir, "apple.png"), filepath.Join(dir, "hi.wav")
	writeTestPNG(t, pic)
	if err := os.WriteFile(wav, testmedia.WAV(0.5, 440), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, pic, wav
}

// TestAttachingChecksTheFileAtOnce: /image and /audio judge the file when
// it is attached, in a command (Update reads nothing): missing, a folder,
// not a picture, a picture given to /audio — each refused there with the
// reason, not when the message is sent. A file still being checked holds
// the message back.
func TestAttachingChecksTheFileAtOnce(t *testing.T) {
	dir, pic, wav := pictureAndClip(t)
	notimage := filepath.Join(dir, "notimage.png")
	os.WriteFile(notimage, []byte("hello"), 0o600)
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 100, 30, Options{})

	for _, c := range []struct {
		cmd, want string
	}{
		{"/image " + filepath.Join(dir, "missing.png"), "missing.png was not attached: " + filepath.Join(dir, "missing.png") + ": missing"},
		{"/image " + dir, "is a folder, not a regular file"},
		{"/image " + notimage, "notimage.png was not attached: image notimage.png: unsupported format: orchard reads PNG"},
		{"/audio " + pic, "apple.png is a PNG picture, not audio"},
		{"/image " + wav, "hi.wav is WAV audio, not a picture"},
	} {
		cmd := m.runCommand(c.cmd)
		if cmd == nil || len(m.checking) != 1 || len(m.attached) != 0 {
			t.Fatalf("%s: checked in Update (checking %v, attached %v)", c.cmd, m.checking, m.attached)
		}
		if v := xansi.Strip(m.View().Content); !strings.Contains(v, "(checking…)") {
			t.Errorf("%s: the check is not shown:\n%s", c.cmd, v)
		}
		checkAttachments(m)
		if len(m.attached) != 0 || m.toast.kind != toastError || !strings.Contains(m.toast.text, c.want) {
			t.Errorf("%s: attached %v, toast %q; want %q", c.cmd, m.attached, m.toast.text, c.want)
		}
	}

	m.runCommand("/image " + pic)
	typeText(m, "look")
	m.Update(press("enter"))
	if slices.ContainsFunc(f.Calls(), func(c string) bool { return strings.HasPrefix(c, "Send") }) || m.input.Value() != "look" {
		t.Fatalf("sent while a file was checked: %v", f.Calls())
	}
	checkAttachments(m)
	if !strings.Contains(m.toast.text, "Attached apple.png (PNG); it goes with your next message (/detach apple.png drops it).") {
		t.Errorf("toast %q", m.toast.text)
	}
	m.runCommand("/audio " + wav)
	checkAttachments(m)
	if len(m.attached) != 2 {
		t.Fatalf("attached %v", m.attached)
	}
}

// TestAttachmentsKeptAfterAFailedSend: a message the engine refuses for
// one bad file leaves the others queued, says which was dropped and why;
// enter sends the text again with them. /detach NAME drops one (its names
// completed), /detach all.
func TestAttachmentsKeptAfterAFailedSend(t *testing.T) {
	dir, pic, wav := pictureAndClip(t)
	broken := filepath.Join(dir, "broken.png")
	os.WriteFile(broken, []byte("\x89PNG\r\n\x1a\nnot really"), 0o600) // passes the check, fails to decode
	f := testFake(t, FakeOptions{})
	m := newTestModel(t, f, 120, 30, Options{})
	for _, c := range []string{"/image " + pic, "/audio " + wav, "/image " + broken} {
		m.runCommand(c)
		checkAttachments(m)
	}
	if len(m.attached) != 3 {
		t.Fatalf("attached %v (toast %q)", m.attached, m.toast.text)
	}
	typeText(m, "look")
	m.Update(press("enter"))
	if len(m.attached) != 0 {
		t.Fatalf("the queue went with the message: %v", m.attached)
	}
	// The engine could not read broken.png (a FileError, as in process).
	pump(t, m, f, func() bool { return !m.replying() })
	if got := m.attachmentNames(); !slices.Equal(got, []string{"apple.png", "hi.wav"}) {
		t.Fatalf("kept %v", got)
	}
	want := "The message was not sent: image " + broken + ": png header: unexpected EOF. " +
		"broken.png was dropped; kept for the next message: apple.png and hi.wav (/detach NAME drops one)."
	if m.toast.text != want {
		t.Errorf("toast %q\nwant  %q", m.toast.text, want)
	}
	if v := xansi.Strip(m.View().Content); !strings.Contains(v, "attached: ▣ apple.png  ♪ hi.wav") {
		t.Errorf("the queue is not shown:\n%s", v)
	}
	// enter sends the message again, with the files kept.
	if m.input.Value() != "look" {
		t.Fatalf("input %q", m.input.Value())
	}
	m.Update(press("enter"))
	pump(t, m, f, func() bool { return !m.replying() })
	if !slices.Contains(f.Calls(), "Send look +image:"+pic+" +audio:"+wav) || len(m.attached) != 0 {
		t.Fatalf("calls %q, attached %v", f.Calls(), m.attached)
	}
	v := xansi.Strip(m.View().Content)
	if !strings.Contains(v, "▣ apple.png") || !strings.Contains(v, "♪ hi.wav") {
		t.Errorf("no chips in the conversation:\n%s", v)
	}

	// A failure that names no file keeps them all.
	m.runCommand("/image " + pic)
	m.runCommand("/audio " + wav)
	checkAttachments(m)
	m.turn.sentFiles, m.attached = m.attached, nil
	m.conv.AddUser("and again")
	send(m, engine.Failed{Op: "send", Err: errors.New("the conversation no longer fits the context")})
	if got := m.attachmentNames(); !slices.Equal(got, []string{"apple.png", "hi.wav"}) || !strings.HasSuffix(m.toast.text, "context. Kept for the next message: apple.png and hi.wav (/detach NAME drops one).") {
		t.Fatalf("kept %v, toast %q", got, m.toast.text)
	}

	// /detach completes the names and drops one.
	m.input.Reset()
	typeText(m, "/detach h")
	if !m.comp.Visible() || m.comp.items[0].insert != "/detach hi.wav" {
		t.Fatalf("completion %+v", m.comp.items)
	}
	m.Update(press("tab"))
	m.Update(press("enter"))
	if got := m.attachmentNames(); !slices.Equal(got, []string{"apple.png"}) || m.toast.text != "Dropped hi.wav; apple.png stays attached." {
		t.Fatalf("after /detach hi.wav: %v, toast %q", got, m.toast.text)
	}
	m.runCommand("/detach pear.png")
	if !strings.Contains(m.toast.text, "No attachment is called pear.png; attached: apple.png.") {
		t.Errorf("toast %q", m.toast.text)
	}
	m.runCommand("/detach")
	if len(m.attached) != 0 || m.toast.text != "Dropped 1 attachment." {
		t.Errorf("/detach: %v, toast %q", m.attached, m.toast.text)
	}
}

// TestBadAttachment: the file a failed send is about, from the engine's
// FileError in process or the text of an error from a server.
func TestBadAttachment(t *testing.T) {
	files := []engine.MediaFile{{Kind: "image", Path: "/p/apple.png"}, {Kind: "image", Path: "/p/broken.png"}, {Kind: "audio", Path: "/q/apple.png.wav"}}
	for _, c := range []struct {
		err  error
		want int
	}{
		{&engine.FileError{Path: "/p/broken.png", Err: errors.New("x")}, 1},
		{fmt.Errorf("send: %w", &engine.FileError{Path: "/p/broken.png", Err: errors.New("x")}), 1},
		{errors.New("image broken.png: png header: unexpected EOF"), 1}, // a server names the file by its name
		{errors.New("cannot send /q/apple.png.wav: missing"), 2},
		{errors.New("image apple.png: unsupported format"), 0},
		{errors.New("audio apple.png.wav: unsupported format"), 2}, // not apple.png
		{errors.New("apple.png and broken.png"), -1},
		{errors.New("the conversation no longer fits the context"), -1},
		{nil, -1},
	} {
		if got := badAttachment(files, c.err); got != c.want {
			t.Errorf("%v: %d, want %d", c.err, got, c.want)
		}
	}
}

// TestPastedPathQuestion: y attaches the pasted path, n pastes it as
// text (it was dropped before), esc does neither.
func TestPastedPathQuestion(t *testing.T) {
	dir := t.TempDir()
	pic := filepath.Join(dir, "apple.png")
	writeTestPNG(t, pic)
	m := newTestModel(t, testFake(t, FakeOptions{}), 100, 30, Options{})
	for _, c := range []struct {
		key      string
		input    string
		attached int
	}{
		{"n", pic, 0},
		{"x", pic, 0},
		{"esc", "", 0},
		{"y", "", 1},
	} {
		m.input.Reset()
		m.Update(tea.PasteMsg{Content: pic})
		if m.focused() != focusConfirm || !strings.Contains(xansi.Strip(m.View().Content), "y attaches · n pastes the text · esc neither") {
			t.Fatalf("%s: no question:\n%s", c.key, xansi.Strip(m.View().Content))
		}
		m.Update(press(c.key))
		checkAttachments(m)
		if m.focused() != focusInput || m.input.Value() != c.input || len(m.attached) != c.attached {
			t.Errorf("%s: focus %v, input %q, attached %v", c.key, m.focused(), m.input.Value(), m.attached)
		}
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
	m.pics.Enable(true)
	if q := runCmds(m.pics.Query()); len(q) != 1 || !strings.Contains(fmt.Sprint(q[0]), "a=q") {
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
	if cmd := m.pics.Send([]engine.Attachment{att}); len(runCmds(cmd)) != 0 {
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
