package tui

import "github.com/orchard-llm/orchard/internal/mailbox"

// callQueue runs engine calls in order on one goroutine, so Update
// never waits on the engine and a Send is never overtaken by the
// Cancel that follows it.
type callQueue struct {
	eng  Engine
	box  *mailbox.Box[func(Engine)]
	done chan struct{}
}

func newCallQueue(eng Engine) *callQueue {
	c := &callQueue{eng: eng, box: mailbox.New[func(Engine)](0, nil), done: make(chan struct{})}
	go c.run()
	return c
}

// push queues a call; after close it is dropped.
func (c *callQueue) push(f func(Engine)) { c.box.Push(f) }

func (c *callQueue) run() {
	defer close(c.done)
	for {
		q, open := c.box.Take()
		for _, f := range q {
			f(c.eng)
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
