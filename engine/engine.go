package engine

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/internal/mailbox"
)

// Engine runs a Session on its own goroutine. Every command returns at
// once with its acceptance (nil: queued; ErrClosed: refused, and nothing
// follows); its results arrive as events, each carrying the state it
// implies (ARCHITECTURE.md, "The engine protocol"). Deltas are coalesced when the consumer
// falls behind, so the engine never waits for the screen; every other
// event is delivered, in order.
type Engine struct {
	sess *Session
	info ModelInfo

	cmds   chan func()
	out    chan Event
	done   chan struct{}
	loopWG sync.WaitGroup

	box *mailbox.Box[Event] // events on their way to out; deltas merge

	mu     sync.Mutex // guards the copies the UI reads
	msgs   []Message
	window int
	set    Settings

	cmdMu  sync.Mutex // guards sending on cmds and closed
	closed bool

	sendSeq   atomic.Int64 // turns requested
	cancelTo  atomic.Int64 // turns up to this number are cancelled
	closeOnce sync.Once
	closeErr  error

	// Set on the engine goroutine by UseStore.
	store CheckpointStore
	units coreml.ComputeUnits
	convs conversations // request conversations kept aside (complete.go)
	// figures are the chat window's, for Estimator (contextview.go).
	figures contextFigures

	// The conversation history (history.go): written on the engine
	// goroutine, listed and searched on a reader goroutine of its own so a
	// search never waits for a reply.
	hmu         sync.Mutex // guards hist, histID and the reader's request
	hist        HistoryStore
	histPolicy  HistoryPolicy
	histID      string // the chat's history id, as of the last command
	archivedGen uint64 // the chat's gen when it was last kept
	reads       historyReader
}

// ErrClosed is reported for commands sent after Close.
var ErrClosed = errors.New("the engine is closed")

// Start runs the session on a new goroutine.
func Start(sess *Session, info ModelInfo) *Engine {
	info.Thinking = sess.CanThink()
	info.Tools = sess.CanCallTools()
	e := &Engine{sess: sess, info: info, cmds: make(chan func(), 64), out: make(chan Event),
		done: make(chan struct{}), box: mailbox.New(0, MergeDeltas), msgs: sess.Messages(), window: sess.Window(), set: sess.Settings()}
	e.loopWG.Add(1)
	go e.loop()
	go e.forward()
	e.reads.start(e)
	return e
}

func (e *Engine) loop() {
	defer e.loopWG.Done()
	for cmd := range e.cmds {
		cmd()
		e.refresh()
	}
}

// refresh updates the copies other goroutines read: the chat's
// conversation, also while a request's is in the session.
func (e *Engine) refresh() {
	msgs, window, set := e.convs.view(e.sess)
	e.mu.Lock()
	e.msgs, e.window, e.set = msgs, window, set
	e.mu.Unlock()
	if !e.convs.foreign {
		e.figures.update(e.sess)
	}
	id := e.sess.historyID
	if e.convs.foreign {
		id = e.convs.home.historyID
	}
	e.hmu.Lock()
	e.histID = id
	e.hmu.Unlock()
}

// emit queues an event; a Delta merges into a Delta at the queue's tail.
func (e *Engine) emit(ev Event) { e.box.Push(ev) }

// MergeDeltas merges next into last when both are deltas (Delta.After):
// the merge of every mailbox that carries engine events.
func MergeDeltas(last *Event, next Event) bool {
	d, ok := next.(*Delta)
	if !ok {
		return false
	}
	tail, ok := (*last).(*Delta)
	if !ok {
		return false
	}
	*last = d.After(tail)
	return true
}

// emitTurn is the session's callback: it runs on the engine goroutine, so
// an event that ends a turn carries the conversation it leaves (and the
// copies the getters return are refreshed with it).
func (e *Engine) emitTurn(ev Event) {
	switch x := ev.(type) {
	case Finished:
		x.Messages, x.Window = e.conversation()
		ev = x
	case Cancelled:
		x.Messages, x.Window = e.conversation()
		ev = x
	case Failed:
		if x.Op.Turn() {
			x.Messages, x.Window = e.conversation()
			ev = x
		} else {
			e.refresh()
		}
	case Branched:
		e.refresh()
	}
	e.emit(ev)
}

// conversation refreshes the getters' copies and returns the chat's
// conversation for an event.
func (e *Engine) conversation() ([]Message, int) {
	e.refresh()
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.msgs), e.window
}

// forward hands queued events to the consumer, blocking only itself.
func (e *Engine) forward() {
	defer close(e.out)
	for {
		// One at a time: the events behind a slow consumer go on merging.
		ev, ok, _ := e.box.Next()
		if !ok {
			select {
			case <-e.box.Wake():
				continue
			case <-e.done:
				return
			}
		}
		select {
		case e.out <- ev:
		case <-e.done:
			return
		}
	}
}

// do queues a command for the engine goroutine: its acceptance. A
// command refused (ErrClosed) reports nothing on Events.
func (e *Engine) do(op Op, cmd func()) error {
	e.cmdMu.Lock()
	defer e.cmdMu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if !op.chat() {
		e.cmds <- cmd
		return nil
	}
	e.cmds <- func() {
		// A request's conversation may be in the session (Complete):
		// chat commands act on the chat's own.
		if err := e.convs.toHome(e.sess); err != nil {
			e.emitTurn(Failed{Op: op, Err: err})
			return
		}
		cmd()
	}
	return nil
}

// Events delivers the engine's events; it is closed after Close.
func (e *Engine) Events() <-chan Event { return e.out }

// Info describes the loaded model.
func (e *Engine) Info() ModelInfo { return e.info }

// Settings in force (as of the last finished command).
func (e *Engine) Settings() Settings {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.set
}

// Messages of the conversation (as of the last finished command).
func (e *Engine) Messages() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.msgs)
}

// Window is the first of Messages the model sees (Session.Window), as of
// the same command.
func (e *Engine) Window() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.window
}

// Send starts a turn; media are files to attach to the message (encoded
// on the engine goroutine, before the prefill).
func (e *Engine) Send(text string, media ...MediaFile) error {
	return e.startTurn(OpSend, func(emit func(Event)) { e.sess.Send(text, emit, media...) })
}

// Regenerate replaces the last reply with a new one, keeping the old one
// as another version; the cache is rewound to the end of the prompt, not
// prefilled again.
func (e *Engine) Regenerate() error {
	return e.startTurn(OpRegenerate, func(emit func(Event)) { e.sess.Regenerate(emit) })
}

// Edit replaces the last user message with text and sends it; the cache
// is rewound to before the message, which stays as another version with
// its reply.
func (e *Engine) Edit(text string) error {
	return e.startTurn(OpEdit, func(emit func(Event)) { e.sess.Edit(text, emit) })
}

// SelectVersion shows version (0-based) of the message at index, with the
// turns that followed it (Branched; Failed{Op: OpVersion} when there is
// no such version).
func (e *Engine) SelectVersion(index, version int) error {
	return e.do(OpVersion, func() {
		if err := e.sess.SelectVersion(index, version, e.emitTurn); err != nil {
			e.emit(Failed{Op: OpVersion, Err: err})
		}
	})
}

// startTurn queues a turn that Cancel can stop before or while it runs.
func (e *Engine) startTurn(op Op, run func(emit func(Event))) error {
	seq := e.sendSeq.Add(1)
	return e.do(op, func() {
		cancelled := func() bool { return seq <= e.cancelTo.Load() }
		if cancelled() {
			e.emitTurn(Cancelled{Metrics: TurnMetrics{FinishReason: "cancelled"}, Unstarted: true})
			return
		}
		e.sess.cancelHook = cancelled
		run(e.emitTurn)
		e.sess.cancelHook = nil
	})
}

// Cancel stops the running turn, and any turn requested before it that
// has not started yet, after the chain call in flight.
func (e *Engine) Cancel() error {
	e.cancelTo.Store(e.sendSeq.Load())
	e.sess.Cancel()
	return nil
}

// SetSettings applies new settings between turns.
func (e *Engine) SetSettings(s Settings) error {
	return e.do(OpSettings, func() {
		if err := e.sess.SetSettings(s); err != nil {
			e.emit(Failed{Op: OpSettings, Err: err})
			return
		}
		e.emit(SettingsChanged{Settings: e.sess.Settings()})
	})
}

// Clear starts a new conversation; the one it replaces is kept in the
// history (when there is one) — and when it cannot be kept, nothing is
// cleared (Failed{Op: OpClear} with a *NotKeptError).
func (e *Engine) Clear() error {
	return e.do(OpClear, func() {
		if err := e.keepReplaced(); err != nil {
			e.emit(Failed{Op: OpClear, Err: err})
			return
		}
		if err := e.sess.Clear(); err != nil {
			e.emit(Failed{Op: OpClear, Err: err})
			return
		}
		e.refresh() // the getters agree with Cleared
		e.emit(Cleared{Settings: e.sess.Settings()})
	})
}

// Close stops the engine after the command in flight (a running turn is
// cancelled) and closes the event channel.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.sess.closing.Store(true)
		e.Cancel()
		e.cmdMu.Lock()
		e.closed = true
		close(e.cmds)
		e.cmdMu.Unlock()
		e.loopWG.Wait()
		e.reads.stop()
		e.convs.closeSpill() // the loop is over: no command touches convs now
		close(e.done)
		e.closeErr = e.sess.chain.Close()
	})
	return e.closeErr
}
