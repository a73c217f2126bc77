package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

// runDemo makes (once) and runs the demo bundle: a small synthetic bundle
// on the reference runtime. Its weights are random, so the reply is noise;
// the pipeline, the timings and the token counts are real.
func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("orchard --demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	family := fs.String("family", "r1", "demo bundle family: r1, v2, stateful3, stateful3-logits")
	prompt := fs.String("prompt", "Tell me about apple orchards.", "user message")
	maxTokens := fs.Int("max-tokens", 48, "tokens to generate")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	if _, ok := bundle.ParseFamily(*family); !ok {
		fmt.Fprintf(stderr, "orchard --demo: unknown family %q\n", *family)
		return 2
	}
	dir, err := demoBundle(*family, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "orchard --demo:", err)
		return 1
	}
	b, err := bundle.Open(dir)
	if err != nil {
		fmt.Fprintln(stderr, "orchard --demo:", err)
		return 1
	}
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		fmt.Fprintln(stderr, "orchard --demo:", err)
		return 1
	}
	tmpl, err := tokenizer.NewManifestTemplate(tok, manifestPrompt(b))
	if err != nil {
		fmt.Fprintln(stderr, "orchard --demo:", err)
		return 1
	}
	ids, err := tmpl.Encode(tokenizer.Conversation{Messages: []tokenizer.Message{{Role: tokenizer.RoleUser, Content: *prompt}}})
	if err != nil {
		fmt.Fprintln(stderr, "orchard --demo:", err)
		return 1
	}
	start := time.Now()
	chain, err := engine.Open(b, reference.New(), engine.Options{})
	if err != nil {
		fmt.Fprintln(stderr, "orchard --demo:", err)
		return 1
	}
	defer chain.Close()
	caps := chain.Capabilities()
	fmt.Fprintf(stderr, "%s · %s · context %d · loaded in %.2fs\n", b.Name(), b.Family, caps.Context, time.Since(start).Seconds())
	fmt.Fprintf(stderr, "synthetic weights: the reply is noise; every number below is measured.\n\n")
	fmt.Fprintf(stdout, "you> %s\nmodel> ", *prompt)
	eos := stopIDs(b, tok)
	t0 := time.Now()
	next, err := chain.Prefill(ids)
	if err != nil {
		fmt.Fprintln(stderr, "\norchard --demo:", err)
		return 1
	}
	prefill := time.Since(t0)
	stream := tokenizer.NewStream(tok, true)
	n := 0
	t1 := time.Now()
	for n < *maxTokens && !slices.Contains(eos, next) && chain.Position() < caps.Context {
		fmt.Fprint(stdout, stream.Push(next))
		n++
		if n == *maxTokens {
			break
		}
		if next, err = chain.Decode(next); err != nil {
			fmt.Fprintln(stderr, "\norchard --demo:", err)
			return 1
		}
	}
	fmt.Fprintln(stdout, stream.Flush())
	decode := time.Since(t1)
	fmt.Fprintf(stderr, "\nprompt %d tokens, prefill %.3fs (%.0f tok/s, widths %v) · generated %d tokens, %.1f tok/s\n",
		len(ids), prefill.Seconds(), float64(len(ids))/prefill.Seconds(), caps.PrefillWidths, n, float64(n)/decode.Seconds())
	return 0
}

// demoBundle returns the demo bundle folder, writing it on first use into
// the user's cache (atomically: a temp folder renamed into place).
func demoBundle(family string, stderr io.Writer) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "orchard", "demo")
	dir := filepath.Join(root, fmt.Sprintf("%s-small-seed1-v%d", family, reference.SynthVersion))
	if _, err := bundle.Open(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(root, ".make-"+family+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(stderr, "writing the demo bundle to %s (first run only)…\n", dir)
	if _, err := reference.Synthesize(reference.SynthOptions{Family: family, Preset: "small", Seed: 1, Out: tmp}); err != nil {
		return "", err
	}
	os.RemoveAll(dir) // an earlier, invalid attempt
	if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return dir, nil
}

// manifestPrompt carries the bundle's prompt strings to the template.
func manifestPrompt(b *bundle.Bundle) tokenizer.ManifestPrompt {
	var p tokenizer.ManifestPrompt
	s := func(x *string) string {
		if x == nil {
			return ""
		}
		return *x
	}
	p.PromptPrefix, p.PromptSuffix = s(b.Template.PromptPrefix), s(b.Template.PromptSuffix)
	p.AssistantSuffix, p.PromptSuffixThinking = s(b.Template.AssistantSuffix), s(b.Template.PromptSuffixThinking)
	return p
}

// stopIDs is the bundle's EOS set plus <eos> and <turn|> from the tokenizer.
func stopIDs(b *bundle.Bundle, tok *tokenizer.Tokenizer) []int {
	ids := slices.Clone(b.EOS)
	for _, s := range []string{"<eos>", "<turn|>"} {
		if id, ok := tok.TokenID(s); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
