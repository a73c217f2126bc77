package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/orchard-llm/orchard/config"
)

// parseFlags parses fs over args, allowing flags after positional
// arguments (orchard bundle inspect DIR --json); it returns the
// positionals. A bad flag is one line on fs's output — what is wrong, a
// "did you mean" for a typo, and where the flags are listed — not the
// whole list of flags (84 lines for the chat); -h and --help still print
// the list.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	defer fs.SetOutput(out)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				fs.Usage()
				return nil, err
			}
			fmt.Fprintf(out, "%s: %s; see %s --help\n", fs.Name(), flagProblem(fs, err), fs.Name())
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// flagProblem words a flag package error for one line, spelling flags
// with two dashes and suggesting the flag a typo was probably meant as.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if best := config.Nearest(name, names); best != "" {
			return fmt.Sprintf("unknown flag --%s (did you mean --%s?)", name, best)
		}
		return "unknown flag --" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag --" + name + " needs a value"
	}
	return strings.ReplaceAll(msg, "for flag -", "for flag --")
}
