package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/tui"
)

// runModels lists the bundles in the configured search folders and the
// Hugging Face cache, valid or not, with the first problem of each invalid one.
func runModels(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard models", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	flags := config.RegisterFlags(fs, "model.search_dirs")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "orchard models: unexpected argument %q\n", pos[0])
		return exitUsage
	}
	cfg, err := config.Load(config.Options{Env: os.Getenv, Flags: flags, Actions: tui.KeyNames()})
	if err != nil {
		return configError(stderr, "orchard models", err)
	}
	where := []string{}
	for _, d := range cfg.Model.SearchDirs {
		if _, err := os.Stat(d); err != nil {
			fmt.Fprintf(stderr, "orchard models: search folder %s (%s): %v\n", d, cfg.Source("model.search_dirs"), err)
			continue
		}
		where = append(where, d)
	}
	if hub := config.HFCacheDir(os.Getenv); hub != "" {
		where = append(where, hub)
	}
	found := config.Discover(cfg.Model.SearchDirs, os.Getenv)
	if *asJSON {
		if found == nil {
			found = []config.Found{}
		}
		if err := writeJSON(stdout, found); err != nil {
			return exitFailure
		}
		return exitOK
	}
	if len(found) == 0 {
		fmt.Fprintf(stdout, "no bundles found in %s\n", strings.Join(where, ", "))
		fmt.Fprintln(stdout, "Try orchard --demo for a synthetic demo bundle, or search another folder with orchard models --models-dir DIR (model.search_dirs in the config keeps it).")
		return exitOK
	}
	rows := [][]string{{"NAME", "FAMILY", "SIZE", "PATH", "STATUS"}}
	for _, f := range found {
		family, status := string(f.Family), "ok"
		if family == "" {
			family = "?"
		}
		if !f.Valid {
			status = "invalid: " + f.Problem
		}
		rows = append(rows, []string{f.Name, family, humanSize(f.Size), f.Path, status})
	}
	if err := writeTable(stdout, rows); err != nil {
		return exitFailure
	}
	return exitOK
}

// humanSize prints a byte count in binary units, as file managers do.
func humanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f, units := float64(n)/1024, []string{"KiB", "MiB", "GiB", "TiB"}
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
