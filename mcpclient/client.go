// Package mcpclient is orchard's client of MCP servers (the Model Context
// Protocol), over the official Go SDK: servers run as a command over
// stdio or reached by streamable HTTP, started on first use, their tools
// listed and called with a timeout, their output capped for the model, and
// all of them stopped by Close. A failing stdio server's error carries the
// tail of what it wrote to stderr.
//
// The package knows nothing of the model's tool format (package tools) or
// of which calls a person allowed: a front end asks it, after asking them.
package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server says how to reach one MCP server: Command (with Args and Env)
// runs it and speaks over its stdin and stdout; URL reaches it by
// streamable HTTP, sending Headers with every request. Its fields are
// config.MCPServer's, so one converts to the other.
type Server struct {
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	Enabled bool
}

// Options tune a Client; zero values take the defaults.
type Options struct {
	// StartTimeout bounds starting a server and its handshake (an npx
	// server may first download itself). Default 60 s.
	StartTimeout time.Duration
	// CallTimeout bounds one tool call. Default 60 s.
	CallTimeout time.Duration
	// MaxOutput caps the output a call gives the model, in bytes.
	// Default 64 KiB.
	MaxOutput int
	// StopTimeout is how long Close waits for a stdio server to exit once
	// its stdin is closed, before it is terminated. Default 2 s.
	StopTimeout time.Duration
	// Version is orchard's, told to servers.
	Version string
}

// Defaults of Options.
const (
	DefaultStartTimeout = 60 * time.Second
	DefaultCallTimeout  = 60 * time.Second
	DefaultMaxOutput    = 64 << 10
	DefaultStopTimeout  = 2 * time.Second
)

func (o Options) withDefaults() Options {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o
}

// ErrClosed is returned by a Client that was closed.
var ErrClosed = errors.New("mcp: the client is closed")

// Client holds orchard's MCP servers. Nothing starts until a server's
// tools are asked for or one is called; a server that stopped starts
// again on its next use. Its methods are safe for concurrent use.
type Client struct {
	o       Options
	sdk     *mcp.Client
	ctx     context.Context // cancelled by Close: ends starts and calls under way
	cancel  context.CancelFunc
	mu      sync.Mutex
	closed  bool
	servers map[string]*server
}

// New returns a Client of the enabled servers, started on first use.
func New(servers map[string]Server, o Options) *Client {
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		o:       o,
		ctx:     ctx,
		cancel:  cancel,
		sdk:     mcp.NewClient(&mcp.Implementation{Name: "orchard", Version: o.Version}, nil),
		servers: map[string]*server{},
	}
	for name, s := range servers {
		if s.Enabled {
			c.servers[name] = &server{name: name, cfg: s}
		}
	}
	return c
}

// Servers lists the enabled servers' names, sorted.
func (c *Client) Servers() []string {
	return slices.Sorted(maps.Keys(c.servers))
}

// Tool is one tool a server offers.
type Tool struct {
	Server      string
	Name        string
	Description string
	// InputSchema is the tool's JSON Schema for its arguments, as
	// encoding/json decodes it.
	InputSchema map[string]any
}

// FullName is "server.tool", as chat.tools.allow names it.
func (t Tool) FullName() string { return t.Server + "." + t.Name }

// Tools lists a server's tools, starting it if needed. The list is kept
// until the server stops.
func (c *Client) Tools(ctx context.Context, name string) ([]Tool, error) {
	s, err := c.server(name)
	if err != nil {
		return nil, err
	}
	return s.listTools(ctx, c)
}

// Call calls a server's tool with arguments (a JSON object's members),
// starting the server if needed, and waits at most CallTimeout. A tool
// that reports a failure is not an error: its Result has IsError set and
// says why. An error is a call that could not be made or finished: the
// server did not start, crashed, or did not answer in time.
func (c *Client) Call(ctx context.Context, name, tool string, args map[string]any) (Result, error) {
	s, err := c.server(name)
	if err != nil {
		return Result{}, err
	}
	return s.call(ctx, c, tool, args)
}

func (c *Client) server(name string) (*server, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	s, ok := c.servers[name]
	if !ok {
		return nil, fmt.Errorf("mcp: no server %q is configured and enabled (known: %v)", name, c.Servers())
	}
	return s, nil
}

// Close stops every server that was started, all at once, and waits for
// them. Calls made after it fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	var wg sync.WaitGroup
	errs := make([]error, 0, len(c.servers))
	var emu sync.Mutex
	for _, s := range c.servers {
		wg.Go(func() {
			if err := s.stop(); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
