// Package mcpweather is a tiny MCP server written with the official Go
// SDK, for tests, the end-to-end check and the README's worked example:
// one tool, get_weather, that answers "sunny, 15 °C in CITY". The
// command (cmd/mcp-weather) serves it over stdio:
//
//	go build -o mcp-weather ./internal/mcpweather/cmd/mcp-weather
package mcpweather

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

// Server is the weather server.
func Server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "get_weather", Description: "The weather in a city"},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny, 15 °C in " + in.City}}}, nil, nil
		})
	return s
}
