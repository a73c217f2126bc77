// Package cli holds orchard's commands: the chat, serve, run, selftest, bench,
// bundle, ckpt, config, models and tokenize subcommands and the wiring
// that opens a bundle for them. The orchard binary (main.go) only calls Main.
package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

const usage = `orchard — chat with Gemma 4 Core ML bundles

usage:
  orchard [--model DIR] [--continue] [flags]   chat (no model: the remembered one, else a picker)
  orchard chat [--model DIR] [--continue]      the same
  orchard --demo [--family F] [--script FILE]  chat with the demo bundle (synthetic weights, made on first use; --script: known replies)
  orchard --attach [ADDR]                      the chat over a running orchard serve (automatic when it serves the bundle asked for)
  orchard serve (--model DIR | --demo [--script FILE]) [--listen ADDR] [--api-key KEY] [--queue N]   the model behind an OpenAI/ollama API
  orchard run (--model DIR | --demo [--family F] [--script FILE]) [--prompt TEXT] [--image F] [--audio F] [--max-tokens N] [--no-spec] [--stats] [--json] ...
  orchard selftest (--model DIR | --demo [--family F]) [--steps N]   verification gates (exit 1 on a failure)
  orchard bench (--model DIR | --demo [--family F]) [--rounds N] [--json]   speculation off/on workload table
  orchard config show [--json] [--config FILE] [flags]   effective settings and where each came from
  orchard config init [--config FILE] [--force]          write a commented config file (0600)
  orchard models [--json] [--models-dir DIR]             bundles in the search folders and the Hugging Face cache
  orchard ckpt ls|show|rm|mv|export|import               saved checkpoints (orchard ckpt help)
  orchard bundle synth --family F --preset tiny|small --seed N --out DIR [--script FILE]
  orchard bundle inspect DIR [--json] [--deep]            --deep: every model as the runtime loads it
  orchard media image|audio --model DIR [--soft-out F.npy] ... FILE   one encoder alone, tensors as .npy
  orchard bundle forward DIR --ids 2,105,... [--top K]
  orchard tokenize --tokenizer FILE [--decode] [--json] [--bench]
  orchard version                              version, commit, Go and platform (also --version)

families (--family, default r1): r1, v2, stateful3, stateful3-logits
exit status: 0 ok, 1 a failure while running, 2 bad usage or bad input
`

// Main dispatches a command line; it returns the process exit code
// (0 ok, 1 runtime failure, 2 bad usage or invalid input).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Messages quote names, paths and values from files: none may reach
	// the terminal as an escape sequence.
	stderr = termsafe.NewWriter(stderr)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "--demo" && args[0] != "-h" && args[0] != "--help" && args[0] != "--version" {
		return runChat(args, stdin, stdout, stderr, false) // orchard [--model DIR] [flags]
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "--version":
		return runVersion(args[1:], stdout, stderr)
	case "--demo", "demo":
		return runChat(args[1:], stdin, stdout, stderr, true)
	case "chat":
		return runChat(args[1:], stdin, stdout, stderr, false)
	case "bundle":
		return runBundle(args[1:], stdout, stderr)
	case "tokenize":
		return tokenize(args[1:], stdin, terminalSafe(stdout), stderr)
	case "serve":
		return runServe(args[1:], stdout, stderr)
	case "run":
		return runOne(args[1:], stdin, stdout, stderr)
	case "selftest":
		return runSelftest(args[1:], stdout, stderr)
	case "bench":
		return runBench(args[1:], stdout, stderr)
	case "config":
		return runConfig(args[1:], stdout, stderr)
	case "models":
		return runModels(args[1:], stdout, stderr)
	case "ckpt":
		return runCkpt(args[1:], stdout, stderr)
	case "media":
		return runMedia(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "orchard: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}
