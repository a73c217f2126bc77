package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/server"
	"github.com/orchard-llm/orchard/tui"
)

// remoteFlag is --attach: alone it means the default server (the socket
// in the runtime folder, else the configured TCP address); --attach=ADDR
// or --attach ADDR names one.
type remoteFlag struct {
	set  bool
	addr string
}

func (a *remoteFlag) String() string { return a.addr }

func (a *remoteFlag) Set(v string) error {
	a.set = true
	if v != "true" {
		a.addr = v
	}
	return nil
}

func (a *remoteFlag) IsBoolFlag() bool { return true }

// defaultServer is the address the chat attaches to without one: the
// unix socket when a server answers there, else the configured address.
func defaultServer(ctx context.Context, cfg *config.Config) string {
	sock := "unix:" + cfg.SocketFile(os.Getenv)
	if _, err := server.Probe(ctx, sock, cfg.Server.APIKey); err == nil {
		return sock
	}
	return cfg.Server.Listen
}

// servedHere reports the socket of a server already serving the bundle
// in dir, if one answers on the default socket.
func servedHere(ctx context.Context, cfg *config.Config, dir string) (string, bool) {
	sock := "unix:" + cfg.SocketFile(os.Getenv)
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	h, err := server.Probe(pctx, sock, cfg.Server.APIKey)
	if err != nil || h.BundleID == "" {
		return "", false
	}
	b, err := bundle.Open(dir)
	if err != nil || b.Identity.ID != h.BundleID {
		return "", false
	}
	return sock, true
}

// runRemote shows the chat screen over a server. Quitting detaches:
// the server, and a reply it is generating, go on.
func runRemote(ctx context.Context, addr string, cfg *config.Config, opts tui.Options, stderr io.Writer) int {
	c, err := server.Connect(ctx, addr, cfg.Server.APIKey)
	if err != nil {
		fmt.Fprintln(stderr, "orchard:", err)
		fmt.Fprintln(stderr, "orchard: start a server with orchard serve --model DIR, or give its address: orchard --attach HOST:PORT")
		return exitFailure
	}
	// The screen's own MCP servers run its tools; the server runs the model.
	if tl := chatTools(cfg); tl != nil {
		opts.Tools = tl
		defer tl.Client.Close()
	}
	err = tui.Run(ctx, c, opts)
	c.Close()
	switch {
	case errors.Is(err, tui.ErrEngineStopped):
		fmt.Fprintf(stderr, "orchard: the server at %s went away\n", addr)
		return exitFailure
	case err != nil && !errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "orchard:", err)
		return exitFailure
	}
	return exitOK
}
