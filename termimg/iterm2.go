package termimg

import (
	"encoding/base64"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/iterm2"
)

// ITerm2Image draws a file's bytes (PNG, JPEG, GIF…) inline with iTerm2's
// OSC 1337 File= sequence, terminated by BEL. The name is base64-encoded as
// the protocol requires; the aspect ratio is kept within Cols×Rows.
func ITerm2Image(name string, data []byte, o Options) string {
	f := iterm2.File{
		Name:            base64.StdEncoding.EncodeToString([]byte(name)),
		Size:            int64(len(data)),
		Inline:          true,
		DoNotMoveCursor: o.KeepCursor,
		Content:         []byte(base64.StdEncoding.EncodeToString(data)),
	}
	if o.Cols > 0 {
		f.Width = iterm2.Cells(o.Cols)
	}
	if o.Rows > 0 {
		f.Height = iterm2.Cells(o.Rows)
	}
	return o.wrap(ansi.ITerm2(f))
}
