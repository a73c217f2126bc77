package tui

import (
	"fmt"
	"slices"
	"strings"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// statusBar is the one line of figures that is always on screen. When
// the terminal is narrow the least important figures go first.
type statusBar struct {
	st    *Styles
	width int
}

func (b *statusBar) SetSize(w, _ int) { b.width = w }

type segment struct {
	text     string // styled
	priority int    // lower survives longer
}

// View draws the bar from the turn, its figures and, over a server, the
// server's state.
func (b *statusBar) View(t *turnState, s *stats, r *remoteState) string {
	st := b.st
	var segs []segment
	add := func(p int, text string) { segs = append(segs, segment{text, p}) }

	tps, haveTPS := s.tokPerSec()
	switch t.phase {
	case phasePrefill:
		pct := 0
		if s.prefillTotal > 0 {
			pct = 100 * s.prefillDone / s.prefillTotal
		}
		add(0, st.StatusLive.Render(fmt.Sprintf("◐ prefill %d%%", pct)))
	case phaseDecode:
		add(0, st.StatusLive.Render(fmt.Sprintf("● %.1f tok/s", tps)))
	case phaseCancelled:
		add(0, st.StatusWarn.Render("■ cancelled")+st.StatusValue.Render(fmt.Sprintf(" %.1f tok/s", tps)))
	case phaseFailed:
		add(0, st.StatusWarn.Render("✕ failed"))
	default:
		if haveTPS {
			add(0, st.StatusIdle.Render("○ ")+st.StatusValue.Render(fmt.Sprintf("%.1f tok/s", tps)))
		} else {
			add(0, st.StatusIdle.Render("○ ready"))
		}
	}
	if t.compacting != "" {
		add(0, st.StatusLive.Render("◐ "+t.compacting))
	}
	segs = r.status(st, t.busy(), segs)
	if len(s.lat) > 1 {
		add(4, st.StatusValue.Render(sparkline(s.lat, 8)))
	}
	used, limit := s.context()
	ctx := st.StatusKey.Render("ctx ") + st.StatusValue.Render(commas(used)+"/"+commas(limit))
	if limit > 0 && used*10 >= limit*9 {
		ctx = st.StatusWarn.Render("ctx " + commas(used) + "/" + commas(limit))
	}
	add(1, ctx)

	spec := string(s.specState())
	if spec == string(engine.SpecUnsupported) {
		add(2, st.StatusKey.Render("no spec"))
	} else {
		t := st.StatusKey.Render("spec ") + st.StatusValue.Render(spec)
		if acc, ok := s.turnAcceptance(); ok {
			t += st.StatusValue.Render(" " + percent(acc))
		}
		add(2, t)
	}
	if mem, ok := s.memory(); ok {
		add(3, st.StatusKey.Render("mem ")+st.StatusValue.Render(humanBytes(mem.FootprintBytes)))
	}
	if s.last != nil && !t.busy() && s.last.TTFTSeconds > 0 {
		add(6, st.StatusKey.Render("TTFT ")+st.StatusValue.Render(seconds(s.last.TTFTSeconds)))
	}
	set := t.settings
	samp := "greedy"
	if !set.Sampling.Greedy() {
		samp = fmt.Sprintf("temp %g", set.Sampling.Temperature)
	}
	if set.Thinking {
		samp += " · think"
	}
	add(5, st.StatusKey.Render(samp))

	return b.fit(segs)
}

// fit keeps the most important segments that fit, in their order.
func (b *statusBar) fit(segs []segment) string {
	st := b.st
	sep := st.StatusSep.Render(" │ ")
	sepW := xansi.StringWidth(sep)
	order := make([]int, len(segs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, c int) int { return segs[a].priority - segs[c].priority })
	keep := make([]bool, len(segs))
	used := 1 // leading space
	for _, i := range order {
		w := xansi.StringWidth(segs[i].text)
		if used > 1 {
			w += sepW
		}
		if used+w > b.width {
			continue
		}
		keep[i] = true
		used += w
	}
	var parts []string
	for i, s := range segs {
		if keep[i] {
			parts = append(parts, s.text)
		}
	}
	line := st.StatusBar.Render(" ") + strings.Join(parts, sep)
	if pad := b.width - xansi.StringWidth(line); pad > 0 {
		line += st.StatusBar.Render(strings.Repeat(" ", pad))
	}
	return xansi.Truncate(line, b.width, "")
}
