package server

import "testing"

// TestMailboxCloseAfterPush: a value pushed right before the mailbox
// closes reaches a reader that takes once per wake, and that take says
// nothing more comes (it used to say "open", so the reader waited for a
// wake that never came: a server's shutdown hung on an event stream).
func TestMailboxCloseAfterPush(t *testing.T) {
	m := newMailbox[int](0, nil)
	m.push(1)
	m.close()
	<-m.wake
	items, open := m.take()
	if len(items) != 1 || open {
		t.Fatalf("take: %v, open %v; want [1], closed", items, open)
	}
	select {
	case <-m.wake:
		t.Fatal("a second wake: the reader would not need the fix")
	default:
	}
}
