package termimg

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// kittyChunk is the most base64 bytes one kitty graphics command carries.
const kittyChunk = 4096

// KittyImage draws PNG data with the kitty graphics protocol: transmit and
// display (a=T) PNG (f=100) directly (t=d), quietly (q=2: no replies that
// would arrive as input), in chunks of 4096 base64 bytes (m=1 on all but
// the last), each chunk wrapped for tmux on its own when asked.
func KittyImage(png []byte, o Options) string {
	payload := base64.StdEncoding.EncodeToString(png)
	keys := []string{"a=T", "f=100", "t=d", "q=2"}
	if o.ID > 0 {
		keys = append(keys, "i="+strconv.Itoa(o.ID))
	}
	if o.Cols > 0 {
		keys = append(keys, "c="+strconv.Itoa(o.Cols))
	}
	if o.Rows > 0 {
		keys = append(keys, "r="+strconv.Itoa(o.Rows))
	}
	if o.KeepCursor {
		keys = append(keys, "C=1")
	}
	if o.Virtual {
		keys = append(keys, "U=1")
	}
	var b strings.Builder
	for first := true; first || len(payload) > 0; first = false {
		n := min(kittyChunk, len(payload))
		chunk := payload[:n]
		payload = payload[n:]
		var k []string
		switch {
		case first && len(payload) == 0:
			k = keys
		case first:
			k = append(keys, "m=1")
		case len(payload) > 0:
			k = []string{"m=1"}
		default:
			k = []string{"m=0"}
		}
		b.WriteString(o.wrap(ansi.KittyGraphics([]byte(chunk), k...)))
	}
	return b.String()
}

// KittyDelete removes the kitty image with the given id and its
// placements (a=d, d=I).
func KittyDelete(id int, o Options) string {
	return o.wrap(ansi.KittyGraphics(nil, "a=d", "d=I", "i="+strconv.Itoa(id), "q=2"))
}

// kittyPlaceholder is the character a virtual placement is drawn over.
const kittyPlaceholder = '\U0010EEEE'

// kittyDiacritics number the rows and columns of placeholder cells (kitty
// graphics protocol, "Unicode placeholders": the first entries of its
// row/column diacritics list).
var kittyDiacritics = []rune{
	0x0305, 0x030D, 0x030E, 0x0310, 0x0312, 0x033D, 0x033E, 0x033F,
	0x0346, 0x034A, 0x034B, 0x034C, 0x0350, 0x0351, 0x0352, 0x0357,
	0x035B, 0x0363, 0x0364, 0x0365, 0x0366, 0x0367, 0x0368, 0x0369,
	0x036A, 0x036B, 0x036C, 0x036D, 0x036E, 0x036F, 0x0483, 0x0484,
}

// MaxPlaceholderSpan is the most rows or columns KittyPlaceholder draws.
var MaxPlaceholderSpan = len(kittyDiacritics)

// KittyPlaceholder returns rows lines of cols placeholder cells for the
// virtual placement of image id (at most 0xFFFFFF): each cell is U+10EEEE
// with the diacritics of its row and column, the image id in the
// foreground colour. Printed by a cell-based interface like any text, the
// terminal draws the picture over them.
func KittyPlaceholder(id, rows, cols int) []string {
	rows, cols = min(rows, MaxPlaceholderSpan), min(cols, MaxPlaceholderSpan)
	fg := "\x1b[38;2;" + strconv.Itoa(id>>16&0xff) + ";" + strconv.Itoa(id>>8&0xff) + ";" + strconv.Itoa(id&0xff) + "m"
	lines := make([]string, rows)
	for r := range rows {
		var b strings.Builder
		b.WriteString(fg)
		for c := range cols {
			b.WriteRune(kittyPlaceholder)
			b.WriteRune(kittyDiacritics[r])
			b.WriteRune(kittyDiacritics[c])
		}
		b.WriteString("\x1b[39m")
		lines[r] = b.String()
	}
	return lines
}
