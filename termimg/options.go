package termimg

// Options place a picture. The zero value draws it at its own size.
type Options struct {
	Cols, Rows int  // cells to fill (kitty, iTerm2; 0: the picture's size, aspect kept)
	KeepCursor bool // leave the cursor where it was (kitty C=1, iTerm2/WezTerm doNotMoveCursor)
	Tmux       bool // wrap for tmux passthrough
	ID         int  // kitty image id, to delete or re-place it later (0: none)
}

func (o Options) wrap(seq string) string {
	if o.Tmux {
		return Passthrough(seq)
	}
	return seq
}
