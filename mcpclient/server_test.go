package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also the stdio MCP server the tests start: run with
// serverEnv set, it serves instead of testing.
const (
	serverEnv  = "ORCHARD_MCP_TEST_SERVER" // "serve", or "crash-at-start"
	startedEnv = "ORCHARD_MCP_TEST_STARTED"
)

func TestMain(m *testing.M) {
	switch os.Getenv(serverEnv) {
	case "":
		os.Exit(m.Run())
	case "crash-at-start":
		fmt.Fprintln(os.Stderr, "loading settings from /etc/weather.conf")
		fmt.Fprintln(os.Stderr, "fatal: no API key: set WEATHER_API_KEY")
		os.Exit(3)
	default:
		if f := os.Getenv(startedEnv); f != "" {
			// Tells the test this process ran, with its pid.
			_ = os.WriteFile(f, fmt.Appendf(nil, "%d", os.Getpid()), 0o600)
		}
		fmt.Fprintln(os.Stderr, "test server: serving on stdio")
		if err := testServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to say back"`
}

type bigIn struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes to write"`
}

// testServer is a small MCP server: a tool that works, one that fails,
// one that hangs, one with 1 MB of output, one that crashes its server.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "orchard-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Say the text back"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Say an environment variable"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: os.Getenv(in.Text)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the disk is on fire")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Writes a lot"},
		func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			text := strings.Repeat("é", in.Bytes/2) // two bytes each: a cut must fall between characters
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Ends the server"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "panic: runtime error: index out of range [3] with length 3")
			os.Exit(2)
			return nil, nil, nil
		})
	return s
}
