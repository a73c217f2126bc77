package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"

	"golang.org/x/term"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tui"
)

// isTerminal reports whether f is a terminal (an *os.File that is one).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// demoEntry marks the picker's last entry, the synthetic demo bundle.
const demoEntry = "(demo: synthetic bundle, random weights)"

// demoReplyTokens caps a demo reply: its random weights rarely produce an
// end of turn, and uncapped replies would fill the demo's context in two
// turns.
const demoReplyTokens = 256

// runChat opens the chat screen on --model, the remembered model, a model
// chosen in the picker, or (demo) the demo bundle. Every flag is checked
// first, terminal or not. Without a terminal, --demo answers a question
// piped on stdin (else a scripted one) as orchard run does.
func runChat(args []string, stdin io.Reader, stdout, stderr io.Writer, demo bool) int {
	fs := flag.NewFlagSet("orchard chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := config.RegisterFlags(fs)
	demoFlag := fs.Bool("demo", demo, "open the demo bundle (synthetic weights, made on first use)")
	family := fs.String("family", "r1", "demo bundle family: "+families)
	script := fs.String("script", "", scriptUsage)
	cont := fs.Bool("continue", false, "resume the last conversation (the autosave)")
	pick := fs.Bool("pick", false, "choose the model in the picker even when one is configured")
	var attach remoteFlag
	fs.Var(&attach, "attach", "open the chat over a running orchard serve: the default one, or --attach=ADDR (host:port, unix:/path)")
	noAttach := fs.Bool("no-attach", false, "open the model here even when orchard serve already serves it")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage
	}
	if attach.set && attach.addr == "" && len(rest) == 1 {
		attach.addr, rest = rest[0], nil // orchard --attach ADDR
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "orchard: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	if *demoFlag {
		if err := checkFamily(*family); err != nil {
			fmt.Fprintln(stderr, "orchard:", err)
			return exitUsage
		}
	}
	cfg, err := config.Load(config.Options{Env: os.Getenv, Flags: flags, Actions: tui.KeyNames()})
	if err != nil {
		return configError(stderr, "orchard", err)
	}
	if err := tui.CheckKeys(cfg.Keys); err != nil {
		fmt.Fprintln(stderr, "orchard: keys:", err)
		return exitUsage
	}
	if !isTerminal(stdout) || !isTerminal(stdin) {
		if *demoFlag {
			if *cont || *pick || attach.set {
				fmt.Fprintln(stderr, "orchard --demo: --continue, --pick and --attach need a terminal")
				return exitUsage
			}
			return demoTurn(cfg, *family, *script, stdin, stdout, stderr)
		}
		fmt.Fprintln(stderr, "orchard chat: needs a terminal; for scripts use orchard run --model DIR --prompt TEXT")
		return exitUsage
	}
	logger, logFile, err := config.OpenLog(cfg.Data.Dir, cfg.Log.Debug)
	if err != nil {
		fmt.Fprintln(stderr, "orchard: log:", err)
		return exitFailure
	}
	defer logFile.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := tui.Options{Theme: cfg.UI.Theme, Keys: cfg.Keys, DraftFile: filepath.Join(cfg.Data.Dir, "draft.txt"),
		Logger: logger, ExportDir: filepath.Join(cfg.Data.Dir, "exports")}
	if attach.set {
		if attach.addr == "" {
			attach.addr = defaultServer(ctx, cfg)
		}
		return runRemote(ctx, attach.addr, cfg, opts, stderr)
	}

	store, storeErr := checkpoints.Open(cfg.CheckpointsDir())
	if storeErr != nil {
		logger.Warn("checkpoints", "err", storeErr)
	}
	if *cont {
		if code := checkContinue(store, storeErr, stderr); code != exitOK {
			return code
		}
	}
	dir := cfg.Model.Path
	switch {
	case *cont && dir == "" && !*demoFlag && !*pick && conversationBundle(cfg) != "":
		// The bundle the autosave was made with, not the picker.
		dir = conversationBundle(cfg)
	case *demoFlag:
		if dir, err = demoBundle(*family, stderr); err != nil {
			fmt.Fprintln(stderr, "orchard:", err)
			return exitFailure
		}
	case dir == "" || *pick:
		var ok bool
		if !*pick {
			dir, *demoFlag, ok = remembered(cfg, stderr)
		}
		if ok {
			break
		}
		if dir, *demoFlag, err = pickModel(ctx, cfg, opts, stderr); err != nil {
			if errors.Is(err, tui.ErrNoChoice) {
				return exitOK
			}
			fmt.Fprintln(stderr, "orchard:", err)
			return exitFailure
		}
	}
	// A server already serving this bundle keeps it loaded: chat over it.
	// (Not with --script: the server's runtime plays its own script or none.)
	if sock, ok := servedHere(ctx, cfg, dir); ok && !*noAttach && !*cont && *script == "" {
		logger.Info("attaching", "bundle", dir, "server", sock)
		return runRemote(ctx, sock, cfg, opts, stderr)
	}
	logger.Info("opening", "bundle", dir)
	set := settingsFrom(cfg, 0)
	if *demoFlag {
		set.MaxTokens = demoReplyTokens
	}
	m, err := openModel(dir, *script, cfg, set, func(msg string) { fmt.Fprintln(stderr, msg) })
	if err != nil {
		logger.Error("open", "bundle", dir, "err", err)
		fmt.Fprintln(stderr, "orchard:", err)
		return exitCode(err)
	}
	if ml, err := engine.OpenMetricsLog(cfg.MetricsFile(), m.info, m.b.Dir, m.loadDur); err == nil {
		m.sess.Metrics = ml.Record
		defer ml.Close()
	} else {
		logger.Warn("metrics log", "err", err)
	}
	eng := engine.Start(m.sess, m.info)
	if storeErr == nil {
		eng.UseStore(store, cfg.Model.ComputeUnits)
	}
	useHistory(eng, cfg, logger)
	if storeErr == nil && *cont {
		eng.LoadCheckpoint(checkpoints.Autosave)
	}
	if tl := chatTools(cfg); tl != nil {
		opts.Tools = tl
		defer tl.Client.Close() // the servers stop with orchard
	}
	err = tui.Run(ctx, eng, opts)
	if cerr := eng.Close(); cerr != nil {
		logger.Warn("close", "err", cerr)
	}
	if storeErr == nil && len(eng.Messages()) > 0 {
		// The autosave now holds this conversation: --continue opens its bundle.
		if rerr := cfg.RememberConversation(dir); rerr != nil {
			logger.Warn("state", "err", rerr)
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		logger.Error("tui", "err", err)
		fmt.Fprintln(stderr, "orchard:", err)
		return exitFailure
	}
	return exitOK
}

// checkContinue says, in words, when there is no conversation to continue.
func checkContinue(store *checkpoints.Store, storeErr error, stderr io.Writer) int {
	if storeErr != nil {
		fmt.Fprintln(stderr, "orchard: --continue:", storeErr)
		return exitFailure
	}
	_, err := store.Show(checkpoints.Autosave)
	switch {
	case errors.Is(err, checkpoints.ErrNotFound):
		fmt.Fprintln(stderr, "orchard: nothing to continue: no conversation has been saved yet. Start one with orchard --model DIR or orchard --demo; it is saved when you quit.")
		return exitUsage
	case err != nil:
		fmt.Fprintln(stderr, "orchard: --continue: the last conversation cannot be read:", err)
		return exitFailure
	}
	return exitOK
}

// conversationBundle is the bundle of the last conversation, "" when it
// is not known or no longer there.
func conversationBundle(cfg *config.Config) string {
	dir, err := cfg.RememberedConversation()
	if err != nil || dir == "" {
		return ""
	}
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// pickModel lists the bundles found (the demo last), lets the user choose
// and remembers the choice; demo says the demo bundle was chosen.
func pickModel(ctx context.Context, cfg *config.Config, opts tui.Options, stderr io.Writer) (dir string, demo bool, err error) {
	var entries []tui.PickerEntry
	for _, f := range config.Discover(cfg.Model.SearchDirs, os.Getenv) {
		entries = append(entries, tui.PickerEntry{Name: f.Name, Family: string(f.Family), Size: humanSize(f.Size),
			Path: f.Path, Valid: f.Valid, Reason: f.Problem})
	}
	entries = append(entries, tui.PickerEntry{Name: demoEntry, Family: "r1", Path: "made in the cache folder on first use", Valid: true})
	choice, err := tui.Pick(ctx, entries, opts)
	if err != nil {
		return "", false, err
	}
	return takeChoice(cfg, choice, stderr)
}

// takeChoice opens the picker's choice and remembers it, so the next start
// opens it without asking (as the README says): a bundle by its folder,
// the demo as the demo (its folder is the cache's, made again when gone).
func takeChoice(cfg *config.Config, choice tui.PickerEntry, stderr io.Writer) (dir string, demo bool, err error) {
	remember := func() error { return cfg.RememberModel(choice.Path) }
	dir, demo = choice.Path, choice.Name == demoEntry
	if demo {
		if dir, err = demoBundle(choice.Family, stderr); err != nil {
			return "", false, err
		}
		remember = func() error { return cfg.RememberDemo(choice.Family) }
	}
	if err := remember(); err != nil {
		fmt.Fprintln(stderr, "orchard: could not remember the choice:", err)
	}
	return dir, demo, nil
}

// remembered is the model chosen last in the picker, if it can still be
// opened: a bundle whose folder is there, or the demo (made again if need
// be). ok is false when there is none, and the picker asks.
func remembered(cfg *config.Config, stderr io.Writer) (dir string, demo bool, ok bool) {
	if family, err := cfg.RememberedDemo(); err == nil && checkFamily(family) == nil {
		if dir, err = demoBundle(family, stderr); err == nil {
			return dir, true, true
		}
	}
	r, err := cfg.Remembered()
	if err != nil || r == "" {
		return "", false, false
	}
	if _, err := os.Stat(r); err != nil {
		fmt.Fprintf(stderr, "orchard: the model chosen last, %s, is gone; choose another\n", r)
		return "", false, false
	}
	return r, false, true
}

// useHistory connects the conversation history (history.*): every
// conversation is kept. Without its folder the chat goes on and says so
// when the history is asked for.
func useHistory(eng *engine.Engine, cfg *config.Config, logger *slog.Logger) {
	if !cfg.History.Enabled {
		return
	}
	hist, err := checkpoints.Open(cfg.HistoryDir())
	if err != nil {
		logger.Warn("history", "err", err)
		return
	}
	eng.UseHistory(hist, engine.HistoryPolicy{KeepKV: cfg.History.KeepKV, KVBudget: cfg.History.KVBudget})
}
