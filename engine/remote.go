package engine

import "time"

// Events a front end receives only when it reaches an engine over a
// server (server.Client): the line the chat shares with API clients, and
// the connection itself. An engine in-process never sends them.

// Line is the server's line when it changes: one reply is generated at
// a time and the others wait their turn, served fairly by client.
type Line struct {
	// Busy is what generates now: "" nothing, "chat" the chat's own
	// turn, "api" an API request.
	Busy string
	// Endpoint and Client say which API request runs: its path
	// ("/v1/chat/completions") and who sent it (an address, a user).
	Endpoint, Client string
	// Generated and TokPerS are the running API reply's figures so far.
	Generated int
	TokPerS   float64
	// Waiting counts the requests in line, the chat's message included;
	// Place is that message's place (1: next), 0 when it is not waiting.
	Waiting, Place int
}

// Connection reports the link to the server. The first one comes on
// attaching; then one each time it is lost, each failed attempt to get
// it back, and once it is back (the server's conversation follows as
// Cleared).
type Connection struct {
	Addr string
	// Down: the link is lost; Err says why. Retry is when the next
	// attempt comes, 0 when there will be none (Err then says why: the
	// server now serves another model, or refuses the key).
	Down  bool
	Err   error
	Retry time.Duration
	// Reconnected: the link is back after a loss.
	Reconnected bool
	// ContextUsed is the positions the chat's conversation fills in the
	// server's cache, on attaching and reconnecting.
	ContextUsed int
}

func (Line) event()       {}
func (Connection) event() {}
