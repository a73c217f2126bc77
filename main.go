// Command orchard is a terminal chat workstation for Gemma 4 models
// converted to Apple Core ML. On Linux it runs synthetic bundles on its
// pure-Go reference runtime. The commands live in package cli.
package main

import (
	"os"

	"github.com/orchard-llm/orchard/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
