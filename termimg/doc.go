// Package termimg shows small pictures in terminals that can: the kitty
// graphics protocol, iTerm2 inline images (OSC 1337) and sixel, each
// wrapped for tmux passthrough when asked.
//
// Detection never assumes. The environment (TERM, TERM_PROGRAM,
// LC_TERMINAL, which iTerm2 forwards over SSH, KITTY_WINDOW_ID, TMUX) only
// tells what to ask; the terminal's own answers decide: a kitty graphics
// query answered OK, an XTVERSION naming iTerm2 or WezTerm, a primary
// device attributes reply listing 4 (sixel). A Detector holds the queries to
// send (through Bubble Tea as tea.Raw) and takes the replies back, raw or
// already parsed by Bubble Tea; the primary device attributes reply, which
// every terminal sends and sends last, ends detection.
package termimg
