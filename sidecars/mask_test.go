package sidecars

import (
	"strings"
	"testing"
)

const neg = 0xFBFF

// render draws a mask as rows of '.' (visible) and 'x' (masked).
func render(t *testing.T, m []uint16, cols int) string {
	t.Helper()
	var b strings.Builder
	for i, v := range m {
		if i > 0 && i%cols == 0 {
			b.WriteByte('|')
		}
		switch v {
		case 0:
			b.WriteByte('.')
		case neg:
			b.WriteByte('x')
		default:
			t.Fatalf("mask value %#04x", v)
		}
	}
	return b.String()
}

func TestMaskRow(t *testing.T) {
	tests := []struct {
		p, sliding int
		want       string
	}{
		{0, 0, ".xxxxxxx"},
		{3, 0, "....xxxx"},
		{7, 0, "........"},
		{9, 0, "........"}, // past ctx: everything written is visible
		{3, 2, "xx..xxxx"},
		{7, 3, "xxxxx..."},
		{1, 3, "..xxxxxx"},
		{12, 3, "xxxxxxxx"}, // window entirely past ctx
	}
	for _, tt := range tests {
		m := make([]uint16, 8)
		MaskRow(m, tt.p, tt.sliding, neg)
		if got := render(t, m, 8); got != tt.want {
			t.Errorf("MaskRow(p=%d, sliding=%d) = %s, want %s", tt.p, tt.sliding, got, tt.want)
		}
	}
}

func TestMaskOffset(t *testing.T) {
	tests := []struct {
		n, ctx, base, valid, sliding int
		want                         string
	}{
		// verify width 4 at base 2 with 3 real rows; row 3 is padding
		{4, 8, 2, 3, 0, "...xxxxx|....xxxx|.....xxx|xxxxxxxx"},
		{4, 8, 2, 3, 2, "x..xxxxx|xx..xxxx|xxx..xxx|xxxxxxxx"},
		{2, 6, 0, 2, 0, ".xxxxx|..xxxx"},
		{2, 4, 0, 0, 0, "xxxx|xxxx"},
	}
	for _, tt := range tests {
		m := make([]uint16, tt.n*tt.ctx)
		for i := range m {
			m[i] = 0x1234 // must be overwritten
		}
		MaskOffset(m, tt.n, tt.ctx, tt.base, tt.valid, tt.sliding, neg)
		if got := render(t, m, tt.ctx); got != tt.want {
			t.Errorf("MaskOffset%v = %s, want %s", []int{tt.n, tt.ctx, tt.base, tt.valid, tt.sliding}, got, tt.want)
		}
	}
}

func TestMaskPlain(t *testing.T) {
	tests := []struct {
		n, valid, sliding int
		want              string
	}{
		{4, 4, 0, ".xxx|..xx|...x|...."},
		{4, 4, 2, ".xxx|..xx|x..x|xx.."},
		// rows past valid still see the valid columns (no row masking here)
		{4, 2, 0, ".xxx|..xx|..xx|..xx"},
		{4, 2, 2, ".xxx|..xx|x.xx|xxxx"},
	}
	for _, tt := range tests {
		m := make([]uint16, tt.n*tt.n)
		MaskPlain(m, tt.n, tt.valid, tt.sliding, neg)
		if got := render(t, m, tt.n); got != tt.want {
			t.Errorf("MaskPlain(%d, %d, %d) = %s, want %s", tt.n, tt.valid, tt.sliding, got, tt.want)
		}
	}
}

func TestStateful3Masks(t *testing.T) {
	for _, tt := range []struct {
		p          int
		full, ring string
	}{
		{0, ".xxxxxxx", ".xxx"},
		{2, "...xxxxx", "...x"},
		{3, "....xxxx", "...."},
		{5, "......xx", "...."}, // ring full: every slot holds one of the last 4
		{7, "........", "...."},
		{100, "........", "...."},
	} {
		full, ring := make([]uint16, 8), make([]uint16, 4)
		MaskFullRow(full, tt.p, neg)
		MaskSlidingRing(ring, tt.p, neg)
		if got := render(t, full, 8); got != tt.full {
			t.Errorf("MaskFullRow(p=%d) = %s, want %s", tt.p, got, tt.full)
		}
		if got := render(t, ring, 4); got != tt.ring {
			t.Errorf("MaskSlidingRing(p=%d) = %s, want %s", tt.p, got, tt.ring)
		}
	}
}

func TestOneHot(t *testing.T) {
	m := make([]uint16, 3*6)
	for i := range m {
		m[i] = 0x1234
	}
	OneHot(m, 2, 3, 2, 6)
	want := []uint16{
		0, 0, 0x3C00, 0, 0, 0,
		0, 0, 0, 0x3C00, 0, 0,
		0, 0, 0, 0, 0, 0,
	}
	for i := range want {
		if m[i] != want[i] {
			t.Fatalf("OneHot = %#04x, want %#04x", m, want)
		}
	}
	OneHot(m, 5, 3, 3, 6) // rows 1, 2 fall past ctx and stay zero
	if m[5] != 0x3C00 || m[6+0] != 0 || m[11] != 0 || m[17] != 0 {
		t.Errorf("OneHot past ctx = %#04x", m)
	}
}

func TestRingPos(t *testing.T) {
	for _, tt := range [][3]int{{0, 512, 0}, {511, 512, 511}, {512, 512, 0}, {1000, 512, 488}, {-1, 4, 3}} {
		if got := RingPos(tt[0], tt[1]); got != tt[2] {
			t.Errorf("RingPos(%d, %d) = %d, want %d", tt[0], tt[1], got, tt[2])
		}
	}
}

func TestMaskAllocs(t *testing.T) {
	const ctx, w = 2048, 512
	row, ring, blk, hot := make([]uint16, ctx), make([]uint16, w), make([]uint16, 8*ctx), make([]uint16, 8*ctx)
	if n := testing.AllocsPerRun(50, func() {
		MaskRow(row, 1000, 512, neg)
		MaskOffset(blk, 8, ctx, 100, 5, 512, neg)
		MaskPlain(blk, 64, 60, 16, neg)
		MaskFullRow(row, 1000, neg)
		MaskSlidingRing(ring, 1000, neg)
		OneHot(hot, 100, 8, 5, ctx)
		_ = RingPos(1000, w)
	}); n != 0 {
		t.Errorf("masks allocate %v times", n)
	}
}
