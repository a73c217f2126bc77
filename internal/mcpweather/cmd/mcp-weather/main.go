// Command mcp-weather serves package mcpweather's weather tool over stdio.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchard-llm/orchard/internal/mcpweather"
)

func main() {
	if err := mcpweather.Server().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-weather:", err)
		os.Exit(1)
	}
}
