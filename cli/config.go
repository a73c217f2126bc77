package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/tui"
)

const configUsage = `usage:
  orchard config show [--json] [--config FILE] [any config flag]
  orchard config init [--config FILE] [--force]
  orchard config import-mcp [--config FILE] [MCP_JSON]
`

func runConfig(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "orchard config: want show or init\n\n"+configUsage)
		return exitUsage
	}
	switch args[0] {
	case "show":
		return configShow(args[1:], stdout, stderr)
	case "init":
		return configInit(args[1:], stdout, stderr)
	case "import-mcp":
		return configImportMCP(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, configUsage)
		return exitOK
	}
	fmt.Fprintf(stderr, "orchard config: unknown command %q (want show, init or import-mcp)\n", args[0])
	return exitUsage
}

// configShow prints the effective values and their sources. It takes
// every config flag, so one can see what a command line would change.
func configShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard config show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	flags := config.RegisterFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "orchard config show: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	// Key bindings are checked as the chat checks them: known actions, and
	// a key of its own left for send and quit.
	cfg, err := config.Load(config.Options{Env: os.Getenv, Flags: flags, Actions: tui.KeyNames()})
	if err != nil {
		return configError(stderr, "orchard config show", err)
	}
	if err := tui.CheckKeys(cfg.Keys); err != nil {
		fmt.Fprintln(stderr, "orchard config show: keys:", err)
		return exitUsage
	}
	if *asJSON {
		err = cfg.WriteJSON(stdout)
	} else {
		err = cfg.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "orchard config show:", err)
		return exitFailure
	}
	return exitOK
}

// configInit writes the commented config file with every key's default.
func configInit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard config init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "file to write (default $XDG_CONFIG_HOME/orchard/config.toml, or $"+config.ConfigEnv+")")
	force := fs.Bool("force", false, "replace an existing file")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "orchard config init: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	path, err := configPath(*file)
	if err != nil {
		fmt.Fprintln(stderr, "orchard config init:", err)
		return exitFailure
	}
	if err := config.WriteTemplate(path, os.Getenv, *force); err != nil {
		fmt.Fprintln(stderr, "orchard", err)
		if errors.Is(err, os.ErrExist) {
			return exitUsage
		}
		return exitFailure
	}
	fmt.Fprintln(stdout, "wrote", path)
	return exitOK
}

// configPath is the config file a command writes: --config, else
// $ORCHARD_CONFIG, else the default.
func configPath(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p := os.Getenv(config.ConfigEnv); p != "" {
		return p, nil
	}
	return config.DefaultFile(os.Getenv)
}

// configImportMCP adds the mcpServers of a Claude Desktop (or Claude
// Code, Cursor, VS Code) config to config.toml, saying what it added and
// what not and why.
func configImportMCP(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard config import-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", "", "config file to add the servers to (default $XDG_CONFIG_HOME/orchard/config.toml, or $"+config.ConfigEnv+")")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	const cmd = "orchard config import-mcp"
	var from string
	switch len(pos) {
	case 0:
		if from, err = config.ClaudeDesktopFile(os.Getenv, runtime.GOOS); err != nil {
			fmt.Fprintln(stderr, cmd+":", err)
			return exitUsage
		}
	case 1:
		from = pos[0]
	default:
		fmt.Fprintf(stderr, "%s: one file at most, got %d\n", cmd, len(pos))
		return exitUsage
	}
	servers, err := config.ReadMCPFile(from)
	if err != nil {
		if len(pos) == 0 && errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "%s: no Claude Desktop config at %s; name the file holding \"mcpServers\"\n", cmd, from)
		} else {
			fmt.Fprintln(stderr, cmd+":", err)
		}
		return exitUsage
	}
	path, err := configPath(*file)
	if err != nil {
		fmt.Fprintln(stderr, cmd+":", err)
		return exitFailure
	}
	added, kept, err := config.AddMCPServers(path, servers, from)
	if err != nil {
		fmt.Fprintln(stderr, cmd+":", err)
		return exitFailure
	}
	out := terminalSafe(stdout)
	for _, s := range servers {
		switch {
		case slices.Contains(added, s.Name):
			fmt.Fprintf(out, "added %s: %s\n", s.Name, describeServer(s.Server))
		default:
			fmt.Fprintf(out, "not added %s: %s\n", s.Name, kept[s.Name])
		}
		for _, n := range s.Notes {
			fmt.Fprintf(out, "  %s: %s\n", s.Name, n)
		}
	}
	switch {
	case len(servers) == 0:
		fmt.Fprintf(out, "%s has no servers\n", from)
	case len(added) > 0:
		fmt.Fprintf(out, "wrote %s\n", path)
	default:
		fmt.Fprintf(out, "%s is unchanged\n", path)
	}
	return exitOK
}

// describeServer is a server on one line: its command line, or its URL.
func describeServer(s config.MCPServer) string {
	if s.Command == "" {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

// configError prints a Load error, one problem per line, and returns the
// exit code: 2 for values the user can fix, 1 for anything else (such as
// an unreadable file).
func configError(stderr io.Writer, cmd string, err error) int {
	lines := strings.Split(err.Error(), "\n")
	if len(lines) == 1 {
		fmt.Fprintf(stderr, "%s: %s\n", cmd, lines[0])
	} else {
		fmt.Fprintf(stderr, "%s: invalid configuration:\n  %s\n", cmd, strings.Join(lines, "\n  "))
	}
	var ce *config.Error
	if errors.As(err, &ce) || errors.Is(err, os.ErrNotExist) {
		return exitUsage
	}
	return exitFailure
}
