package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchard-llm/orchard/termsafe"
)

// ServerError is a server that could not start, or a call or listing it
// could not finish. Stderr is the tail of what a stdio server wrote to
// its stderr, which usually says why.
type ServerError struct {
	Server string
	Op     string // "start", "list tools", "call TOOL"
	Err    error
	Stderr string
}

func (e *ServerError) Error() string {
	msg := fmt.Sprintf("mcp server %s: %s: %v", e.Server, e.Op, e.Err)
	if e.Stderr != "" {
		msg += "\n  stderr: " + strings.ReplaceAll(termsafe.Text(e.Stderr), "\n", "\n          ")
	}
	return msg
}

func (e *ServerError) Unwrap() error { return e.Err }

// server is one configured server and its connection, when started.
type server struct {
	name string
	cfg  Server

	mu      sync.Mutex // held while starting
	stopped bool
	session *mcp.ClientSession
	cmd     *exec.Cmd     // a stdio server's process
	stderr  *tail         // what it wrote to stderr
	exited  chan struct{} // closed once the session ended and the process was reaped
	tools   []Tool        // listed since it started
}

// connect returns the running session, starting the server first if it
// is not running.
func (s *server) connect(ctx context.Context, c *Client) (*mcp.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, ErrClosed
	}
	if s.session != nil {
		return s.session, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.StartTimeout)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	t, cmd, stderr, err := s.transport(c.o)
	if err != nil {
		return nil, &ServerError{Server: s.name, Op: "start", Err: err}
	}
	sess, err := c.sdk.Connect(ctx, t, nil)
	if err != nil {
		if cmd != nil {
			killGroup(cmd)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v: %w", c.o.StartTimeout, err)
		}
		return nil, &ServerError{Server: s.name, Op: "start", Err: err, Stderr: stderr.Tail()}
	}
	exited := make(chan struct{})
	s.session, s.cmd, s.stderr, s.exited, s.tools = sess, cmd, stderr, exited, nil
	go func() {
		// A server that stops (crashes, or closes its end) is started
		// again on its next use.
		_ = sess.Wait()
		_ = sess.Close() // reaps a stdio server's process
		s.mu.Lock()
		if s.session == sess {
			s.session, s.tools = nil, nil
		}
		s.mu.Unlock()
		close(exited)
	}()
	return sess, nil
}

// transport builds how to reach the server.
func (s *server) transport(o Options) (mcp.Transport, *exec.Cmd, *tail, error) {
	switch {
	case s.cfg.Command != "" && s.cfg.URL != "":
		return nil, nil, nil, errors.New("both a command and a url are set: a server is one or the other")
	case s.cfg.Command != "":
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = os.Environ()
		for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
			cmd.Env = append(cmd.Env, k+"="+s.cfg.Env[k])
		}
		stderr := &tail{}
		cmd.Stderr = stderr
		ownProcessGroup(cmd)
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: o.StopTimeout}, cmd, stderr, nil
	case s.cfg.URL != "":
		u, err := url.Parse(s.cfg.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, nil, fmt.Errorf("url %q: want http:// or https:// and a host", s.cfg.URL)
		}
		hc := &http.Client{Transport: headers{base: http.DefaultTransport, h: s.cfg.Headers}}
		// No standing event stream: orchard only asks and is answered.
		return &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil, nil, nil
	}
	return nil, nil, nil, errors.New("neither a command nor a url is set")
}

// headers adds a server's configured headers to every request.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// failure wraps an error of a running server with its stderr tail,
// waiting a moment for a process that is exiting to say its last words.
func (s *server) failure(op string, err error) error {
	s.mu.Lock()
	exited, stderr := s.exited, s.stderr
	s.mu.Unlock()
	if exited != nil && stderr != nil {
		select {
		case <-exited:
		case <-time.After(time.Second):
		}
	}
	return &ServerError{Server: s.name, Op: op, Err: err, Stderr: stderr.Tail()}
}

func (s *server) listTools(ctx context.Context, c *Client) ([]Tool, error) {
	sess, err := s.connect(ctx, c)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	cached := s.tools
	s.mu.Unlock()
	if cached != nil {
		return slices.Clone(cached), nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	var out []Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, s.failure("list tools", err)
		}
		out = append(out, Tool{Server: s.name, Name: t.Name, Description: t.Description, InputSchema: schemaMap(t.InputSchema)})
	}
	if out == nil {
		out = []Tool{}
	}
	s.mu.Lock()
	if s.session == sess {
		s.tools = out
	}
	s.mu.Unlock()
	return slices.Clone(out), nil
}

func (s *server) call(ctx context.Context, c *Client, tool string, args map[string]any) (Result, error) {
	sess, err := s.connect(ctx, c)
	if err != nil {
		return Result{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	start := time.Now()
	res, err := sess.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	elapsed := time.Since(start)
	op := "call " + tool
	switch {
	case err == nil:
		return result(res, c.o.MaxOutput, elapsed), nil
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("mcp server %s: %s: %w", s.name, op, ctx.Err())
	case c.ctx.Err() != nil:
		return Result{}, ErrClosed
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return Result{}, &ServerError{Server: s.name, Op: op,
			Err: fmt.Errorf("no answer within %v: %w", c.o.CallTimeout, context.DeadlineExceeded)}
	}
	return Result{}, s.failure(op, err)
}

// stop closes the session and ends the server's process and whatever it
// started.
func (s *server) stop() error {
	s.mu.Lock()
	s.stopped = true
	sess, cmd, exited := s.session, s.cmd, s.exited
	s.session = nil
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	err := sess.Close()
	if exited != nil {
		<-exited
	}
	if cmd != nil {
		killGroup(cmd)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return &ServerError{Server: s.name, Op: "stop", Err: err}
	}
	return nil
}
