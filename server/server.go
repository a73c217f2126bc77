// Package server is `orchard serve`: one loaded model behind an HTTP API
// — OpenAI's chat completions, ollama's chat, and orchard's own endpoints
// for the chat's conversation, checkpoints, settings and live events —
// and the client (client.go) through which the chat screen runs over a
// server. One engine generates one reply at a time; requests wait in a
// bounded, fair line.
package server

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/internal/mailbox"
	"github.com/orchard-llm/orchard/memledger"
	"github.com/orchard-llm/orchard/tools"
)

// Engine is what the server needs of the engine goroutine
// (*engine.Engine).
type Engine interface {
	Events() <-chan engine.Event
	Info() engine.ModelInfo
	// The chat's state when the server starts; after that the server
	// follows it from the events (Server.chat).
	Settings() engine.Settings
	Messages() []engine.Message
	Window() int // the first of Messages the model sees
	// Commands: nil when queued (their results come as events), else
	// the refusal, and no event follows.
	Send(text string, media ...engine.MediaFile) error
	Cancel() error
	SetSettings(s engine.Settings) error
	Clear() error
	SaveCheckpoint(name string) error
	LoadCheckpoint(name string) error
	DeleteCheckpoint(name string) error
	RenameCheckpoint(oldName, newName string) error
	ForkCheckpoint(name string) error
	ListCheckpoints() error
	Autosave() error
	Regenerate() error
	Edit(text string) error
	SelectVersion(index, version int) error
	ListHistory(query string) error
	SearchHistory(query string) ([]engine.HistoryInfo, error)
	ResumeHistory(id string) error
	DeleteHistory(id string) error
	RenameHistory(id, title string) error
	SetTools(t engine.ChatTools) error     // an attached screen's tools (chattools.go)
	ToolResults(rs []tools.Response) error // and their results
	// What the model sees (context.go): compaction, pins, the summary,
	// pictures and clips as a line, the window's breakdown and a
	// message's price before it is sent.
	Compact() error
	Pin(index int, pinned bool) error
	SetSummary(text string) error
	ElideMedia(index, att int, caption string) error
	ContextView() error
	Estimator() (*engine.Estimator, error)
	Mark(id uint64) error
	Complete(req engine.Request, sink func(engine.Event)) *engine.Job
	ConversationStats() engine.ConversationStats
	MediaStats() engine.MediaStats
}

// Options configure a Server.
type Options struct {
	Engine Engine
	// BundleDir and BundleID identify the bundle served; the chat
	// attaches only to a server of the bundle it was asked to open.
	BundleDir string
	BundleID  string
	// Defaults are the settings a request starts from (its own system
	// prompt, sampling and token cap replace theirs).
	Defaults engine.Settings
	// APIKey, when set, is required as "Authorization: Bearer KEY" on
	// every request that does not come through the unix socket, but
	// GET /health (guard.go).
	APIKey string
	// Guard says which names and browser origins may reach the TCP
	// listener besides this machine's own (guard.go).
	Guard GuardOptions
	// Aliases are more names requests may give the served model.
	Aliases []string
	// StrictSampling refuses sampling an argmax bundle cannot honour
	// (400) instead of decoding greedily and saying so (sampling.go).
	StrictSampling bool
	// QueueLimit is how many requests may wait while one generates;
	// 0 means 16.
	QueueLimit int
	// ShutdownGrace is how long in-flight replies may take to finish at
	// shutdown before they are cancelled; 0 means 30 s.
	ShutdownGrace time.Duration
	// MaxMediaBytes is the largest picture or clip a request may carry
	// (decoded); 0 means DefaultMaxMediaBytes. A body may hold two files
	// of that size and the longest text the context can hold (body.go).
	MaxMediaBytes int64
	// MaxBufferedBytes bounds what request bodies hold at once, all
	// requests together (each counted twice: the body and what it decodes
	// to); past it requests are refused with 503. 0 means
	// DefaultMaxBufferedBytes.
	MaxBufferedBytes int64
	// MaxBytesPerToken is the most bytes of text one token stands for
	// (engine.Session.MaxBytesPerToken): text longer than the context
	// times this is refused before it is tokenized. 0: no such check.
	MaxBytesPerToken int
	// HeaderTimeout bounds reading a request's headers; BodyTimeout the
	// wait for each read of its body; IdleTimeout how long a keep-alive
	// connection may wait for its next request; SendTimeout how long a
	// write of a reply may wait on a client that takes none of it. 0
	// means 10 s, 60 s, 75 s and 60 s. Nothing limits a whole request or
	// reply: a stream lives as long as it streams.
	HeaderTimeout, BodyTimeout, IdleTimeout, SendTimeout time.Duration
	// MaxConns caps the connections open at once over all listeners; at
	// the cap a new one closes the longest idle keep-alive connection,
	// or waits. 0 means half the process's file descriptor limit, at
	// most 1024.
	MaxConns int
	// AutosaveEvery is how often the chat's conversation is autosaved
	// while it changes (it is also saved after each chat turn, and at
	// shutdown); 0 means 2 minutes, negative none but at shutdown.
	AutosaveEvery time.Duration
	Logger        *slog.Logger
	Version       string

	// MaxReplyTokens caps a reply whose request sets no cap of its own;
	// 0: none (the context is the limit). serve --demo sets 256, as the
	// demo chat: random weights rarely end a reply.
	MaxReplyTokens int
}

// Server serves one engine.
//
// Lock order: a goroutine holding one of these mutexes takes only those
// after it, never one before —
//
//	turnMu → flightMu → hubMu
//	turnMu → cmdMu → waitMu
//
// jobsMu is taken alone. hubMu may take the subscribers' mailboxes'
// locks (leaves); the scheduler tells the line (lineChanged: hubMu)
// outside its own lock. Nothing is called on the engine under hubMu or
// waitMu, so the event pump, which takes them, never waits on a command.
type Server struct {
	o       Options
	eng     Engine
	info    engine.ModelInfo
	q       *scheduler
	http    *http.Server
	started time.Time
	log     *slog.Logger
	closing atomic.Bool
	routes  []string // every pattern Handler registers

	cmdMu   sync.Mutex // a command and its marker are queued together
	markID  uint64
	waitMu  sync.Mutex // guards waiters (pending is the pump's own)
	waiters map[uint64]chan []engine.Event
	pending []engine.Event // the pump's events since the last marker

	hubMu   sync.Mutex // guards the fields down to chat: what the screens are told
	subs    map[*mailbox.Box[wireEvent]]struct{}
	current *wireEvent // the chat turn in flight: started, then the reply so far
	user    string     // the message of the chat turn about to start, and its sender
	origin  string
	line    lineState // the line as last told (line.go)
	chatCtx int       // positions the chat's conversation fills in the cache
	chat    chatState // the chat's conversation and settings, as its events told

	turnMu   sync.Mutex // guards chatTurn
	chatTurn *chatTurn

	jobsMu sync.Mutex // guards jobs
	jobs   map[*engine.Job]struct{}

	conns  *connLimit
	budget bodyBudget

	saver autosaver

	flightMu sync.Mutex // closing and inflight.Add move together
	inflight sync.WaitGroup
	pumpDone chan struct{}

	facts   bundleFacts // what ollama's endpoints tell of the bundle
	metrics *promMetrics
	// instruction is the transcription instruction for a language
	// (transcriptionFor; tests on the tiny bundle shorten it).
	instruction func(language string) (string, error)
}

// chatState is the chat's conversation and settings as the engine's
// events carry them: what a screen attaching is sent, what GET
// /orchard/v1/session and the settings answer. Only the events move it,
// so it is never ahead of (or behind) what the screens were told.
type chatState struct {
	msgs   []engine.Message
	window int
	set    engine.Settings
}

// chatTurn is the chat's turn, queued or running.
type chatTurn struct {
	text, origin string
	media        []engine.MediaFile // the files a sent message carries
	// run starts the turn on the engine: Send, Regenerate or Edit (op).
	// A regenerate or an edit shows its message through Branched, so
	// text (the message other screens add) is empty for them.
	op      engine.Op
	run     func(Engine) error
	release func() // gives the message's body back to the budget
	cancel  context.CancelFunc
	ctx     context.Context
	running bool
}

// New starts a server's event pump over o.Engine; Serve listens.
func New(o Options) *Server {
	if o.QueueLimit <= 0 {
		o.QueueLimit = 16
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.HeaderTimeout = cmp.Or(o.HeaderTimeout, defaultHeaderTimeout)
	o.BodyTimeout = cmp.Or(o.BodyTimeout, defaultBodyTimeout)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, defaultIdleTimeout)
	o.SendTimeout = cmp.Or(o.SendTimeout, defaultSendTimeout)
	if o.MaxConns <= 0 {
		o.MaxConns = defaultMaxConns()
	}
	s := &Server{o: o, eng: o.Engine, info: o.Engine.Info(), q: newScheduler(o.QueueLimit), started: time.Now(), log: o.Logger,
		waiters: map[uint64]chan []engine.Event{}, subs: map[*mailbox.Box[wireEvent]]struct{}{}, jobs: map[*engine.Job]struct{}{},
		pumpDone: make(chan struct{}), conns: newConnLimit(o.MaxConns)}
	if !s.info.Logits {
		s.o.Defaults = greedyDefaults(s.o.Defaults)
	}
	// The chat as it is before the pump reads its first event.
	s.chat = chatState{msgs: o.Engine.Messages(), window: o.Engine.Window(), set: o.Engine.Settings()}
	s.q.changed = s.lineChanged
	s.metrics, s.instruction = newMetrics(s, memledger.Read), transcriptionFor
	s.http = &http.Server{Handler: s.deadlines(s.Handler()), ReadHeaderTimeout: o.HeaderTimeout, IdleTimeout: o.IdleTimeout,
		ConnState: s.conns.track,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if _, ok := c.(*net.UnixConn); ok {
				return context.WithValue(ctx, unixConnKey{}, true)
			}
			return ctx
		}}
	s.budget.max = cmp.Or(o.MaxBufferedBytes, DefaultMaxBufferedBytes)
	s.saver = newAutosaver(o.AutosaveEvery)
	go s.pump()
	if o.AutosaveEvery >= 0 {
		go s.autosaveLoop()
	} else {
		close(s.saver.exited)
	}
	return s
}

type unixConnKey struct{}

// Serve accepts connections on l until Shutdown, within the server's
// connection limit.
func (s *Server) Serve(l net.Listener) error {
	err := s.http.Serve(limitedListener{Listener: l, lim: s.conns})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Handler routes every endpoint, behind the guard and the API key check
// (guard.go).
func (s *Server) Handler() http.Handler {
	mux := newRouter()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /v1/models/{id}", s.model)
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("POST /v1/completions", s.completions)
	mux.HandleFunc("POST /v1/audio/transcriptions", s.transcriptions)
	mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	// As llama-server, the OpenAI paths also without /v1.
	mux.HandleFunc("GET /models", s.models)
	mux.HandleFunc("GET /models/{id}", s.model)
	mux.HandleFunc("POST /chat/completions", s.chatCompletions)
	mux.HandleFunc("POST /completions", s.completions)
	mux.HandleFunc("POST /audio/transcriptions", s.transcriptions)
	mux.HandleFunc("GET /{$}", s.root)
	mux.HandleFunc("GET /api/version", s.ollamaVersion)
	mux.HandleFunc("GET /api/tags", s.ollamaTags)
	mux.HandleFunc("GET /api/ps", s.ollamaPs)
	mux.HandleFunc("POST /api/show", s.ollamaShow)
	mux.HandleFunc("POST /api/chat", s.ollamaChat)
	mux.HandleFunc("POST /api/generate", s.ollamaGenerate)
	mux.HandleFunc("POST /api/embed", s.ollamaEmbed)
	mux.HandleFunc("POST /api/embeddings", s.ollamaEmbed)
	for _, p := range []string{"POST /api/pull", "POST /api/push", "POST /api/create", "POST /api/copy", "DELETE /api/delete", "/api/blobs/"} {
		mux.HandleFunc(p, s.ollamaManage)
	}
	mux.HandleFunc("GET /metrics", s.metrics.handler().ServeHTTP)
	mux.HandleFunc("GET /orchard/v1/events", s.events)
	mux.HandleFunc("GET /orchard/v1/session", s.session)
	mux.HandleFunc("POST /orchard/v1/session/messages", s.sessionSend)
	mux.HandleFunc("POST /orchard/v1/session/cancel", s.sessionCancel)
	mux.HandleFunc("POST /orchard/v1/session/clear", s.sessionClear)
	mux.HandleFunc("POST /orchard/v1/session/autosave", s.sessionAutosave)
	s.contextRoutes(mux)
	mux.HandleFunc("GET /orchard/v1/settings", s.getSettings)
	mux.HandleFunc("PUT /orchard/v1/settings", s.putSettings)
	mux.HandleFunc("GET /orchard/v1/checkpoints", s.listCheckpoints)
	mux.HandleFunc("POST /orchard/v1/checkpoints", s.saveCheckpoint)
	mux.HandleFunc("POST /orchard/v1/checkpoints/{name}/load", s.loadCheckpoint)
	mux.HandleFunc("POST /orchard/v1/checkpoints/{name}/fork", s.forkCheckpoint)
	mux.HandleFunc("POST /orchard/v1/checkpoints/{name}/rename", s.renameCheckpoint)
	mux.HandleFunc("DELETE /orchard/v1/checkpoints/{name}", s.deleteCheckpoint)
	mux.HandleFunc("POST /orchard/v1/session/regenerate", s.sessionRegenerate)
	mux.HandleFunc("POST /orchard/v1/session/edit", s.sessionEdit)
	mux.HandleFunc("POST /orchard/v1/session/version", s.sessionVersion)
	mux.HandleFunc("PUT /orchard/v1/session/tools", s.sessionTools)
	mux.HandleFunc("POST /orchard/v1/session/tool-results", s.sessionToolResults)
	mux.HandleFunc("GET /orchard/v1/history", s.listHistory)
	mux.HandleFunc("POST /orchard/v1/history/{id}/resume", s.resumeHistory)
	mux.HandleFunc("DELETE /orchard/v1/history/{id}", s.deleteHistory)
	mux.HandleFunc("POST /orchard/v1/history/rename", s.renameHistory)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, apiFailure{status: http.StatusNotFound, typ: "invalid_request_error", code: "not_found",
			msg: "no endpoint " + r.Method + " " + r.URL.Path + " (see the README, section orchard serve)"})
	})
	s.routes = mux.patterns
	return s.metrics.count(mux.ServeMux, s.guard(s.authorize(s.holding(mux))))
}

// pump reads the engine's events: it answers command waiters at their
// markers and passes the chat's events to every subscriber.
func (s *Server) pump() {
	defer close(s.pumpDone)
	for ev := range s.eng.Events() {
		if m, ok := ev.(engine.Marker); ok {
			s.waitMu.Lock()
			ch := s.waiters[m.ID]
			delete(s.waiters, m.ID)
			s.waitMu.Unlock()
			if ch != nil {
				ch <- s.pending
			}
			s.pending = nil
			continue
		}
		if _, ok := ev.(*engine.Delta); !ok {
			s.pending = append(s.pending, ev)
		}
		switch ev.(type) {
		case engine.Finished, engine.Cancelled:
			// Counted before the screens hear of it, so that a scrape
			// after the turn's end includes it.
			s.metrics.turn("chat", ev)
		}
		s.publishChat(ev)
		s.saver.noteChat(ev)
		switch e := ev.(type) {
		case engine.Finished, engine.Cancelled:
			s.chatTurnOver()
		case engine.Failed:
			if e.Op == engine.OpSend {
				s.chatTurnOver()
			}
		}
	}
	s.hubMu.Lock()
	for sub := range s.subs {
		sub.Close()
	}
	s.hubMu.Unlock()
}

// issue queues a command (op) on the engine followed by a marker; the
// channel receives the events the command produced (deltas left out). A
// command the engine refuses is not waited for: its refusal comes back.
func (s *Server) issue(op engine.Op, fn func(Engine) error) (chan []engine.Event, error) {
	ch := make(chan []engine.Event, 1)
	s.cmdMu.Lock()
	defer s.cmdMu.Unlock()
	if err := fn(s.eng); err != nil {
		return nil, err
	}
	s.markID++
	id := s.markID
	s.waitMu.Lock()
	s.waiters[id] = ch
	s.waitMu.Unlock()
	if err := s.eng.Mark(id); err != nil {
		s.waitMu.Lock()
		delete(s.waiters, id)
		s.waitMu.Unlock()
		return nil, err
	}
	return ch, nil
}

// command runs a command and waits for its events; a refusal is its
// one Failed.
func (s *Server) command(op engine.Op, fn func(Engine) error) []engine.Event {
	ch, err := s.issue(op, fn)
	if err != nil {
		return []engine.Event{engine.Failed{Op: op, Err: err}}
	}
	select {
	case evs := <-ch:
		return evs
	case <-s.pumpDone:
		return []engine.Event{engine.Failed{Op: engine.OpCommand, Err: engine.ErrClosed}}
	}
}

// publishChat passes a chat event to the subscribers and keeps the turn
// in flight up to date for screens that attach during it.
func (s *Server) publishChat(ev engine.Event) {
	w, ok := toWire(ev)
	if !ok {
		return
	}
	if turnOver(ev) {
		// The screens may start the next turn as soon as they see this
		// one end (ctrl+g right after a reply): it is over for them.
		s.turnMu.Lock()
		if ct := s.chatTurn; ct != nil && ct.running {
			s.chatTurn = nil
		}
		s.turnMu.Unlock()
	}
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	// Every event carries the state it implies: the chat's state moves
	// with the events, never from the engine's getters.
	switch e := ev.(type) {
	case engine.Started:
		w.User, w.Origin = s.user, s.origin
		cur := w
		s.current = &cur
		s.chat.window = e.Window
	case *engine.Delta:
		if s.current != nil {
			s.current.Text += e.Text
			s.current.Live = w.Live
		}
	case engine.Finished:
		s.current = nil
		s.chatCtx = e.Metrics.ContextUsed
		s.chat.msgs, s.chat.window = e.Messages, e.Window
		w.Messages, w.Window = toWireMessages(e.Messages), e.Window
	case engine.Cancelled:
		s.current = nil
		s.chatCtx = e.Metrics.ContextUsed
		s.chat.msgs, s.chat.window = e.Messages, e.Window
		w.Messages, w.Window = toWireMessages(e.Messages), e.Window
	case engine.Cleared:
		s.current = nil
		s.chatCtx = e.ContextUsed
		s.chat = chatState{msgs: e.Messages, window: e.Window, set: e.Settings}
	case engine.Branched:
		s.chatCtx = e.ContextUsed
		s.chat.msgs, s.chat.window = e.Messages, e.Window
	case engine.Compacted:
		s.chatCtx = e.ContextUsed
		s.chat.window = e.Window
	case engine.SettingsChanged:
		s.chat.set = e.Settings
	case engine.Failed:
		if e.Op.Turn() {
			s.current = nil
			s.chat.msgs, s.chat.window = e.Messages, e.Window
			w.Messages, w.Window = toWireMessages(e.Messages), e.Window
		}
	}
	s.broadcastLocked(w)
}

// turnOver reports whether a chat event ends the chat's turn.
func turnOver(ev engine.Event) bool {
	switch e := ev.(type) {
	case engine.Finished, engine.Cancelled:
		return true
	case engine.Failed:
		return e.Op.Turn()
	}
	return false
}

// publish passes an event of an API request to the subscribers.
func (s *Server) publish(w wireEvent) {
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	s.broadcastLocked(w)
}

func (s *Server) broadcastLocked(w wireEvent) {
	for sub := range s.subs {
		if !sub.Push(w) {
			delete(s.subs, sub) // a reader that fell too far behind
		}
	}
}

// subscribe adds a subscriber; its first event is the state: the model,
// the settings, the conversation and the chat turn in flight.
func (s *Server) subscribe() *mailbox.Box[wireEvent] {
	sub := mailbox.New(4096, mergeWireDelta)
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	if s.closing.Load() {
		sub.Close()
		return sub
	}
	st := wireEvent{Type: "state", Info: s.wireInfo(), Settings: toWireSettings(s.chat.set),
		Messages: toWireMessages(s.chat.msgs), Window: s.chat.window, ContextUsed: s.chatCtx, Line: s.line.wire()}
	if s.current != nil {
		cur := *s.current
		st.Current = &cur
	}
	sub.Push(st)
	s.subs[sub] = struct{}{}
	return sub
}

func (s *Server) unsubscribe(sub *mailbox.Box[wireEvent]) {
	s.hubMu.Lock()
	delete(s.subs, sub)
	s.hubMu.Unlock()
	sub.Close()
}

// errChatBusy refuses a chat message while another is queued or running.
var errChatBusy = errors.New("a reply is already being generated for this conversation; wait for it or cancel it")

// startChatTurn queues a chat turn; it runs when the engine is free. It
// goes on if the sender goes away: the reply is there when it attaches
// again.
func (s *Server) startChatTurn(text, origin string, media []engine.MediaFile, h *hold) error {
	return s.startTurn(text, origin, media, h, engine.OpSend, func(e Engine) error { return e.Send(text, media...) })
}

// startTurn queues a chat turn that run starts on the engine. The turn
// takes over h, the request's place in the bodies' budget (nil: none),
// and gives it back when it ends.
func (s *Server) startTurn(text, origin string, media []engine.MediaFile, h *hold, op engine.Op, run func(Engine) error) error {
	s.turnMu.Lock()
	defer s.turnMu.Unlock()
	if s.chatTurn != nil {
		return errChatBusy
	}
	if !s.enter() {
		return errShuttingDown
	}
	t, err := s.q.enqueue(holder{client: "chat", kind: "chat"})
	if err != nil {
		s.inflight.Done()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ct := &chatTurn{text: text, origin: origin, media: media, cancel: cancel, ctx: ctx, op: op, run: run, release: func() {}}
	if h != nil {
		ct.release = h.pass()
	}
	s.chatTurn = ct
	go s.runChatTurn(ct, t)
	return nil
}

func (s *Server) runChatTurn(ct *chatTurn, t *ticket) {
	defer s.inflight.Done()
	defer func() {
		s.turnMu.Lock()
		if s.chatTurn == ct {
			s.chatTurn = nil
		}
		s.turnMu.Unlock()
		ct.cancel()
		ct.release()
	}()
	if err := s.q.wait(ct.ctx, t); err != nil {
		s.publishChat(s.unstarted())
		return
	}
	defer s.q.release(t)
	s.turnMu.Lock()
	if ct.ctx.Err() != nil {
		s.turnMu.Unlock()
		s.publishChat(s.unstarted())
		return
	}
	ct.running = true
	s.hubMu.Lock()
	s.user, s.origin = ct.text, ct.origin
	s.hubMu.Unlock()
	ch, err := s.issue(ct.op, ct.run)
	s.turnMu.Unlock()
	if err != nil {
		s.publishChat(s.refusedTurn(ct.op, err))
		return
	}
	select {
	case <-ch:
	case <-s.pumpDone:
	}
}

// unstarted is the end of a chat turn cancelled in line: nothing was
// generated, and the conversation is and fills the context as before.
func (s *Server) unstarted() engine.Cancelled {
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	return engine.Cancelled{Metrics: engine.TurnMetrics{FinishReason: "cancelled", ContextUsed: s.chatCtx, ContextLimit: s.info.Context},
		Unstarted: true, Messages: s.chat.msgs, Window: s.chat.window}
}

// refusedTurn is the end of a chat turn the engine refused (it is
// closing): the conversation is as it was.
func (s *Server) refusedTurn(op engine.Op, err error) engine.Failed {
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	return engine.Failed{Op: op, Err: err, Messages: s.chat.msgs, Window: s.chat.window}
}

// chatTurnOver frees the chat for the next message as soon as the
// running turn's last event is out: a screen that sends right after the
// reply it saw end must not be told one is still being generated. The
// next turn waits in the line for this one's place.
func (s *Server) chatTurnOver() {
	s.turnMu.Lock()
	defer s.turnMu.Unlock()
	if ct := s.chatTurn; ct != nil && ct.running {
		s.chatTurn = nil
	}
}

// cancelChatTurn stops the chat turn, queued or running.
func (s *Server) cancelChatTurn() bool {
	s.turnMu.Lock()
	defer s.turnMu.Unlock()
	ct := s.chatTurn
	if ct == nil {
		return false
	}
	ct.cancel()
	if ct.running {
		// Only the chat turn runs now (one generation at a time), so
		// the engine's cancel reaches it and nothing else.
		s.eng.Cancel()
	}
	return true
}

// track remembers a running job so shutdown can cancel it.
func (s *Server) track(j *engine.Job) func() {
	s.jobsMu.Lock()
	s.jobs[j] = struct{}{}
	s.jobsMu.Unlock()
	return func() {
		s.jobsMu.Lock()
		delete(s.jobs, j)
		s.jobsMu.Unlock()
	}
}

var errShuttingDown = errors.New("the server is shutting down")

// enter counts a request in flight, unless the server is shutting down;
// inflight.Done ends it.
func (s *Server) enter() bool {
	s.flightMu.Lock()
	defer s.flightMu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.inflight.Add(1)
	return true
}

// Shutdown stops accepting requests, lets replies in flight finish for
// the grace period (then cancels them), and autosaves the chat's
// conversation. The caller closes the engine afterwards.
func (s *Server) Shutdown(ctx context.Context) error {
	s.flightMu.Lock()
	s.hubMu.Lock()
	s.closing.Store(true)
	s.hubMu.Unlock()
	s.flightMu.Unlock()
	s.q.close()
	s.hubMu.Lock()
	for sub := range s.subs {
		sub.Close() // event streams end, so their handlers return
	}
	s.subs = map[*mailbox.Box[wireEvent]]struct{}{}
	s.hubMu.Unlock()
	grace, cancel := context.WithTimeout(ctx, s.o.ShutdownGrace)
	defer cancel()
	done := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-grace.Done():
		s.log.Warn("shutdown: cancelling replies in flight")
		s.jobsMu.Lock()
		for j := range s.jobs {
			j.Cancel()
		}
		s.jobsMu.Unlock()
		s.cancelChatTurn()
		<-done
	}
	err := s.http.Shutdown(ctx)
	s.saver.stop()
	if aerr := s.autosave(); err == nil {
		err = aerr
	}
	return err
}

// checkSettings judges a request's settings against the bundle, as the
// engine will, from the defaults requests start from.
func (s *Server) checkSettings(set engine.Settings) error {
	_, err := engine.CheckSettings(s.info, s.o.Defaults, set)
	return err
}

// clientKey names the client a request comes from, for fair queueing:
// the OpenAI "user" field, else the X-Orchard-Client header, else the
// remote address.
func clientKey(r *http.Request, user string) string {
	if user != "" {
		return "user:" + user
	}
	if c := r.Header.Get("X-Orchard-Client"); c != "" {
		return "client:" + c
	}
	if r.Context().Value(unixConnKey{}) != nil {
		return "unix"
	}
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		host = h
	}
	return "addr:" + strings.ToLower(host)
}
