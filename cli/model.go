package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/coreml/darwin"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/memledger"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/tokenizer"
)

// loaded is an opened model: bundle, chain and session.
type loaded struct {
	b       *bundle.Bundle
	sess    *engine.Session
	info    engine.ModelInfo
	set     engine.Settings // the settings in force: the config's, fitted to the bundle
	loadDur time.Duration
	warm    []chain.WarmStep // the warm-up: each function's first and second call
}

// openModel opens a bundle on the runtime it needs: the reference runtime
// for orchard's synthetic bundles (their chunk folders hold reference
// twins), Core ML for published ones.
// progress receives one-line messages (compiling, first-run notes). The
// config places the chunks and bounds the media files read. script, when
// set, is a --script file for a synthetic bundle (script.go).
func openModel(dir, script string, cfg *config.Config, set engine.Settings, progress func(string)) (*loaded, error) {
	o := engineOptions(cfg)
	if progress == nil {
		progress = func(string) {}
	}
	start := time.Now()
	b, err := bundle.Open(dir)
	if err != nil {
		return nil, badInput(err)
	}
	rt, name, err := runtimeFor(b)
	if err != nil {
		return nil, err
	}
	rt, scriptNote, err := withScript(b, rt, name, script)
	if err != nil {
		return nil, err
	}
	if name == "Core ML" {
		if err := compilePackages(b, progress); err != nil {
			return nil, err
		}
	}
	cu, err := chain.Units(b, o.ComputeUnits)
	if err != nil {
		return nil, badInput(err)
	}
	ch, err := chain.Open(b, rt, o)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		ch.Close()
		return nil, err
	}
	var notes []string
	if scriptNote != "" {
		notes = append(notes, scriptNote)
	}
	if m, err := memledger.Read(); err == nil && memledger.Low(m.Physical) && set.Speculation == engine.SpecModeAuto {
		// As the published app: under 7 GB the speculation assets stay unloaded.
		set.Speculation = engine.SpecModeOff
		notes = append(notes, fmt.Sprintf("speculation off: %.1f GB of memory is below the 7 GB the verify assets need (set --spec on to override)", float64(m.Physical)/(1<<30)))
	}
	var enc *engine.Encoders
	if len(b.Encoders) > 0 {
		enc = newEncoders(b, rt, engine.EncoderUnits{Vision: cfg.Model.VisionUnits, Audio: cfg.Model.AudioUnits}, cfg)
	}
	// Every function's first call loads and specializes it (about 40 s on
	// E2B's first run): paid here, a line per function, not in a reply —
	// and before the session reads the chain's capabilities, which a
	// function that fails to load changes.
	var warm []chain.WarmStep
	if w := cfg.Model.WarmUp; w == config.WarmOn || (w != config.WarmOff && name == "Core ML") {
		warm, err = chain.Warm(ch, enc.WarmTasks(), chain.WarmOptions{DraftLen: set.DraftLen, NoVerify: set.Speculation == engine.SpecModeOff},
			nil, func(s chain.WarmStep) { progress(s.Line()) })
		if err != nil {
			enc.Close()
			ch.Close()
			return nil, err
		}
	}
	caps := ch.Capabilities()
	info := engine.ModelInfo{Name: b.Name(), Family: string(b.Family), ComputeUnits: cu.String(), Context: caps.Context,
		VerifyWidths: caps.VerifyWidths, Logits: caps.Logits, Runtime: name}
	set, fitNotes, err := fitSettings(cfg, info, set)
	if err != nil {
		enc.Close()
		ch.Close()
		return nil, err
	}
	sess, err := engine.NewSession(b, ch, tok, set)
	if err != nil {
		enc.Close()
		ch.Close()
		return nil, err
	}
	sess.Media = enc
	info.Notes = append(append(notes, fitNotes...), caps.Notes...)
	info.Media = sess.Media.Kinds()
	return &loaded{b: b, sess: sess, info: info, set: sess.Settings(), loadDur: time.Since(start), warm: warm}, nil
}

// newEncoders opens a bundle's encoders, placed by u, within the config's
// media limits.
func newEncoders(b *bundle.Bundle, rt coreml.Runtime, u engine.EncoderUnits, cfg *config.Config) *engine.Encoders {
	enc := engine.NewEncoders(b, rt, u.Vision)
	enc.SetUnits(u)
	m := cfg.Media
	enc.SetLimits(engine.MediaLimits{MaxFileBytes: m.MaxFileSize, MaxPixels: m.MaxMegapixels * 1_000_000,
		MaxDecodeBytes: m.MaxDecodeSize, MaxSeconds: float64(m.MaxAudioSeconds)})
	keep := m.KeepEncoded
	if keep == 0 {
		keep = -1 // the engine's 0 is its default; the config's is none
	}
	enc.KeepEncoded(keep)
	return enc
}

// compilePackages compiles chunks shipped as .mlpackage once (cached as
// .mlmodelc beside them) and points the bundle at the compiled twins.
func compilePackages(b *bundle.Bundle, progress func(string)) error {
	for _, list := range [][]bundle.Chunk{b.Chunks, b.Heads, b.Encoders} {
		for i := range list {
			if !strings.HasSuffix(list[i].Path, ".mlpackage") {
				continue
			}
			out, err := darwin.CompileModel(list[i].Path, progress)
			if err != nil {
				return fmt.Errorf("compile %s: %w", list[i].Name, err)
			}
			list[i].Path = out
		}
	}
	return nil
}

// runtimeFor picks the runtime a bundle's chunk folders need.
func runtimeFor(b *bundle.Bundle) (coreml.Runtime, string, error) {
	if len(b.Chunks) > 0 {
		if _, err := os.Stat(filepath.Join(b.Chunks[0].Path, reference.TwinFile)); err == nil {
			return reference.New(), "reference (pure Go)", nil
		}
	}
	rt, err := darwin.NewCoreML()
	if err != nil {
		if errors.Is(err, coreml.ErrUnavailable) {
			return nil, "", fmt.Errorf("bundle %s holds Core ML graphs: %w", b.Dir, err)
		}
		return nil, "", err
	}
	return rt, "Core ML", nil
}
