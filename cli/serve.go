package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/scratch"
	"github.com/orchard-llm/orchard/server"
)

// runServe is `orchard serve`: the model loaded once, behind the HTTP API
// on a TCP address and a unix socket, until SIGINT or SIGTERM.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := config.RegisterFlags(fs) // --model, --listen, --api-key, the generation defaults, ...
	demo := fs.Bool("demo", false, "serve the demo bundle (synthetic weights, made on first use)")
	family := fs.String("family", "r1", "demo bundle family: r1, v2, stateful3, stateful3-logits")
	script := fs.String("script", "", scriptUsage)
	socket := fs.String("socket", "", "unix socket `path` (default: orchard.sock in the runtime folder); none: no socket")
	queue := fs.Int("queue", 16, "requests that may wait while one generates (more are refused with 503)")
	keep := fs.Int("keep", 4, "conversations of API clients kept for reuse besides the chat's")
	keepMB := fs.Int("keep-mb", 512, "cache memory those conversations may hold together, in MiB")
	spillMB := fs.Int("spill-mb", 1024, "disk those pushed out of memory may take, in MiB, in a folder of this server's own under the data folder's conversations/; 0: none")
	grace := fs.Duration("grace", 30*time.Second, "how long replies in flight may take to finish at shutdown")
	bufferMB := fs.Int("buffer-mb", 512, "memory request bodies may hold at once, all requests together (each counted twice: the body and what it decodes to), in MiB; past it requests get 503")
	cont := fs.Bool("continue", false, "resume the chat's last conversation (the autosave)")
	if rest, err := parseFlags(fs, args); err != nil {
		return exitUsage
	} else if len(rest) > 0 {
		fmt.Fprintf(stderr, "orchard serve: unexpected argument %q\n", rest[0])
		return exitUsage
	}
	cfg, err := config.Load(config.Options{Env: os.Getenv, Flags: flags})
	if err != nil {
		return configError(stderr, "orchard serve", err)
	}
	if *queue < 1 || *bufferMB < 1 || *keep < 0 || *keepMB < 0 || *spillMB < 0 || *grace < 0 {
		fmt.Fprintln(stderr, "orchard serve: --queue and --buffer-mb must be at least 1; --keep, --keep-mb, --spill-mb and --grace must not be negative")
		return exitUsage
	}
	if err := server.CheckExposure(cfg.Server.Listen, cfg.Server.APIKey); err != nil {
		fmt.Fprintln(stderr, "orchard serve:", err)
		return exitUsage
	}
	if (cfg.Model.Path == "") == !*demo {
		fmt.Fprintln(stderr, "orchard serve: give --model DIR (or model.path in the config) or --demo")
		return exitUsage
	}
	logger, logFile, err := config.OpenLog(cfg.Data.Dir, cfg.Log.Debug)
	if err != nil {
		fmt.Fprintln(stderr, "orchard serve: log:", err)
		return exitFailure
	}
	defer logFile.Close()
	dir := cfg.Model.Path
	if *demo {
		if dir, err = demoBundle(*family, stderr); err != nil {
			fmt.Fprintln(stderr, "orchard serve:", err)
			return exitFailure
		}
	}
	// Listen before loading: a taken port or a live server on the socket
	// should not cost a model load.
	tcp, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		fmt.Fprintln(stderr, "orchard serve:", err)
		return exitFailure
	}
	defer tcp.Close()
	sockPath := *socket
	if sockPath == "" {
		sockPath = cfg.SocketFile(os.Getenv)
	}
	var unix net.Listener
	if sockPath != "none" {
		if unix, err = server.ListenUnix(sockPath); err != nil {
			fmt.Fprintln(stderr, "orchard serve:", err)
			return exitFailure
		}
		defer os.Remove(sockPath)
		defer unix.Close()
	}

	fmt.Fprintf(stderr, "loading %s\n", dir)
	// The demo's replies are capped as in the demo chat, the chat's and
	// the API's alike.
	replyCap := 0
	if *demo {
		replyCap = demoReplyTokens
	}
	m, err := openModel(dir, *script, cfg, settingsFrom(cfg, replyCap), func(msg string) { fmt.Fprintln(stderr, " ", msg) })
	if err != nil {
		logger.Error("open", "bundle", dir, "err", err)
		fmt.Fprintln(stderr, "orchard serve:", err)
		var ve *bundle.ValidationError
		if errors.As(err, &ve) || errors.Is(err, bundle.ErrNotBundle) {
			return exitUsage
		}
		return exitFailure
	}
	if ml, err := engine.OpenMetricsLog(cfg.MetricsFile(), m.info, m.b.Dir, m.loadDur); err == nil {
		m.sess.Metrics = ml.Record
		defer ml.Close()
	} else {
		logger.Warn("metrics log", "err", err)
	}
	eng := engine.Start(m.sess, m.info)
	defer eng.Close()
	useHistory(eng, cfg, logger)
	if store, err := checkpoints.Open(cfg.CheckpointsDir()); err == nil {
		eng.UseStore(store, cfg.Model.ComputeUnits)
		if *cont {
			eng.LoadCheckpoint(checkpoints.Autosave)
		}
	} else {
		logger.Warn("checkpoints", "err", err)
	}
	eng.KeepConversations(*keep, int64(*keepMB)<<20)
	if *spillMB > 0 {
		// A folder of this process's own: the data folder may be the
		// user's (--data-dir ~/notes), and another server may share it.
		// Its Close runs after eng.Close below, which removes the files.
		sp, err := scratch.Open(filepath.Join(cfg.Data.Dir, "conversations"), "spill", engine.SpillFiles()...)
		if err != nil {
			logger.Warn("spill", "err", err)
			fmt.Fprintln(stderr, "orchard serve: conversations pushed out of memory will not be kept on disk:", err)
		} else {
			defer sp.Close()
			eng.SpillConversations(sp.Dir(), int64(*spillMB)<<20)
		}
	}
	defaults := m.set // the config's, fitted to the bundle (fitSettings)
	srv := server.New(server.Options{Engine: eng, BundleDir: m.b.Dir, BundleID: m.b.Identity.ID, Defaults: defaults,
		APIKey: cfg.Server.APIKey, MaxMediaBytes: cfg.Server.MaxMediaSize, QueueLimit: *queue, ShutdownGrace: *grace, Logger: logger, Version: moduleVersion(),
		Guard:   server.GuardOptions{Listen: cfg.Server.Listen, AllowedHosts: cfg.Server.AllowedHosts, Origins: cfg.Server.Origins},
		Aliases: cfg.Server.Aliases, StrictSampling: cfg.Server.StrictSampling, MaxBufferedBytes: int64(*bufferMB) << 20,
		MaxBytesPerToken: m.sess.MaxBytesPerToken(),
		MaxReplyTokens:   replyCap})

	// The server outlives the SSH session that started it; stop it with
	// ctrl+c or kill (SIGTERM).
	signal.Ignore(syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(tcp) }()
	if unix != nil {
		go func() { errc <- srv.Serve(unix) }()
	}
	printBanner(stderr, m.info, tcp.Addr().String(), sockPath, cfg.Server.APIKey != "")
	logger.Info("serving", "bundle", dir, "listen", tcp.Addr().String(), "socket", sockPath)

	code := exitOK
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "orchard serve: shutting down (replies in flight may finish; ctrl+c again to stop at once)")
	case err := <-errc:
		if err != nil {
			fmt.Fprintln(stderr, "orchard serve:", err)
			code = exitFailure
		}
	}
	stop() // a second signal kills the process as usual
	sctx, cancel := context.WithTimeout(context.Background(), *grace+30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("shutdown", "err", err)
		fmt.Fprintln(stderr, "orchard serve: shutdown:", err)
	}
	if err := eng.Close(); err != nil {
		logger.Warn("close", "err", err)
	}
	return code
}

// printBanner says where the server is and how to reach it from a laptop.
func printBanner(w io.Writer, info engine.ModelInfo, addr, sock string, keyed bool) {
	host, port, _ := net.SplitHostPort(addr)
	name, _ := os.Hostname()
	if name == "" {
		name = "mac"
	}
	fmt.Fprintf(w, "orchard serve: %s (%s, %s)\n", info.Name, info.Family, info.Runtime)
	fmt.Fprintf(w, "  listening on  http://%s", addr)
	if sock != "none" {
		fmt.Fprintf(w, " and unix:%s", sock)
	}
	fmt.Fprintln(w)
	auth := ""
	if keyed {
		auth = ` -H "Authorization: Bearer $ORCHARD_API_KEY"`
	}
	local := "127.0.0.1:" + port
	if !loopbackHost(host) {
		local = addr
	} else {
		fmt.Fprintf(w, "  from a laptop: ssh -L %s:127.0.0.1:%s %s\n", port, port, name)
	}
	fmt.Fprintf(w, "  try it:        curl http://%s/v1/chat/completions%s -H 'Content-Type: application/json' -d '{\"model\": \"orchard\", \"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}'\n", local, auth)
	fmt.Fprintf(w, "  the chat:      orchard --attach   (here; from a laptop: orchard --attach %s)\n", local)
	fmt.Fprintln(w, "  stop:          ctrl+c (the chat's conversation is autosaved)")
}

func loopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || ip != nil && ip.IsLoopback()
}
