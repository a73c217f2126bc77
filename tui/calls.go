package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/mailbox"
)

// callQueue runs engine calls in order on one goroutine, so Update
// never waits on the engine (an engine over a server answers through
// HTTP) and a Send is never overtaken by the Cancel that follows it. A
// call the engine refuses comes back to Update as a refusedMsg.
type callQueue struct {
	eng     Engine
	box     *mailbox.Box[call]
	deliver func(tea.Msg) // the program's Send
	done    chan struct{}
}

// call is one engine command and the Op its refusal is reported under.
type call struct {
	op engine.Op
	fn func(Engine) error
}

// refusedMsg: the engine refused a command (closed, the server away or
// saying no); nothing of it happened and no event follows.
type refusedMsg struct {
	op  engine.Op
	err error
}

func newCallQueue(eng Engine, deliver func(tea.Msg)) *callQueue {
	c := &callQueue{eng: eng, box: mailbox.New[call](0, nil), deliver: deliver, done: make(chan struct{})}
	go c.run()
	return c
}

// push queues a call; after close it is dropped.
func (c *callQueue) push(op engine.Op, fn func(Engine) error) { c.box.Push(call{op, fn}) }

func (c *callQueue) run() {
	defer close(c.done)
	for {
		q, open := c.box.Take()
		for _, k := range q {
			if err := k.fn(c.eng); err != nil && c.deliver != nil {
				c.deliver(refusedMsg{op: k.op, err: err})
			}
		}
		if !open && len(q) == 0 {
			return
		}
		if len(q) == 0 {
			<-c.box.Wake()
		}
	}
}

// close runs what is queued and stops the goroutine.
func (c *callQueue) close() {
	c.box.Close()
	<-c.done
}
