package termimg

// Options place a picture. The zero value draws it at its own size.
type Options struct {
	Cols, Rows int  // cells to fill (kitty, iTerm2; 0: the picture's size, aspect kept)
	KeepCursor bool // leave the cursor where it was (kitty C=1, iTerm2/WezTerm doNotMoveCursor)
	Tmux       bool // wrap for tmux passthrough
	ID         int  // kitty image id, to delete or re-place it later (0: none)
	// Virtual makes kitty keep the picture as a virtual placement (U=1)
	// drawn wherever KittyPlaceholder text with its id is printed: the way
	// a cell-based interface shows a picture it redraws and scrolls.
	Virtual bool
}

func (o Options) wrap(seq string) string {
	if o.Tmux {
		return Passthrough(seq)
	}
	return seq
}
