package bundle

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/orchard-llm/orchard/termsafe"
)

// Report is what `orchard bundle inspect` shows, as text or JSON.
type Report struct {
	Dir       string                     `json:"dir"`
	Name      string                     `json:"name"`
	Family    Family                     `json:"family"`
	Format    string                     `json:"format,omitempty"`
	Config    string                     `json:"config"`
	Geometry  Geometry                   `json:"geometry"`
	Chunks    []Chunk                    `json:"chunks"`
	Heads     []Chunk                    `json:"heads,omitempty"`
	Encoders  []Chunk                    `json:"encoders,omitempty"`
	EOS       []int                      `json:"eos_ids"`
	Template  Template                   `json:"prompt_template"`
	Tokenizer string                     `json:"tokenizer"`
	Files     []File                     `json:"files"`
	Identity  Identity                   `json:"identity"`
	Unknown   map[string]json.RawMessage `json:"unknown_keys,omitempty"`
	Problems  []string                   `json:"problems,omitempty"`
	Notes     []string                   `json:"notes,omitempty"`
}

// Report summarises the bundle; err is Open's error, if any.
func (b *Bundle) Report(err error) Report {
	r := Report{Dir: b.Dir, Name: b.Name(), Family: b.Family, Config: b.ConfigFile, Geometry: b.Geometry,
		Chunks: b.Chunks, Heads: b.Heads, Encoders: b.Encoders, EOS: b.EOS, Template: b.Template, Tokenizer: b.Tokenizer,
		Files: b.Files, Identity: b.Identity, Notes: b.Notes}
	if b.Manifest != nil {
		r.Format = b.Manifest.Format
	}
	switch {
	case b.R1 != nil:
		r.Unknown = b.R1.Extra
	case b.V2 != nil:
		r.Unknown = b.V2.Extra
	case b.S3 != nil:
		r.Unknown = b.S3.Extra
	}
	if ve, ok := err.(*ValidationError); ok {
		r.Problems = ve.Problems
	}
	return r
}

// WriteText prints the report for a person. Names, paths, keys and
// problems come from the bundle's files, so the text goes out through
// termsafe: escapes are shown, never obeyed.
func (r Report) WriteText(w io.Writer) {
	w = termsafe.NewWriter(w)
	g := r.Geometry
	p := func(k, f string, a ...any) { fmt.Fprintf(w, "%-16s %s\n", k, fmt.Sprintf(f, a...)) }
	p("bundle", "%s", r.Dir)
	p("name", "%s", r.Name)
	fam := string(r.Family)
	if r.Format != "" {
		fam += " (" + r.Format + ")"
	}
	p("family", "%s", fam)
	p("config", "%s", r.Config)
	p("identity", "%s", r.Identity.ID)
	p("layers", "%d (KV-shared from %s)", g.Layers, orUnknown(g.FirstShared))
	p("hidden", "%d", g.Hidden)
	p("heads", "%s query, %s KV%s", orUnknown(g.Heads), orUnknown(g.KVHeads), fullKV(g))
	p("head dims", "%d sliding, %d full", g.HeadDim, g.GlobalHeadDim)
	p("context", "%d", g.Context)
	p("sliding window", "%d", g.SlidingWindow)
	p("PLE dim", "%d", g.PLEDim)
	p("vocab", "%s", orUnknown(g.Vocab))
	var chunks []string
	for _, c := range r.Chunks {
		s := c.Name
		if c.Layers != [2]int{} {
			s += fmt.Sprintf(" [%d,%d)", c.Layers[0], c.Layers[1])
		}
		chunks = append(chunks, s)
	}
	p("chunks", "%s", strings.Join(chunks, ", "))
	if len(r.Chunks) > 0 {
		p("functions", "%s", strings.Join(r.Chunks[0].Functions, ", "))
	}
	var heads []string
	for _, h := range r.Heads {
		heads = append(heads, h.Name)
	}
	if len(heads) > 0 {
		p("heads", "%s", strings.Join(heads, ", "))
	}
	encs := "none (text only)"
	if len(r.Encoders) > 0 {
		var names []string
		for _, e := range r.Encoders {
			names = append(names, e.Name)
		}
		encs = strings.Join(names, ", ")
	}
	p("encoders", "%s", encs)
	if len(g.VerifyWidths) > 0 {
		p("verify widths", "%s", ints(g.VerifyWidths))
	} else {
		p("verify widths", "none (no speculation possible)")
	}
	if g.MaxRows > 0 {
		p("max rows/call", "%d", g.MaxRows)
	}
	p("EOS ids", "%s", ints(r.EOS))
	p("prompt template", "%s", templateText(r.Template))
	p("tokenizer", "%s", r.Tokenizer)
	if len(r.Unknown) > 0 {
		var ks []string
		for k := range r.Unknown {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		p("unknown keys", "%s (kept)", strings.Join(ks, ", "))
	}
	fmt.Fprintln(w, "files")
	for _, f := range r.Files {
		status := f.Status
		if f.Detail != "" {
			status += ", " + f.Detail
		}
		fmt.Fprintf(w, "  %-11s %12s  %-42s %s\n", status, humanBytes(f.Size), f.Path, f.Role)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w, "notes")
		for _, n := range r.Notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	if len(r.Problems) > 0 {
		fmt.Fprintln(w, "problems")
		for _, pr := range r.Problems {
			fmt.Fprintln(w, "  "+pr)
		}
	}
}

func orUnknown(n int) string {
	if n == 0 {
		return "?"
	}
	return strconv.Itoa(n)
}

func fullKV(g Geometry) string {
	if g.KVHeadsFull != 0 && g.KVHeadsFull != g.KVHeads {
		return fmt.Sprintf(" (%d on full layers)", g.KVHeadsFull)
	}
	return ""
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

func templateText(t Template) string {
	if t.PromptPrefix == nil && t.PromptSuffix == nil {
		return "Gemma 4 default (<|turn>user … <turn|> <|turn>model)"
	}
	q := func(s *string) string {
		if s == nil {
			return "(default)"
		}
		return strconv.Quote(*s)
	}
	return "prefix " + q(t.PromptPrefix) + ", suffix " + q(t.PromptSuffix)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
