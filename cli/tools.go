package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/mcpclient"
	"github.com/orchard-llm/orchard/tools"
	"github.com/orchard-llm/orchard/tui"
)

// mcpServers are the config's servers as the MCP client takes them.
func mcpServers(cfg *config.Config) map[string]mcpclient.Server {
	out := map[string]mcpclient.Server{}
	for name, s := range cfg.MCP.Servers {
		out[name] = mcpclient.Server(s)
	}
	return out
}

// runTools is orchard run --tools: the config's MCP servers are started,
// their tools declared, and each call the model makes runs if
// chat.tools.allow (--allow-tool) allows it — no one is asked, so any
// other is refused and the model is told. The loop ends with the answer,
// or at chat.tools.max_calls.
type runTools struct {
	client *mcpclient.Client
	set    *mcpclient.Toolset
	allow  []string
	log    io.Writer
}

// startRunTools starts the servers and declares their tools to sess.
func startRunTools(ctx context.Context, cfg *config.Config, sess *engine.Session, log io.Writer) (*runTools, error) {
	c := mcpclient.New(mcpServers(cfg), mcpclient.Options{Version: moduleVersion()})
	ts := mcpclient.LoadToolset(ctx, c)
	for name, err := range ts.Failed {
		fmt.Fprintf(log, "note: MCP server %s: %v\n", name, err)
	}
	decls := ts.Declarations()
	cost, err := sess.SetTools(engine.ChatTools{Decls: decls, MaxCalls: cfg.Chat.Tools.MaxCalls})
	if err != nil {
		c.Close()
		return nil, err
	}
	fmt.Fprintf(log, "  tools: %d declared (%d context tokens)\n", len(decls), cost)
	return &runTools{client: c, set: ts, allow: cfg.Chat.Tools.Allow, log: log}, nil
}

// results runs (or refuses) the calls a turn asked for.
func (r *runTools) results(ctx context.Context, calls []tools.Call) []tools.Response {
	out := make([]tools.Response, 0, len(calls))
	for _, call := range calls {
		args, _ := json.Marshal(call.Args)
		t, ok := r.set.Lookup(call)
		if ok && !mcpclient.Allowed(r.allow, t) {
			fmt.Fprintf(r.log, "tool %s %s: refused (not in chat.tools.allow; --allow-tool %s runs it)\n", t.FullName(), args, t.FullName())
			out = append(out, engine.Refused(call))
			continue
		}
		o := r.set.Run(ctx, r.client, call)
		switch {
		case o.Err != nil:
			fmt.Fprintf(r.log, "tool %s %s: failed after %s: %v\n", call.Name, args, o.Result.Elapsed.Round(1e6), o.Err)
		case o.Result.IsError:
			fmt.Fprintf(r.log, "tool %s %s: the tool reports an error (%s): %s\n", call.Name, args, o.Result.Elapsed.Round(1e6), o.Result.Text)
		default:
			note := ""
			if o.Result.Truncated {
				note = fmt.Sprintf(", cut to %d of %d bytes for the model", len(o.Result.Text), len(o.Result.Full))
			}
			fmt.Fprintf(r.log, "tool %s %s: %d bytes in %s%s\n", t.FullName(), args, len(o.Result.Full), o.Result.Elapsed.Round(1e6), note)
		}
		out = append(out, o.Response)
	}
	return out
}

// loop gives results back while the conversation waits for them.
func (r *runTools) loop(ctx context.Context, sess *engine.Session, emit func(engine.Event)) error {
	for {
		calls := sess.AwaitedCalls()
		if calls == nil {
			return nil
		}
		if err := sess.ToolResults(r.results(ctx, calls), emit); err != nil {
			return err
		}
	}
}

func (r *runTools) Close() error { return r.client.Close() }

// chatTools are the chat's MCP tools (nil when no server is enabled): the
// servers start when the chat opens, and a tool allowed "always" is kept
// in the config file.
func chatTools(cfg *config.Config) *tui.ToolsOptions {
	servers := mcpServers(cfg)
	c := mcpclient.New(servers, mcpclient.Options{Version: moduleVersion()})
	if len(c.Servers()) == 0 {
		return nil
	}
	file := cfg.File
	return &tui.ToolsOptions{Client: c, Allow: cfg.Chat.Tools.Allow, MaxCalls: cfg.Chat.Tools.MaxCalls,
		KeepAllowed: func(name string) error { return config.AllowTool(file, name) }}
}
