package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is what one call gave.
type Result struct {
	// Text is the output for the model: at most MaxOutput bytes, cut at a
	// character and followed by a note saying so when it was longer.
	Text string
	// Full is the whole output, for a person to unfold; it equals Text
	// when nothing was cut.
	Full string
	// Structured is the tool's structured output, when it gave one.
	Structured any
	// IsError: the tool reports that it failed; Text says why.
	IsError   bool
	Truncated bool
	Elapsed   time.Duration
}

// result turns a call's content into text: text parts as they are, other
// parts named (a picture or a clip is not shown to the model), structured
// output as JSON when there is nothing else.
func result(r *mcp.CallToolResult, max int, elapsed time.Duration) Result {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[picture: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			switch res := c.Resource; {
			case res == nil:
			case res.Text != "" || len(res.Blob) == 0:
				parts = append(parts, res.Text)
			default:
				parts = append(parts, fmt.Sprintf("[resource %s: %s, %d bytes]", res.URI, res.MIMEType, len(res.Blob)))
			}
		}
	}
	if len(parts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	full := strings.Join(parts, "\n")
	out := Result{Text: full, Full: full, Structured: r.StructuredContent, IsError: r.IsError, Elapsed: elapsed}
	if len(full) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(full[cut]) {
			cut--
		}
		out.Text = full[:cut] + fmt.Sprintf("\n[output cut: the tool wrote %d bytes, the first %d are shown]", len(full), cut)
		out.Truncated = true
	}
	return out
}

// schemaMap gives a tool's input schema as a JSON object's members. The
// SDK hands it over as it decoded it; anything else is re-read as JSON.
func schemaMap(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}
