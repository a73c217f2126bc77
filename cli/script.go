package cli

import (
	"fmt"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/reference"
	"github.com/orchard-llm/orchard/termsafe"
	"github.com/orchard-llm/orchard/tokenizer"
)

// scriptUsage is the --script flag's help, the same in chat, run and serve.
const scriptUsage = "reply from this script `file` where a message matches: {\"replies\":[{\"match\":\"REGEX\",\"reply\":\"TEXT\"}]} (synthetic bundles: --demo, or orchard bundle synth)"

// withScript puts a synthetic bundle's script in front of its runtime: the
// one given with --script (path), else the one the bundle keeps (bundle
// synth --script). A bundle without either runs on rt as it is. note says
// which script plays, for the model's notes.
func withScript(b *bundle.Bundle, rt coreml.Runtime, name, path string) (_ coreml.Runtime, note string, err error) {
	inner, synthetic := rt.(*reference.Runtime)
	var sc *reference.Script
	switch {
	case path != "" && !synthetic:
		return nil, "", badInput(fmt.Errorf("--script needs a synthetic bundle (--demo, or one written by orchard bundle synth); %s runs on %s", termsafe.Line(b.Dir), name))
	case path != "":
		sc, err = reference.ReadScript(path)
	case synthetic:
		sc, err = reference.BundleScript(b.Dir)
	}
	if err != nil {
		return nil, "", badInput(err)
	}
	if sc == nil {
		return rt, "", nil
	}
	tok, err := tokenizer.Load(b.Tokenizer)
	if err != nil {
		return nil, "", err
	}
	host, err := chain.NewInputs(b)
	if err != nil {
		return nil, "", err
	}
	defer host.Close()
	s, err := reference.NewScripted(inner, reference.ScriptedOptions{Script: sc, Tokenizer: tok,
		Vocab: b.Geometry.Vocab, Hidden: b.Geometry.Hidden, Embed: host.Embed})
	if err != nil {
		return nil, "", badInput(err)
	}
	return s, "replies from the script " + termsafe.Line(sc.Name) + " where a message matches; elsewhere the weights'", nil
}

// synthScript reads a script for `orchard bundle synth --script` and checks
// it against the tokenizer the bundle will have, before anything is written.
func synthScript(path, family, preset string) (*reference.Script, error) {
	sc, err := reference.ReadScript(path)
	if err != nil {
		return nil, err
	}
	g, err := reference.Preset(preset, family)
	if err != nil {
		return nil, err
	}
	data, err := tokenizer.SynthesizeJSON(g.Vocab)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Parse(data)
	if err != nil {
		return nil, err
	}
	return sc, sc.Check(tok)
}
