package server

import (
	"errors"
	"net/http"
	"runtime"
	"syscall"
	"time"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/engine"
)

// orchard's own endpoints: the chat's conversation (the one attached
// screens show), its settings and checkpoints, live events, health.

// health is GET /health. Without the key (when one is set) it says only
// whether the server is up and its version: the rest names the bundle's
// folder and what the server holds.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	status := "ok"
	if s.closing.Load() {
		status = "shutting down"
	}
	if !s.keyOK(r) {
		writeJSON(w, http.StatusOK, map[string]any{"status": status, "version": s.o.Version})
		return
	}
	running, waiting := s.q.status()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	cs := s.eng.ConversationStats()
	med := s.eng.MediaStats()
	writeJSON(w, http.StatusOK, map[string]any{
		"status": status, "model": s.info.Name, "family": s.info.Family, "runtime": s.info.Runtime,
		"bundle_dir": s.o.BundleDir, "bundle_id": s.o.BundleID, "version": s.o.Version,
		"uptime_seconds": time.Since(s.started).Seconds(), "running": running, "waiting": waiting,
		"queue_limit": s.o.QueueLimit, "heap_bytes": ms.HeapAlloc,
		"conversations": map[string]any{"kept": cs.Kept, "bytes": cs.Bytes, "on_disk": cs.OnDisk, "disk_bytes": cs.DiskBytes,
			"restores": cs.Restores, "evictions": cs.Evictions},
		"media": map[string]any{"kinds": s.info.Media, "max_file_bytes": s.maxMedia(), "encoded": med.Encoded, "reused": med.Reused,
			"kept": med.Kept, "kept_bytes": med.KeptBytes},
	})
}

// events is GET /orchard/v1/events: server-sent events, the state first.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if s.closing.Load() {
		s.failure(w, errShuttingDown)
		return
	}
	sub := s.subscribe()
	defer s.unsubscribe(sub)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flush(w)
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			// A comment keeps proxies and ssh -L from idling the stream out.
			if _, err := w.Write([]byte(": ping\n\n")); err != nil || flush(w) != nil {
				return
			}
			continue
		case <-sub.Wake():
		}
		evs, open := sub.Take()
		for _, ev := range evs {
			if writeSSE(w, ev.Type, ev) != nil {
				return
			}
		}
		if !open {
			return
		}
	}
}

// async reports whether the caller wants 202 at once rather than the
// result (the attached chat screen: results reach it as events).
func async(r *http.Request) bool {
	return r.URL.Query().Get("async") == "1" || r.Header.Get("Prefer") == "respond-async"
}

// run issues a chat command and answers with its outcome: the first
// Failed as an error, else ok with what the command reported.
func (s *Server) run(w http.ResponseWriter, r *http.Request, op engine.Op, fn func(Engine) error) {
	if s.closing.Load() {
		s.failure(w, errShuttingDown)
		return
	}
	if async(r) {
		// Queued, or refused: the caller hears which at once; the
		// results come on the event stream.
		if _, err := s.issue(op, fn); err != nil {
			s.commandFailure(w, engine.Failed{Op: op, Err: err})
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"status": "queued"})
		return
	}
	out := map[string]any{"status": "ok"}
	for _, ev := range s.command(op, fn) {
		switch e := ev.(type) {
		case engine.Failed:
			s.commandFailure(w, e)
			return
		case engine.Checkpoints:
			out["checkpoints"] = toWireList(e.List)
		case engine.SettingsChanged:
			out["settings"] = toWireSettings(e.Settings)
		case engine.Cleared:
			out["messages"] = toWireMessages(e.Messages)
		case engine.Branched:
			out["messages"] = toWireMessages(e.Messages)
		case engine.ToolsChanged:
			out["tools"] = map[string]int{"count": e.Count, "tokens": e.Tokens}
		case engine.ContextReport:
			out["context"] = e.View
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// commandFailure: the engine refused or failed a chat command. The
// status says whose it is to fix: the caller's (4xx: a name it gave that
// is refused, missing or taken, a checkpoint of another bundle, a setting
// or version that does not exist) or the server's (5xx: the disk full,
// the store unreadable, a damaged file).
func (s *Server) commandFailure(w http.ResponseWriter, f engine.Failed) {
	if errors.Is(f.Err, engine.ErrClosed) {
		s.failure(w, f.Err)
		return
	}
	status := commandStatus(f.Op, f.Err)
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	apiError(w, status, typ, string(f.Op)+"_failed", "", f.Err.Error())
}

// commandStatus is the HTTP status of a chat command's failure.
func commandStatus(op engine.Op, err error) int {
	var ie *checkpoints.IdentityError
	var se *engine.SettingError
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return http.StatusInsufficientStorage
	case errors.Is(err, checkpoints.ErrInvalidName), errors.As(err, &se):
		return http.StatusBadRequest
	case errors.Is(err, checkpoints.ErrNotFound), errors.Is(err, engine.ErrNoHistory):
		return http.StatusNotFound
	case errors.Is(err, checkpoints.ErrExists), errors.As(err, &ie), errors.Is(err, checkpoints.ErrNewerVersion):
		// Taken, or made by another bundle or a newer orchard: the
		// request conflicts with what is there.
		return http.StatusConflict
	case op == engine.OpSettings || op == engine.OpVersion || op == engine.OpTools:
		// What these refuse is the request's own value.
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// session is GET /orchard/v1/session.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	running, waiting := s.q.status()
	s.hubMu.Lock()
	cur, chat := s.current, s.chat
	s.hubMu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"info": s.wireInfo(), "settings": toWireSettings(chat.set),
		"messages": toWireMessages(chat.msgs), "window": chat.window, "current": cur, "running": running, "waiting": waiting})
}

// sessionSend is POST /orchard/v1/session/messages {"text": "..."}: a
// chat turn, queued; its events go to every subscriber.
func (s *Server) sessionSend(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text   string      `json:"text"`
		Origin string      `json:"origin"`
		Media  []wireMedia `json:"media"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	files, err := s.mediaRules().chatFiles(body.Media)
	if err != nil {
		s.failure(w, err)
		return
	}
	if body.Text == "" && len(files) == 0 {
		s.failure(w, bad("invalid_value", "text", "text is empty"))
		return
	}
	if err := s.checkText("text", body.Text); err != nil {
		s.failure(w, err)
		return
	}
	// The turn keeps the files after this request is over: it gives the
	// body's place in the budget back when it is.
	if err := s.startChatTurn(body.Text, body.Origin, files, holdOf(r)); err != nil {
		s.failure(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"status": "queued"})
}

// sessionCancel is POST /orchard/v1/session/cancel.
func (s *Server) sessionCancel(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"cancelled": s.cancelChatTurn()})
}

func (s *Server) sessionClear(w http.ResponseWriter, r *http.Request) {
	s.run(w, r, engine.OpClear, func(e Engine) error { return e.Clear() })
}

func (s *Server) sessionAutosave(w http.ResponseWriter, r *http.Request) {
	s.run(w, r, engine.OpAutosave, func(e Engine) error { return e.Autosave() })
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, toWireSettings(s.chatSettings()))
}

// chatSettings are the chat's settings as its events last said.
func (s *Server) chatSettings() engine.Settings {
	s.hubMu.Lock()
	defer s.hubMu.Unlock()
	return s.chat.set
}

// putSettings is PUT /orchard/v1/settings: the fields given replace the
// chat's settings; the bundle may refuse them (400, naming the reason).
func (s *Server) putSettings(w http.ResponseWriter, r *http.Request) {
	ws := toWireSettings(s.chatSettings())
	if err := s.decodeJSON(w, r, ws); err != nil {
		s.failure(w, err)
		return
	}
	set := ws.settings()
	s.run(w, r, engine.OpSettings, func(e Engine) error { return e.SetSettings(set) })
}

func (s *Server) listCheckpoints(w http.ResponseWriter, r *http.Request) {
	s.run(w, r, engine.OpList, func(e Engine) error { return e.ListCheckpoints() })
}

// saveCheckpoint is POST /orchard/v1/checkpoints {"name": "..."}.
func (s *Server) saveCheckpoint(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"name"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	s.run(w, r, engine.OpSave, func(e Engine) error { return e.SaveCheckpoint(body.Name) })
}

func (s *Server) loadCheckpoint(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.run(w, r, engine.OpLoad, func(e Engine) error { return e.LoadCheckpoint(name) })
}

func (s *Server) forkCheckpoint(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.run(w, r, engine.OpFork, func(e Engine) error { return e.ForkCheckpoint(name) })
}

func (s *Server) deleteCheckpoint(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.run(w, r, engine.OpDelete, func(e Engine) error { return e.DeleteCheckpoint(name) })
}

// renameCheckpoint is POST /orchard/v1/checkpoints/{name}/rename {"name": "new"}.
func (s *Server) renameCheckpoint(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"name"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	old := r.PathValue("name")
	s.run(w, r, engine.OpRename, func(e Engine) error { return e.RenameCheckpoint(old, body.Name) })
}

// sessionRegenerate is POST /orchard/v1/session/regenerate: a new reply
// to the last message, a chat turn; the old reply stays as a version.
func (s *Server) sessionRegenerate(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Origin string `json:"origin"`
	}
	if r.ContentLength != 0 {
		if err := s.decodeJSON(w, r, &body); err != nil {
			s.failure(w, err)
			return
		}
	}
	if err := s.startTurn("", body.Origin, nil, nil, engine.OpRegenerate, func(e Engine) error { return e.Regenerate() }); err != nil {
		s.failure(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"status": "queued"})
}

// sessionEdit is POST /orchard/v1/session/edit {"text": "..."}: the last
// user message replaced and sent again, a chat turn; the old one stays
// as a version.
func (s *Server) sessionEdit(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text   string `json:"text"`
		Origin string `json:"origin"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	if body.Text == "" {
		s.failure(w, bad("invalid_value", "text", "text is empty"))
		return
	}
	if err := s.checkText("text", body.Text); err != nil {
		s.failure(w, err)
		return
	}
	if err := s.startTurn("", body.Origin, nil, nil, engine.OpEdit, func(e Engine) error { return e.Edit(body.Text) }); err != nil {
		s.failure(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"status": "queued"})
}

// sessionVersion is POST /orchard/v1/session/version {"index": i,
// "version": v}: another version of message i (both from 0).
func (s *Server) sessionVersion(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Index   int `json:"index"`
		Version int `json:"version"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	s.run(w, r, engine.OpVersion, func(e Engine) error { return e.SelectVersion(body.Index, body.Version) })
}

// listHistory is GET /orchard/v1/history?q=TEXT: the conversations whose
// text holds q, newest first. With "Prefer: respond-async" (an attached
// screen) it answers 202 and the list comes as a "history" event on the
// event stream, as every other command's result does.
func (s *Server) listHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	if async(r) {
		if err := s.eng.ListHistory(q); err != nil {
			s.commandFailure(w, engine.Failed{Op: engine.OpHistory, Err: err})
			return
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"status": "queued"})
		return
	}
	list, err := s.eng.SearchHistory(q)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, engine.ErrNoHistory) {
			status = http.StatusNotFound
		}
		apiError(w, status, "invalid_request_error", "history_failed", "", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "query": q, "history": toWireHistory(list)})
}

func (s *Server) resumeHistory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.run(w, r, engine.OpResume, func(e Engine) error { return e.ResumeHistory(id) })
}

func (s *Server) deleteHistory(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.run(w, r, engine.OpHistoryDelete, func(e Engine) error { return e.DeleteHistory(id) })
}

// renameHistory is POST /orchard/v1/history/rename {"id": ID, "title":
// TEXT}: a conversation's own title in the history ("" gives back its
// first message); id "" is the chat's conversation.
func (s *Server) renameHistory(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := s.decodeJSON(w, r, &body); err != nil {
		s.failure(w, err)
		return
	}
	s.run(w, r, engine.OpHistoryRename, func(e Engine) error { return e.RenameHistory(body.ID, body.Title) })
}
