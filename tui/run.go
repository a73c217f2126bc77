// Package tui is orchard's terminal interface: the chat screen with the
// conversation, live speed, speculation and memory figures, and the
// checkpoints, built on Bubble Tea. It is presentation only; everything
// it knows about the model comes through the Engine interface.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/orchard-llm/orchard/atomicfile"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/regfile"
)

// Engine is what the interface needs from the engine goroutine. Info,
// Settings, Messages and Window give the state the screen starts from;
// after that it follows the events, each carrying the state it implies.
// Every command returns promptly its acceptance — nil: queued, its
// results arrive on Events; an error: refused, nothing follows — which
// the screen receives as a message (callQueue).
type Engine interface {
	Events() <-chan engine.Event // closed when the engine stops
	Info() engine.ModelInfo
	Settings() engine.Settings
	Messages() []engine.Message                        // the conversation now
	Window() int                                       // the first of Messages the model sees
	Send(text string, media ...engine.MediaFile) error // media: files attached to the message
	Cancel() error
	SetSettings(s engine.Settings) error
	Clear() error
	SaveCheckpoint(name string) error
	LoadCheckpoint(name string) error
	DeleteCheckpoint(name string) error
	RenameCheckpoint(old, new string) error
	ForkCheckpoint(name string) error
	ListCheckpoints() error
	Autosave() error
	// Regenerate replaces the last reply, keeping the old one as another
	// version; Edit replaces the last user message and sends it again;
	// SelectVersion shows another version of a message (0-based), with
	// the turns that followed it. The engine answers with Branched, then
	// the turn's events.
	Regenerate() error
	Edit(text string) error
	SelectVersion(index, version int) error
	// The conversation history: ListHistory answers History{Op: engine.OpList}
	// with the conversations whose text holds query; ResumeHistory
	// replaces the conversation (keeping it in the history first, as
	// Clear does); DeleteHistory removes one; RenameHistory gives one a
	// title of its own ("" its first message; id "" the one on screen).
	ListHistory(query string) error
	ResumeHistory(id string) error
	DeleteHistory(id string) error
	RenameHistory(id, title string) error
	// What the model sees (contextview.go): Compact summarises the
	// oldest turns (Compacting, Compacted, ContextReport); Pin keeps a
	// message verbatim through compactions; SetSummary replaces the
	// summary; ElideMedia has the model see an attachment as one line;
	// ContextView reports the window (ContextReport{Op: OpContext}).
	Compact() error
	Pin(index int, pinned bool) error
	SetSummary(text string) error
	ElideMedia(index, att int, caption string) error
	ContextView() error
	Close() error
}

// Options configure Run. The zero value runs on the process terminal
// with detected colours.
type Options struct {
	// Input and Output default to the terminal (os.Stdin, os.Stdout).
	Input  io.Reader
	Output io.Writer
	// Env is the environment for colour detection, $EDITOR, $TMUX and
	// $HOME; nil means os.Environ().
	Env []string
	// Theme is "auto" (ask the terminal, dark if it does not answer),
	// "dark" or "light".
	Theme string
	// NoColor draws without colour, as NO_COLOR in Env also does.
	NoColor bool
	// Keys rebinds actions by name (see KeyNames), e.g.
	// {"send": {"ctrl+s"}}.
	Keys map[string][]string
	// Width and Height set the initial size when the output is not a
	// terminal (tests, recordings).
	Width, Height int
	// AutosaveEvery is the period of the autosave while the conversation
	// changes; 0 means two minutes and a negative value turns the
	// periodic save off (quit and SIGHUP still save).
	AutosaveEvery time.Duration
	// NoNativeClipboard leaves this machine's clipboard alone; /copy
	// then only uses OSC 52.
	NoNativeClipboard bool
	// NoMouse leaves the mouse to the terminal so text can be selected
	// without a modifier; the wheel then does not scroll the transcript.
	NoMouse bool
	// DraftFile keeps a message typed but not sent when the interface
	// closes (quit, a dropped connection) and puts it back next time; ""
	// keeps nothing. A message the engine refused is not kept.
	DraftFile string
	// Logger receives every error the screen shows, whole; nil discards.
	Logger *slog.Logger
	// ExportDir is where /export writes (a bare or relative name, or no
	// name at all); "" means the current folder.
	ExportDir string
	// Tools give the model the MCP servers' tools (toolloop.go); nil
	// offers none.
	Tools *ToolsOptions
}

// ErrEngineStopped is returned by Run when the engine closed its event
// channel while the interface was running.
var ErrEngineStopped = errors.New("the engine stopped")

// Run shows the chat screen until the user quits, ctx ends, the
// terminal hangs up (SIGHUP) or the engine stops. The conversation is
// autosaved through eng whenever Run returns; closing eng is the
// caller's job.
func Run(ctx context.Context, eng Engine, opts Options) error {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	m, err := newModel(eng, opts)
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.done = ctx.Done()
	// Only a real terminal answers picture queries; a recording or a pipe
	// gets none.
	m.pics.Enable(opts.Output == nil && !m.noColor)

	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithEnvironment(opts.Env)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	if m.noColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.ASCII))
	}
	if opts.Width > 0 && opts.Height > 0 {
		popts = append(popts, tea.WithWindowSize(opts.Width, opts.Height))
	}
	if opts.DraftFile != "" {
		if data, err := regfile.ReadFile(opts.DraftFile, 64<<20); err == nil && len(data) > 0 {
			m.input.SetValue(string(data))
		}
	}
	p := tea.NewProgram(m, popts...)
	// A refused call reaches Update as a message; once the program is
	// over, Send drops it.
	m.calls = newCallQueue(eng, p.Send)
	defer m.calls.close()

	// A dropped SSH connection sends SIGHUP: save first, then leave.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var saveOnce sync.Once
	autosave := func() {
		saveOnce.Do(func() { m.calls.push(engine.OpAutosave, func(e Engine) error { return e.Autosave() }) })
	}
	go func() {
		select {
		case <-hup:
			autosave()
			p.Quit()
		case <-ctx.Done():
		}
	}()

	final, err := p.Run()
	autosave()
	if opts.DraftFile != "" {
		keepDraft(opts.DraftFile, final)
	}
	m.calls.close() // every queued call, the autosave last, reaches the engine
	switch {
	case m.engineStopped:
		return ErrEngineStopped
	case errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, tea.ErrInterrupted):
		return nil
	case err != nil:
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// keepDraft saves the unsent message of the final model, or removes an
// old draft when the input is empty, so nothing typed is lost.
func keepDraft(path string, final tea.Model) {
	m, ok := final.(*Model)
	if !ok {
		return
	}
	if v := m.input.Value(); strings.TrimSpace(v) != "" && v != m.refused {
		atomicfile.Write(path, []byte(m.input.Text())) // folded pastes whole
		return
	}
	os.Remove(path)
}
