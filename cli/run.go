package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/tui"
)

// runOne is `orchard run`: one scripted turn, compatible with corellm-chat's
// flags and its --stats block. The reply goes to stdout, all else to stderr.
func runOne(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := config.RegisterFlags(fs) // --model, --spec, --no-mtp, --temp, ... with file and env defaults
	demo := fs.Bool("demo", false, "use the demo bundle instead of --model")
	family := fs.String("family", "r1", "family of the demo bundle: "+families)
	script := fs.String("script", "", scriptUsage)
	prompt := fs.String("prompt", "", "user message (default: read stdin)")
	maxTokens := fs.Int("max-tokens", 0, "tokens to generate (0 = until EOS or the context ends)")
	stats := fs.Bool("stats", false, "print the stats block on stderr")
	asJSON := fs.Bool("json", false, "print one JSON object (reply, ids, metrics) instead of the text")
	kvSave := fs.String("kv-save", "", "prefill the prompt, write the r1 cache as a corellm-chat KV `dir`, exit")
	kvRestore := fs.String("kv-restore", "", "load a corellm-chat KV `dir` (r1) and continue from its pending token")
	resume := fs.String("resume", "", "load the checkpoint `name` first; with --prompt, a new turn, else continue")
	save := fs.String("save", "", "save the conversation as checkpoint `name` after the turn")
	useTools := fs.Bool("tools", false, "offer the model the MCP servers' tools; a call runs only if --allow-tool (chat.tools.allow) names it")
	var files mediaFlags
	fs.Var(files.kind(engine.MediaImage), "image", "attach an image `file` to the message (repeatable)")
	fs.Var(files.kind(engine.MediaAudio), "audio", "attach an audio `file` to the message (repeatable)")
	if _, err := parseFlags(fs, args); err != nil {
		return exitUsage
	}
	if *save != "" {
		if err := checkpoints.CheckName(*save); err != nil {
			fmt.Fprintln(stderr, "orchard run: --save:", err)
			return exitUsage
		}
	}
	if *kvSave != "" && (*kvRestore != "" || *resume != "") {
		fmt.Fprintln(stderr, "orchard run: --kv-save cannot be combined with --kv-restore or --resume")
		return exitUsage
	}
	cfg, err := config.Load(config.Options{Env: os.Getenv, Flags: flags, Actions: tui.KeyNames()})
	if err != nil {
		return configError(stderr, "orchard run", err)
	}
	if *maxTokens < 0 {
		fmt.Fprintln(stderr, "orchard run: --max-tokens must be 0 (no cap) or more")
		return exitUsage
	}
	if (cfg.Model.Path == "") == !*demo {
		fmt.Fprintln(stderr, "orchard run: give --model DIR (or model.path in the config) or --demo")
		return exitUsage
	}
	if *demo {
		if err := checkFamily(*family); err != nil {
			fmt.Fprintln(stderr, "orchard run:", err)
			return exitUsage
		}
	}
	text := *prompt
	continuing := *kvRestore != "" || *resume != ""
	if text == "" && !continuing {
		data, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "orchard run: reading the prompt from stdin:", err)
			return exitFailure
		}
		text = strings.TrimSpace(string(data))
	}
	if text == "" && !continuing && !files.hasAudio() {
		fmt.Fprintln(stderr, "orchard run: empty prompt (use --prompt or stdin; a clip alone is transcribed)")
		return exitUsage
	}
	if len(files) > 0 && (*kvSave != "" || *kvRestore != "") {
		fmt.Fprintln(stderr, "orchard run: --image and --audio cannot be combined with --kv-save or --kv-restore")
		return exitUsage
	}
	given := false // --max-tokens on the command line wins over a resumed checkpoint's
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "max-tokens" })
	return runTurn(turnRequest{demo: *demo, family: *family, script: *script, text: text, maxTokens: *maxTokens, maxTokensGiven: given,
		stats: *stats, asJSON: *asJSON, kvSave: *kvSave, kvRestore: *kvRestore, resume: *resume, save: *save, files: files, tools: *useTools}, cfg, stdout, stderr)
}

// turnRequest is one scripted turn: what orchard run's flags ask for, or
// what orchard --demo answers without a terminal.
type turnRequest struct {
	demo                            bool
	family                          string // of the demo bundle
	script                          string // --script: a synthetic bundle's replies (script.go)
	text                            string // the message; "" continues (kvRestore, resume)
	maxTokens                       int
	maxTokensGiven                  bool // --max-tokens was on the command line
	stats, asJSON                   bool
	kvSave, kvRestore, resume, save string
	files                           mediaFlags
	tools                           bool // --tools: the MCP tool loop (tools.go)
}

// runTurn opens the bundle and runs the turn; the reply goes to stdout,
// all else to stderr.
func runTurn(r turnRequest, cfg *config.Config, stdout, stderr io.Writer) int {
	continuing := r.kvRestore != "" || r.resume != ""
	set := settingsFrom(cfg, r.maxTokens)
	dir := cfg.Model.Path
	var err error
	if r.demo {
		if dir, err = demoBundle(r.family, stderr); err != nil {
			fmt.Fprintln(stderr, "orchard run:", err)
			return exitFailure
		}
	}
	fmt.Fprintf(stderr, "Loading model bundle: %s\n", dir)
	m, err := openModel(dir, r.script, cfg, set, func(msg string) { fmt.Fprintln(stderr, " ", msg) })
	if err != nil {
		fmt.Fprintln(stderr, "orchard run:", err)
		return exitCode(err)
	}
	defer m.sess.Close()
	mlog, err := engine.OpenMetricsLog(cfg.MetricsFile(), m.info, m.b.Dir, m.loadDur)
	if err == nil {
		m.sess.Metrics = mlog.Record
		defer mlog.Close()
	} else {
		fmt.Fprintln(stderr, "  note: no metrics log:", err)
	}
	fmt.Fprintf(stderr, "  %s (%s, %s runtime)\n  context length: %d\n  models loaded in %.1fs\n",
		m.info.Name, m.info.Family, m.info.Runtime, m.info.Context, m.loadDur.Seconds())
	for _, n := range m.info.Notes {
		fmt.Fprintln(stderr, "  note:", n)
	}
	for _, f := range r.files {
		if err := m.sess.CanAttach(f.Kind); err != nil {
			fmt.Fprintln(stderr, "orchard run:", err)
			return exitUsage
		}
	}
	switch {
	case len(m.info.VerifyWidths) == 0:
		fmt.Fprintln(stderr, "  note: this bundle has no speculation assets — running without speculation")
	case m.sess.Settings().Speculation == engine.SpecModeOff:
		fmt.Fprintln(stderr, "  speculative decoding: OFF")
	default:
		fmt.Fprintf(stderr, "  speculative decoding: %s\n", strings.ToUpper(string(m.sess.Settings().Speculation)))
	}
	fmt.Fprintln(stderr)

	if code := restoreForRun(m, cfg, mlog, r.kvRestore, r.resume, r.text, stderr); code != exitOK {
		return code
	}
	if r.resume != "" {
		// The checkpoint brought its settings back; the flags given here win.
		if err := applyGivenFlags(m.sess, cfg, r.maxTokens, r.maxTokensGiven); err != nil {
			fmt.Fprintln(stderr, "orchard run:", err)
			return exitCode(err)
		}
	}
	if r.kvSave != "" {
		return kvSaveRun(m, cfg, mlog, r.kvSave, r.text, stderr)
	}
	var tl *runTools
	if r.tools {
		if tl, err = startRunTools(context.Background(), cfg, m.sess, stderr); err != nil {
			fmt.Fprintln(stderr, "orchard run: --tools:", err)
			return exitFailure
		}
		defer tl.Close()
	}

	var fin *engine.TurnMetrics
	var replyText string
	var replyIDs []int
	reply := terminalSafe(stdout) // the model's text may hold escapes too
	emit := func(ev engine.Event) {
		switch e := ev.(type) {
		case *engine.Delta:
			replyIDs = append(replyIDs, e.Tokens...)
			if !r.asJSON {
				fmt.Fprint(reply, e.Text)
			}
		case engine.Notice:
			fmt.Fprintln(stderr, "note:", e.Text)
		case engine.Compacted:
			fmt.Fprintf(stderr, "note: the model summarised messages %d–%d to make room (%d tokens prefilled, %d reused)\n",
				e.From+1, e.To, e.PromptTokens-e.ReusedTokens, e.ReusedTokens)
		case engine.Started:
			if msgs := m.sess.Messages(); len(r.files) > 0 && len(msgs) > 0 {
				for _, a := range msgs[len(msgs)-1].Attachments {
					fmt.Fprintln(stderr, "attached:", attachmentLine(a))
				}
			}
		case engine.Finished:
			fin, replyText = &e.Metrics, e.Reply
		}
	}
	if continuing && (r.kvRestore != "" || r.text == "") {
		err = m.sess.Continue(emit)
	} else {
		err = m.sess.Send(r.text, emit, r.files...)
	}
	if err == nil && tl != nil {
		err = tl.loop(context.Background(), m.sess, emit)
	}
	if err != nil {
		fmt.Fprintln(stderr, "\norchard run:", err)
		return exitCode(err)
	}
	if r.save != "" {
		if err := saveCheckpoint(m, cfg, r.save); err != nil {
			fmt.Fprintln(stderr, "orchard run: --save:", err)
			return exitFailure
		}
		fmt.Fprintf(stderr, "saved checkpoint %q\n", r.save)
	}
	if r.asJSON {
		out := map[string]any{"reply": replyText, "promptIds": m.sess.LastPrompt(), "replyIds": replyIDs, "metrics": fin, "warmup": m.warm}
		if msgs := m.sess.Messages(); len(r.files) > 0 && len(msgs) >= 2 {
			out["attachments"] = msgs[len(msgs)-2].Attachments
		}
		writeJSON(stdout, out)
	} else {
		fmt.Fprintln(stdout)
	}
	if r.stats && fin != nil {
		printStats(stderr, *fin, m.sess.Settings().Speculation != engine.SpecModeOff && len(m.info.VerifyWidths) > 0)
	}
	return exitOK
}

// printStats prints corellm-chat's --- stats --- block, then orchard's lines.
func printStats(w io.Writer, m engine.TurnMetrics, specOn bool) {
	fmt.Fprintln(w, "--- stats ---")
	reused := ""
	if m.ReusedTokens > 0 {
		reused = fmt.Sprintf(" (reused %d)", m.ReusedTokens)
	}
	fmt.Fprintf(w, "prompt tokens:     %d%s\n", m.PromptTokens, reused)
	fmt.Fprintf(w, "generated tokens:  %d\n", m.GeneratedTokens)
	fmt.Fprintf(w, "finish reason:     %s\n", m.FinishReason)
	fmt.Fprintf(w, "TTFT:              %.2fs\n", m.TTFTSeconds)
	if m.DecodeTokPerSec > 0 {
		fmt.Fprintf(w, "decode:            %.1f ms/tok  (%.1f tok/s)\n", 1000/m.DecodeTokPerSec, m.DecodeTokPerSec)
	}
	if specOn {
		if m.Spec.Drafted > 0 {
			fmt.Fprintf(w, "draft acceptance:  %.2f\n", m.Spec.AcceptanceRate)
		} else {
			fmt.Fprintln(w, "draft acceptance:  n/a (no speculation this turn)")
		}
	}
	if m.Memory.FootprintPeakBytes > 0 {
		fmt.Fprintf(w, "peak memory:       %.2f GB\n", float64(m.Memory.FootprintPeakBytes)/(1<<30))
	}
	fmt.Fprintln(w, "--- orchard ---")
	fmt.Fprintf(w, "prefill:           %.3fs (%.0f tok/s)\n", m.PrefillSeconds, m.PrefillTokPerSec)
	fmt.Fprintf(w, "per token:         %.1f / %.1f / %.1f ms (min / median / max)\n", m.PerTokenMinMs, m.PerTokenMedianMs, m.PerTokenMaxMs)
	fmt.Fprintf(w, "context:           %d / %d\n", m.ContextUsed, m.ContextLimit)
	fmt.Fprintf(w, "speculation:       %s, %d verify rounds, %d fallback, PLD rate %.2f, %.2f tokens per verify\n",
		m.Spec.State, m.Spec.Rounds, m.Spec.FallbackRounds, m.Spec.PLDRate, m.Spec.MeanAccepted)
	fmt.Fprintf(w, "model memory:      %.1f MiB mapped, %.2f GB available\n", float64(m.Memory.ModelBytes)/(1<<20), float64(m.Memory.AvailableBytes)/(1<<30))
}
