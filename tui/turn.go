package tui

import "github.com/orchard-llm/orchard/engine"

// turnPhase is where the chat's turn is, from the engine's events.
type turnPhase int

const (
	phaseIdle turnPhase = iota
	phasePrefill
	phaseDecode
	phaseDone
	phaseCancelled
	phaseFailed
)

// turnKind is how a turn was asked for; its value is the engine's Op of
// a failure of it, so a failed turn is matched to the one on screen.
type turnKind string

const (
	turnNone       turnKind = ""
	turnSend                = turnKind(engine.OpSend)
	turnRegenerate          = turnKind(engine.OpRegenerate)
	turnEdit                = turnKind(engine.OpEdit)
)

// turnState is the chat's turn as the screen knows it: the phase the
// engine's events put it in, a turn sent that has not started yet, and
// the settings in force. Model owns it and writes it; the status bar and
// the stats panel only read it, so "is a reply running" has one answer.
type turnState struct {
	phase turnPhase

	// A turn sent that the engine has not started yet, and what the
	// screen needs to take it back if it is refused or never starts.
	pending   turnKind
	edit      string             // an edit's new text
	sentFiles []engine.MediaFile // a message's files
	sentInput string             // the input it was sent from (folded pastes as chips)

	settings engine.Settings // the engine's, as its events last said

	compacting string // a compaction's progress, "" none (contextview.go)
}

// busy reports whether a reply is streaming (prefill or decode).
func (t *turnState) busy() bool { return t.phase == phasePrefill || t.phase == phaseDecode }

// replying reports whether a reply is on its way: streaming, or sent and
// not started yet.
func (t *turnState) replying() bool { return t.busy() || t.pending != turnNone }

// send records a message sent, with its files and the input it came from.
func (t *turnState) send(files []engine.MediaFile, input string) {
	t.pending, t.sentFiles, t.sentInput = turnSend, files, input
}

// sendEdit records an edit of the last message sent.
func (t *turnState) sendEdit(text string) { t.pending, t.edit = turnEdit, text }

// regenerate records a regenerate sent.
func (t *turnState) regenerate() { t.pending = turnRegenerate }

// clearPending forgets the turn sent: it started, ended or was taken back.
func (t *turnState) clearPending() {
	t.pending, t.edit, t.sentFiles, t.sentInput = turnNone, "", nil, ""
}

// started is the engine's Started: the turn sent is now the one running.
func (t *turnState) started() {
	t.clearPending()
	t.phase = phasePrefill
}

// decoding is the first and every later delta of the reply.
func (t *turnState) decoding() { t.phase = phaseDecode }

// prefilling is a prefill progress event.
func (t *turnState) prefilling() { t.phase = phasePrefill }

// finished ends the turn; cancelled when the user stopped it.
func (t *turnState) finished(cancelled bool) {
	t.pending = turnNone
	t.phase = phaseDone
	if cancelled {
		t.phase = phaseCancelled
	}
}

// failed marks a running turn failed; an idle one stays as it was.
func (t *turnState) failed() {
	if t.busy() {
		t.phase = phaseFailed
	}
}

// cleared starts over after /clear or a loaded conversation.
func (t *turnState) cleared() { t.phase = phaseIdle }
