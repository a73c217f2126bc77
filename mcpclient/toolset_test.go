package mcpclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/orchard-llm/orchard/tools"
)

// TestToolsetRun: a call becomes the result the model is given — the
// output, {error} for a tool that fails, a timeout or an unknown tool,
// the output cut with a note past MaxOutput (the whole kept in Full); a
// tool or server turned off is not declared nor run; two servers with a
// tool of the same name are told apart by "server.tool".
func TestToolsetRun(t *testing.T) {
	srv := httpServer(t, "k")
	c := newClient(t, map[string]Server{"a": srv, "b": srv}, Options{CallTimeout: 2 * time.Second, MaxOutput: 1 << 10})
	ctx := context.Background()
	ts := LoadToolset(ctx, c)
	if len(ts.Failed) != 0 || len(ts.Tools) != 12 {
		t.Fatalf("tools %d, failed %v", len(ts.Tools), ts.Failed)
	}
	if d := ts.Declarations(); len(d) != 12 || d[0].Name != "a.big" {
		t.Fatalf("declarations: %d, first %+v", len(d), d[0])
	}
	errorOf := func(r tools.Response) string {
		m, _ := r.Value.(map[string]any)
		s, _ := m["error"].(string)
		return s
	}
	if o := ts.Run(ctx, c, tools.Call{Name: "a.echo", Args: map[string]any{"text": "hi"}}); o.Err != nil || o.Response != (tools.Response{Name: "a.echo", Value: "echo: hi"}) {
		t.Errorf("echo: %+v", o)
	}
	if o := ts.Run(ctx, c, tools.Call{Name: "a.fail"}); !o.Result.IsError || !strings.Contains(errorOf(o.Response), "the disk is on fire") {
		t.Errorf("fail: %+v", o)
	}
	if o := ts.Run(ctx, c, tools.Call{Name: "b.hang"}); o.Err == nil || !strings.Contains(errorOf(o.Response), "no answer within 2s") {
		t.Errorf("hang: %+v", o)
	}
	o := ts.Run(ctx, c, tools.Call{Name: "a.big", Args: map[string]any{"bytes": 1 << 18}})
	text, _ := o.Response.Value.(string)
	if !o.Result.Truncated || len(o.Result.Full) != 1<<18 || len(text) > 1<<10+200 || !strings.Contains(text, "the first 1024 are shown") {
		t.Errorf("big: truncated %v, full %d, text %d bytes (%v)", o.Result.Truncated, len(o.Result.Full), len(text), o.Err)
	}
	if o := ts.Run(ctx, c, tools.Call{Name: "echo"}); o.Err == nil || !strings.Contains(errorOf(o.Response), "no tool") {
		t.Errorf("unknown: %+v", o)
	}
	ts.Off["b.*"], ts.Off["a.crash"] = true, true
	if d := ts.Declarations(); len(d) != 5 {
		t.Errorf("with b and a.crash off: %d declarations", len(d))
	}
	if o := ts.Run(ctx, c, tools.Call{Name: "b.echo"}); o.Err == nil {
		t.Error("a tool of a server turned off ran")
	}
	if !ts.Known("b.*") || !ts.Known("a.echo") || ts.Known("c.*") || ts.Known("a.nope") {
		t.Error("Known")
	}
	if !Allowed([]string{"a.*"}, Tool{Server: "a", Name: "x"}) || Allowed([]string{"a.y"}, Tool{Server: "a", Name: "x"}) {
		t.Error("Allowed")
	}
}
