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
