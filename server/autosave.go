package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchard-llm/orchard/engine"
)

// The server keeps the chat's conversation on disk itself, whether or not
// a chat screen is attached (the screen's own timer stops with it): after
// each chat turn, every AutosaveEvery while it changes otherwise
// (settings, a clear, a load, a version), and at shutdown. A kill -9 then
// loses at most the turn in flight.

// defaultAutosaveEvery is the chat screen's period too.
const defaultAutosaveEvery = 2 * time.Minute

type autosaver struct {
	every    time.Duration
	dirty    atomic.Bool   // the conversation changed since the last autosave
	now      chan struct{} // a chat turn ended: save it
	quit     chan struct{}
	exited   chan struct{}
	stopOnce sync.Once
}

func newAutosaver(every time.Duration) autosaver {
	if every == 0 {
		every = defaultAutosaveEvery
	}
	return autosaver{every: every, now: make(chan struct{}, 1), quit: make(chan struct{}), exited: make(chan struct{})}
}

// noteChat marks what a chat event changed (the pump calls it).
func (a *autosaver) noteChat(ev engine.Event) {
	if c, ok := ev.(engine.Cancelled); ok && c.Unstarted {
		return // nothing of it is in the conversation
	}
	switch ev.(type) {
	case engine.Finished, engine.Cancelled:
		a.dirty.Store(true)
		select {
		case a.now <- struct{}{}:
		default: // one is already due
		}
	case engine.Cleared, engine.Branched, engine.SettingsChanged:
		a.dirty.Store(true)
	}
}

// stop ends the loop and waits for a save in flight.
func (a *autosaver) stop() {
	a.stopOnce.Do(func() { close(a.quit) })
	<-a.exited
}

func (s *Server) autosaveLoop() {
	defer close(s.saver.exited)
	tick := time.NewTicker(s.saver.every)
	defer tick.Stop()
	for {
		select {
		case <-s.saver.quit:
			return
		case <-s.saver.now:
		case <-tick.C:
			if !s.saver.dirty.Load() {
				continue
			}
		}
		s.autosave()
	}
}

// autosave saves the chat's conversation under the autosave name (and
// keeps it in the history); a failure is logged, and the next tick tries
// again. (Its event, with the checkpoint list, goes to the screens as
// any other: their panels take the list. A list that cannot be read
// after the save does not make the save fail.)
func (s *Server) autosave() error {
	s.saver.dirty.Store(false)
	for _, ev := range s.command(engine.OpAutosave, func(e Engine) error { return e.Autosave() }) {
		if f, ok := ev.(engine.Failed); ok && f.Op != engine.OpList {
			s.saver.dirty.Store(true)
			s.log.Warn("autosave", "op", f.Op, "err", f.Err)
			return f.Err
		}
	}
	return nil
}
