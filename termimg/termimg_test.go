package termimg

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"reflect"
	"strings"
	"testing"

	uv "github.com/charmbracelet/ultraviolet"
)

func TestKittyImage(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		o    Options
		want string
	}{
		{"small", []byte("PNG!"), Options{ID: 7, Cols: 4, Rows: 2, KeepCursor: true},
			"\x1b_Ga=T,f=100,t=d,q=2,i=7,c=4,r=2,C=1;UE5HIQ==\x1b\\"},
		{"plain", []byte("PNG!"), Options{}, "\x1b_Ga=T,f=100,t=d,q=2;UE5HIQ==\x1b\\"},
		{"tmux", []byte("PNG!"), Options{Tmux: true},
			"\x1bPtmux;\x1b\x1b_Ga=T,f=100,t=d,q=2;UE5HIQ==\x1b\x1b\\\x1b\\"},
		{"exactly one chunk", bytes.Repeat([]byte{0}, 3072), Options{},
			"\x1b_Ga=T,f=100,t=d,q=2;" + strings.Repeat("A", 4096) + "\x1b\\"},
		{"two chunks", bytes.Repeat([]byte{0}, 3075), Options{},
			"\x1b_Ga=T,f=100,t=d,q=2,m=1;" + strings.Repeat("A", 4096) + "\x1b\\" + "\x1b_Gm=0;AAAA\x1b\\"},
		{"three chunks", bytes.Repeat([]byte{0}, 3*3072), Options{},
			"\x1b_Ga=T,f=100,t=d,q=2,m=1;" + strings.Repeat("A", 4096) + "\x1b\\" +
				"\x1b_Gm=1;" + strings.Repeat("A", 4096) + "\x1b\\" +
				"\x1b_Gm=0;" + strings.Repeat("A", 4096) + "\x1b\\"},
	} {
		if got := KittyImage(c.data, c.o); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, trunc(got), trunc(c.want))
		}
	}
	if got := KittyDelete(7, Options{}); got != "\x1b_Ga=d,d=I,i=7,q=2\x1b\\" {
		t.Errorf("delete %q", got)
	}
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:100] + "…" + s[len(s)-100:]
	}
	return s
}

func TestITerm2Image(t *testing.T) {
	got := ITerm2Image("a.png", []byte("PNG!"), Options{Cols: 4, Rows: 2})
	want := "\x1b]1337;File=name=YS5wbmc=;size=4;width=4;height=2;inline=1:UE5HIQ==\a"
	if got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	got = ITerm2Image("a.png", []byte("PNG!"), Options{Tmux: true, KeepCursor: true})
	want = "\x1bPtmux;\x1b\x1b]1337;File=name=YS5wbmc=;size=4;inline=1;doNotMoveCursor=1:UE5HIQ==\a\x1b\\"
	if got != want {
		t.Errorf("tmux\n got %q\nwant %q", got, want)
	}
}

func TestSixelImage(t *testing.T) {
	red, blue := color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}
	m := image.NewRGBA(image.Rect(0, 0, 3, 2))
	m.Set(0, 0, red)
	m.Set(1, 0, red)
	m.Set(2, 0, blue)
	m.Set(0, 1, blue)
	m.Set(1, 1, red)
	m.Set(2, 1, red)
	// Palette by median cut: blue (r=0) then red. Band 0, blue: x0 row 1
	// (bit 1: 'A'), x1 none ('?'), x2 row 0 ('@'); red: '@', rows 0+1 ('B'), 'A'.
	want := "\x1bP0;1q\"1;1;3;2#0;2;0;0;100#1;2;100;0;0#0A?@$#1@BA\x1b\\"
	for _, dither := range []bool{false, true} {
		if got := SixelImage(m, dither, Options{}); got != want {
			t.Errorf("dither %v:\n got %q\nwant %q", dither, got, want)
		}
	}

	// Two bands and run-length encoding: 10×7 red with a blue bottom row.
	m = image.NewRGBA(image.Rect(0, 0, 10, 7))
	for y := range 7 {
		for x := range 10 {
			c := red
			if y == 6 {
				c = blue
			}
			m.Set(x, y, c)
		}
	}
	want = "\x1bP0;1q\"1;1;10;7#0;2;0;0;100#1;2;100;0;0#1!10~-#0!10@\x1b\\"
	if got := SixelImage(m, false, Options{}); got != want {
		t.Errorf("bands:\n got %q\nwant %q", got, want)
	}
	if got := SixelImage(m, false, Options{Tmux: true}); !strings.HasPrefix(got, "\x1bPtmux;\x1b\x1bP0;1q") {
		t.Errorf("tmux %q", got)
	}
}

// TestQuantize: a gradient of many colours comes down to at most 256,
// deterministically, with a small error.
func TestQuantize(t *testing.T) {
	var rgb []byte
	for i := range 64 * 64 {
		rgb = append(rgb, byte(i%64*4), byte(i/64*4), byte((i*7)%256))
	}
	pal := quantize(rgb, 256)
	if len(pal) != 256 {
		t.Fatalf("%d colours", len(pal))
	}
	if again := quantize(rgb, 256); !reflect.DeepEqual(pal, again) {
		t.Error("palette differs between runs")
	}
	x := newIndexer(pal)
	var worst int
	for i := 0; i < len(rgb); i += 3 {
		r, g, b, _ := pal[x.index(int(rgb[i]), int(rgb[i+1]), int(rgb[i+2]))].RGBA()
		d := abs(int(r>>8)-int(rgb[i])) + abs(int(g>>8)-int(rgb[i+1])) + abs(int(b>>8)-int(rgb[i+2]))
		worst = max(worst, d)
	}
	if worst > 90 {
		t.Errorf("worst colour error %d", worst)
	}
	if got := quantize([]byte{1, 2, 3, 1, 2, 3}, 256); len(got) != 1 {
		t.Errorf("one colour gives %d", len(got))
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestEncodePNG(t *testing.T) {
	m := image.NewRGBA(image.Rect(0, 0, 2, 2))
	var b bytes.Buffer
	png.Encode(&b, m)
	for _, p := range []Protocol{Kitty, ITerm2, Sixel} {
		s, err := Encode(p, "t.png", b.Bytes(), Options{})
		if err != nil || s == "" {
			t.Errorf("%v: %q %v", p, s, err)
		}
	}
	if s, _ := Encode(None, "t.png", b.Bytes(), Options{}); s != "" {
		t.Errorf("none drew %q", s)
	}
	if _, err := Encode(Sixel, "t.png", []byte("junk"), Options{}); err == nil || !strings.Contains(err.Error(), "t.png") {
		t.Errorf("bad png: %v", err)
	}
	if !strings.Contains(ITerm2Image("t.png", b.Bytes(), Options{}), base64.StdEncoding.EncodeToString(b.Bytes())) {
		t.Error("iTerm2 does not carry the file")
	}
}

func TestParsers(t *testing.T) {
	if a, ok := ParseDA1("\x1b[?62;4;22c"); !ok || !reflect.DeepEqual(a, []int{62, 4, 22}) || !SixelInDA1(a) {
		t.Errorf("DA1 vt220 with sixel: %v %v", a, ok)
	}
	if a, ok := ParseDA1("\x1b[?1;2c"); !ok || SixelInDA1(a) {
		t.Errorf("DA1 vt100: %v", a)
	}
	if a, _ := ParseDA1("\x1b[?4c"); SixelInDA1(a) {
		t.Error("class 4 alone is not the sixel attribute")
	}
	for _, bad := range []string{"\x1b[?62;4c\x1b", "\x1b[62;4c", "\x1b[?62;xc", ""} {
		if _, ok := ParseDA1(bad); ok {
			t.Errorf("DA1 %q accepted", bad)
		}
	}
	for _, c := range []struct {
		in   string
		want KittyReply
		ok   bool
	}{
		{"\x1b_Gi=31;OK\x1b\\", KittyReply{ID: 31, OK: true, Message: "OK"}, true},
		{"\x1b_Gi=31;ENOTSUPPORTED:bad format\x1b\\", KittyReply{ID: 31, Message: "ENOTSUPPORTED:bad format"}, true},
		{"\x1b_Gi=5,p=2;OK\x9c", KittyReply{ID: 5, OK: true, Message: "OK"}, true},
		{"\x1b_Gi=x;OK\x1b\\", KittyReply{}, false},
		{"\x1b_Gi=31;OK", KittyReply{}, false},
	} {
		if got, ok := ParseKittyReply(c.in); ok != c.ok || got != c.want {
			t.Errorf("kitty %q: %+v %v", c.in, got, ok)
		}
	}
	if v, ok := ParseVersion("\x1bP>|iTerm2 3.5.4\x1b\\"); !ok || v != "iTerm2 3.5.4" {
		t.Errorf("version %q %v", v, ok)
	}
	if w, h, ok := ParseCellSize("\x1b[6;20;10t"); !ok || w != 10 || h != 20 {
		t.Errorf("cell size %d×%d %v", w, h, ok)
	}
	if _, _, ok := ParseCellSize("\x1b[6;0;10t"); ok {
		t.Error("zero cell accepted")
	}
	seqs, rest := SplitReplies("\x1b_Gi=31;OK\x1b\\\x1bP>|kitty(0.35)\x1b\\x\x1b[?62;4c\x1b[?6")
	if !reflect.DeepEqual(seqs, []string{"\x1b_Gi=31;OK\x1b\\", "\x1bP>|kitty(0.35)\x1b\\", "\x1b[?62;4c"}) || rest != "\x1b[?6" {
		t.Errorf("split %q rest %q", seqs, rest)
	}
}

// TestDetector: the protocol follows the replies; the environment alone
// only vouches for iTerm2 (whose images no reply confirms).
func TestDetector(t *testing.T) {
	env := func(kv ...string) Env {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return EnvFrom(func(k string) string { return m[k] })
	}
	const kittyOK, kittyNo = "\x1b_Gi=31;OK\x1b\\", "\x1b_Gi=31;ENOTSUPPORTED:x\x1b\\"
	for _, c := range []struct {
		name    string
		env     Env
		replies []string
		want    Protocol
		tmux    bool
	}{
		{"kitty", env("TERM", "xterm-kitty", "KITTY_WINDOW_ID", "1"), []string{kittyOK, "\x1bP>|kitty(0.35.2)\x1b\\", "\x1b[?62;c"}, Kitty, false},
		{"kitty env, no answer", env("TERM", "xterm-kitty"), []string{"\x1b[?62;c"}, None, false},
		{"kitty refuses", env("TERM", "xterm-256color"), []string{kittyNo, "\x1b[?62;c"}, None, false},
		{"ghostty", env("TERM", "xterm-ghostty"), []string{kittyOK, "\x1b[?62;22c"}, Kitty, false},
		{"iTerm2 over ssh", env("TERM", "xterm-256color", "LC_TERMINAL", "iTerm2"), []string{"\x1b[?62;4c"}, ITerm2, false},
		{"iTerm2 by version", env("TERM", "xterm-256color"), []string{"\x1bP>|iTerm2 3.5.4\x1b\\", "\x1b[?62;4c"}, ITerm2, false},
		{"wezterm", env("TERM", "xterm-256color", "TERM_PROGRAM", "WezTerm"), []string{kittyOK, "\x1b[?65;4;6c"}, Kitty, false},
		{"xterm sixel", env("TERM", "xterm-256color"), []string{"\x1b[?63;1;2;4;6;9;15;22c"}, Sixel, false},
		{"plain xterm", env("TERM", "xterm-256color"), []string{"\x1b[?64;1;2;6;9;15;18;21;22c"}, None, false},
		{"tmux in kitty", env("TERM", "tmux-256color", "TMUX", "/tmp/tmux-0/default,1,0"), []string{kittyOK, "\x1bP>|tmux 3.4\x1b\\", "\x1b[?1;2;4c"}, Kitty, true},
		{"tmux sixel", env("TERM", "screen-256color", "TMUX", "x"), []string{"\x1b[?1;2;4c"}, Sixel, false},
		{"tmux in iTerm2", env("TERM", "tmux-256color", "TMUX", "x", "LC_TERMINAL", "iTerm2"), []string{"\x1b[?1;2c"}, ITerm2, true},
	} {
		d := NewDetector(c.env)
		q := d.Query()
		wantQ := QueryKitty + QueryVersion + QueryDA1
		if c.env.InTmux() {
			wantQ = Passthrough(QueryKitty) + QueryVersion + QueryDA1
		}
		if q != wantQ {
			t.Errorf("%s: query %q", c.name, q)
		}
		for i, r := range c.replies {
			if d.Done() {
				t.Errorf("%s: done before reply %d", c.name, i)
			}
			if !d.Feed(r) {
				t.Errorf("%s: reply %q not taken", c.name, r)
			}
		}
		if !d.Done() || d.Protocol() != c.want || d.Tmux() != c.tmux {
			t.Errorf("%s: done %v, %v tmux %v; want %v tmux %v", c.name, d.Done(), d.Protocol(), d.Tmux(), c.want, c.tmux)
		}
	}
	d := NewDetector(env("TERM", "dumb"))
	if d.Query() != "" || !d.Done() || d.Protocol() != None {
		t.Error("dumb terminal")
	}
	if d.Feed("\x1b[1;1R") {
		t.Error("cursor report taken")
	}
}

// TestDetectorThroughBubbleTea: the replies as Bubble Tea's input decoder
// delivers them (ultraviolet events) feed the Detector the same way.
func TestDetectorThroughBubbleTea(t *testing.T) {
	d := NewDetector(Env{Term: "xterm-kitty"})
	var dec uv.EventDecoder
	buf := []byte("\x1b_Gi=31;OK\x1b\\\x1bP>|kitty(0.35.2)\x1b\\\x1b[?62;22;4c")
	for len(buf) > 0 {
		n, ev := dec.Decode(buf)
		if n == 0 {
			t.Fatalf("decoder stuck at %q", buf)
		}
		buf = buf[n:]
		switch ev := ev.(type) {
		case uv.KittyGraphicsEvent:
			d.FeedKitty(ev.Options.ID, string(ev.Payload))
		case uv.TerminalVersionEvent:
			d.FeedVersion(ev.Name)
		case uv.PrimaryDeviceAttributesEvent:
			d.FeedDA1(ev)
		default:
			t.Errorf("unexpected event %T %v", ev, ev)
		}
	}
	if !d.Done() || d.Protocol() != Kitty || d.version != "kitty(0.35.2)" || !d.sixel {
		t.Errorf("%+v", d)
	}
}

func TestParseProtocol(t *testing.T) {
	for _, p := range []Protocol{None, Kitty, ITerm2, Sixel} {
		if q, err := ParseProtocol(p.String()); err != nil || q != p {
			t.Errorf("%v: %v %v", p, q, err)
		}
	}
	if _, err := ParseProtocol("jpeg"); err == nil {
		t.Error("jpeg accepted")
	}
}

func TestKittyPlaceholder(t *testing.T) {
	lines := KittyPlaceholder(0x0a0b0c, 2, 3)
	want0 := "\x1b[38;2;10;11;12m" + "\U0010EEEE\u0305\u0305" + "\U0010EEEE\u0305\u030D" + "\U0010EEEE\u0305\u030E" + "\x1b[39m"
	if len(lines) != 2 || lines[0] != want0 {
		t.Fatalf("%q", lines)
	}
	if !strings.Contains(lines[1], "\U0010EEEE\u030D\u030E") {
		t.Errorf("row 1: %q", lines[1])
	}
	if got := KittyImage([]byte{1, 2, 3}, Options{ID: 7, Cols: 3, Rows: 2, Virtual: true}); !strings.Contains(got, "U=1") || !strings.Contains(got, "i=7") {
		t.Errorf("virtual placement: %q", got)
	}
}

func TestPlaceholderSupport(t *testing.T) {
	for _, tt := range []struct {
		version string
		kittyOK bool
		want    bool
	}{
		{"kitty(0.35.2)", true, true},
		{"kitty(0.28.0)", true, true},
		{"kitty(0.26.5)", true, false}, // Debian 12's kitty rejects U=1
		{"ghostty 1.1.3", true, true},
		{"WezTerm 20240203", true, false},
		{"", true, false},
		{"kitty(0.35.2)", false, false},
	} {
		d := NewDetector(Env{Term: "xterm-kitty"})
		d.FeedKitty(KittyQueryID, map[bool]string{true: "OK", false: "ENOTSUPPORTED"}[tt.kittyOK])
		d.FeedVersion(tt.version)
		d.FeedDA1([]int{62, 22})
		if got := d.Placeholders(); got != tt.want {
			t.Errorf("%q (query ok %v): placeholders %v, want %v", tt.version, tt.kittyOK, got, tt.want)
		}
	}
}
