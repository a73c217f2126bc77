package termimg

import "fmt"

// Protocol is a way of drawing pictures in a terminal.
type Protocol int

const (
	None   Protocol = iota // pictures are not shown
	Kitty                  // kitty graphics protocol (kitty, Ghostty, WezTerm, Konsole)
	ITerm2                 // iTerm2 inline images, OSC 1337 (iTerm2, WezTerm)
	Sixel                  // DEC sixel (xterm -ti vt340, foot, mlterm, Windows Terminal, tmux ≥ 3.4)
)

func (p Protocol) String() string {
	switch p {
	case Kitty:
		return "kitty"
	case ITerm2:
		return "iterm2"
	case Sixel:
		return "sixel"
	}
	return "none"
}

// ParseProtocol reads a protocol name as a setting spells it: "kitty",
// "iterm2", "sixel", or "none" (also "off").
func ParseProtocol(s string) (Protocol, error) {
	switch s {
	case "kitty":
		return Kitty, nil
	case "iterm2", "iterm":
		return ITerm2, nil
	case "sixel":
		return Sixel, nil
	case "none", "off":
		return None, nil
	}
	return None, fmt.Errorf("image protocol %q: want kitty, iterm2, sixel or none", s)
}
