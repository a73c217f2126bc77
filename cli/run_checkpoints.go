package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/orchard-llm/orchard/checkpoints"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/engine"
)

// restoreForRun loads --kv-restore DIR (corellm-chat's r1 layout) or
// --resume NAME (the checkpoint store) into the session. With
// --kv-restore, a given prompt is checked against the saved token hash, as
// corellm-chat does. It returns an exit code (0 = go on).
func restoreForRun(m *loaded, cfg *config.Config, mlog *engine.MetricsLog, kvDir, name, prompt string, stderr io.Writer) int {
	switch {
	case kvDir != "":
		id, err := checkpoints.CoreLLMIdentityOf(m.b)
		if err != nil {
			fmt.Fprintln(stderr, "orchard run: --kv-restore:", err)
			return exitUsage
		}
		start := time.Now()
		kv, err := checkpoints.ReadCoreLLM(kvDir, &id)
		if err != nil {
			fmt.Fprintln(stderr, "orchard run: --kv-restore:", err)
			return exitUsage
		}
		if kv.Manifest.BundleName != "" && kv.Manifest.BundleName != m.b.Name() {
			fmt.Fprintf(stderr, "  warning: the KV checkpoint was made with bundle %q, this is %q (identities match)\n", kv.Manifest.BundleName, m.b.Name())
		}
		toks, pending := kv.Tokens()
		if prompt != "" {
			ids, err := m.sess.PromptIDs(prompt)
			if err != nil {
				fmt.Fprintln(stderr, "orchard run:", err)
				return exitFailure
			}
			if len(ids) != len(toks) || checkpoints.TokenSHA256(ids) != kv.Manifest.TokenSeqSHA256 {
				fmt.Fprintf(stderr, "orchard run: --prompt does not match the KV checkpoint (%d tokens vs %d saved, or a different token hash)\n", len(ids), len(toks))
				return exitUsage
			}
		}
		cp := &checkpoints.Checkpoint{Meta: checkpoints.Meta{Name: kvDir}, Tokens: toks, Pending: pending, Cache: kv.Cache}
		if err := m.sess.Restore(cp); err != nil {
			fmt.Fprintln(stderr, "orchard run: --kv-restore:", err)
			return exitFailure
		}
		took := time.Since(start).Seconds()
		fmt.Fprintf(stderr, "--- kv restore ---\nposition:          %d\ncommitted tokens:  %d\nkv bytes:          %d\nimport:            %.3fs\n",
			kv.Cache.Position, len(toks), kv.Cache.Bytes(), took)
		if mlog != nil {
			mlog.RecordKV("restore", kv.Cache.Bytes(), took, len(toks))
		}
	case name != "":
		store, err := checkpoints.Open(cfg.CheckpointsDir())
		if err != nil {
			fmt.Fprintln(stderr, "orchard run: --resume:", err)
			return exitFailure
		}
		for _, n := range store.Notices() {
			fmt.Fprintln(stderr, "  note:", n)
		}
		cp, err := store.Load(name, m.b.Identity)
		if err != nil {
			var ie *checkpoints.IdentityError
			if errors.As(err, &ie) {
				ie.Loaded = checkpoints.DescribeBundle(m.b.Name(), m.b.Identity)
			}
			fmt.Fprintln(stderr, "orchard run: --resume:", err)
			return exitUsage
		}
		if err := m.sess.Restore(cp); err != nil {
			fmt.Fprintln(stderr, "orchard run: --resume:", err)
			return exitFailure
		}
		fmt.Fprintf(stderr, "  resumed %q: %d turns, %d tokens\n", name, cp.Conversation.Turns(), len(cp.Tokens))
	}
	return exitOK
}

// kvSaveRun prefills the prompt and writes corellm-chat's --kv-save
// directory (r1 only: the format is the r1 host cache).
func kvSaveRun(m *loaded, cfg *config.Config, mlog *engine.MetricsLog, dir, prompt string, stderr io.Writer) int {
	start := time.Now()
	if err := m.sess.PrefillOnly(prompt, func(engine.Event) {}); err != nil {
		fmt.Fprintln(stderr, "orchard run: --kv-save:", err)
		return exitFailure
	}
	prefill := time.Since(start)
	cp, err := m.sess.Checkpoint(dir, cfg.Model.ComputeUnits)
	if err != nil {
		fmt.Fprintln(stderr, "orchard run: --kv-save:", err)
		return exitFailure
	}
	t := time.Now()
	if err := checkpoints.WriteCoreLLM(dir, cp); err != nil {
		fmt.Fprintln(stderr, "orchard run: --kv-save:", err)
		return exitFailure
	}
	took := time.Since(t).Seconds()
	fmt.Fprintf(stderr, "--- kv save ---\nposition:          %d\ncommitted tokens:  %d\nkv bytes:          %d\nprefill:           %.3fs\nexport:            %.3fs\n",
		cp.Cache.Position, len(cp.Tokens), cp.Cache.Bytes(), prefill.Seconds(), took)
	if mlog != nil {
		mlog.RecordKV("save", cp.Cache.Bytes(), took, len(cp.Tokens))
	}
	return exitOK
}

// saveCheckpoint saves the session into the checkpoint store.
func saveCheckpoint(m *loaded, cfg *config.Config, name string) error {
	store, err := checkpoints.Open(cfg.CheckpointsDir())
	if err != nil {
		return err
	}
	cp, err := m.sess.Checkpoint(name, cfg.Model.ComputeUnits)
	if err != nil {
		return err
	}
	return store.Save(cp)
}
