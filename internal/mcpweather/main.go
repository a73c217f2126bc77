// Command mcpweather is a tiny MCP server over stdio, written with the
// official Go SDK, for the end-to-end checks and the README's worked
// example: one tool, get_weather, that answers "sunny, 15 °C in CITY".
//
//	go build -o mcp-weather ./internal/mcpweather
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_weather", Description: "The weather in a city"},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny, 15 °C in " + in.City}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpweather:", err)
		os.Exit(1)
	}
}
