package mcpclient

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchard-llm/orchard/tools"
)

// Toolset is the chat's view of the servers' tools: what the model sees
// (each tool by its own name, "server.tool" where two servers share one),
// which are on, which run without asking (chat.tools.allow), and a call
// run into the result the model is given.
type Toolset struct {
	Tools []Tool
	// Failed are the servers that could not list their tools (their
	// errors say why, with the server's stderr tail).
	Failed map[string]error
	// Off are tools and servers turned off ("server.tool", "server.*").
	Off   map[string]bool
	model map[string]int // the name the model calls → index in Tools
}

// LoadToolset starts every enabled server (they stay up for their calls)
// and lists its tools; a server that fails is in Failed, not an error.
func LoadToolset(ctx context.Context, c *Client) *Toolset {
	ts := &Toolset{Failed: map[string]error{}, Off: map[string]bool{}}
	for _, name := range c.Servers() {
		list, err := c.Tools(ctx, name)
		if err != nil {
			ts.Failed[name] = err
			continue
		}
		ts.Tools = append(ts.Tools, list...)
	}
	ts.index()
	return ts
}

// index names the tools for the model: a tool's own name, unless another
// server offers one by the same name.
func (ts *Toolset) index() {
	count := map[string]int{}
	for _, t := range ts.Tools {
		count[t.Name]++
	}
	ts.model = map[string]int{}
	for i, t := range ts.Tools {
		ts.model[ts.modelName(t, count)] = i
	}
}

func (ts *Toolset) modelName(t Tool, count map[string]int) string {
	if count[t.Name] > 1 {
		return t.FullName()
	}
	return t.Name
}

// ModelName is the name the model calls t by.
func (ts *Toolset) ModelName(t Tool) string {
	for name, i := range ts.model {
		if ts.Tools[i].FullName() == t.FullName() {
			return name
		}
	}
	return t.FullName()
}

// On reports whether t is offered to the model.
func (ts *Toolset) On(t Tool) bool { return !ts.Off[t.FullName()] && !ts.Off[t.Server+".*"] }

// Declarations are the tools that are on, as the model is told of them.
// A tool whose name the format cannot write is left out.
func (ts *Toolset) Declarations() []tools.Declaration {
	var out []tools.Declaration
	for _, t := range ts.Tools {
		name := ts.ModelName(t)
		if !ts.On(t) || !tools.ValidName(name) {
			continue
		}
		out = append(out, tools.Declaration{Name: name, Description: t.Description, Parameters: t.InputSchema})
	}
	slices.SortFunc(out, func(a, b tools.Declaration) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup finds the tool a call names, if it is on.
func (ts *Toolset) Lookup(call tools.Call) (Tool, bool) {
	i, ok := ts.model[call.Name]
	if !ok || !ts.On(ts.Tools[i]) {
		return Tool{}, false
	}
	return ts.Tools[i], true
}

// Allowed reports whether allow (chat.tools.allow: "server.tool" or
// "server.*") lets t run without asking.
func Allowed(allow []string, t Tool) bool {
	return slices.Contains(allow, t.FullName()) || slices.Contains(allow, t.Server+".*")
}

// Outcome is one call as it ran: the result the model is given, and what
// a person is shown.
type Outcome struct {
	Response tools.Response
	Result   Result // the output (Full unfolds it), IsError, Elapsed
	Err      error  // the call could not be made or finished
}

// Run calls the tool a call names and makes its result for the model: the
// output's text (cut at MaxOutput with a note), or {error: …} when the
// tool failed, is unknown, or the call could not be made (timeout, crash).
func (ts *Toolset) Run(ctx context.Context, c *Client, call tools.Call) Outcome {
	t, ok := ts.Lookup(call)
	if !ok {
		err := fmt.Errorf("no tool %q is offered", call.Name)
		return Outcome{Response: errorResponse(call, err.Error()), Err: err}
	}
	start := time.Now()
	res, err := c.Call(ctx, t.Server, t.Name, call.Args)
	if err != nil {
		if res.Elapsed == 0 {
			res.Elapsed = time.Since(start)
		}
		return Outcome{Response: errorResponse(call, err.Error()), Result: res, Err: err}
	}
	if res.IsError {
		return Outcome{Response: errorResponse(call, res.Text), Result: res}
	}
	return Outcome{Response: tools.Response{Name: call.Name, Value: res.Text}, Result: res}
}

func errorResponse(call tools.Call, msg string) tools.Response {
	return tools.Response{Name: call.Name, Value: map[string]any{"error": msg}}
}

// Known reports whether name is a tool ("server.tool") or a server
// ("server.*") of the set.
func (ts *Toolset) Known(name string) bool {
	server, tool, _ := strings.Cut(name, ".")
	if _, failed := ts.Failed[server]; failed && tool == "*" {
		return true
	}
	return slices.ContainsFunc(ts.Tools, func(t Tool) bool {
		return t.Server == server && (tool == "*" || t.Name == tool)
	})
}
