package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/orchard-llm/orchard/engine"
)

// maxLatencies bounds the per-token latency history the sparkline draws.
const maxLatencies = 256

// stats collects the figures of the current turn and the session and
// draws the stats panel. The status bar reads the same figures. Where the
// turn is and the settings in force it reads from the Model's turn.
type stats struct {
	st            *Styles
	width, height int
	info          engine.ModelInfo
	turn          *turnState // read only

	prefillDone, prefillTotal  int
	promptTokens, reusedTokens int
	live                       engine.Live
	haveLive                   bool
	last                       *engine.TurnMetrics
	idleContext                int // context used when idle without a last turn (after a load)
	lat                        []float64

	// Session totals over finished and cancelled turns.
	sessDrafted, sessAccepted int
	sessVerify                int     // verify rounds that had a draft
	sessCommitted             float64 // tokens those rounds committed
	sessTurns                 int
}

func (s *stats) SetSize(w, h int) { s.width, s.height = w, h }

func (s *stats) Started(e engine.Started) {
	s.prefillDone, s.prefillTotal = 0, e.PromptTokens-e.ReusedTokens
	s.promptTokens, s.reusedTokens = e.PromptTokens, e.ReusedTokens
	s.haveLive = false
	s.live = engine.Live{}
	s.lat = s.lat[:0]
}

func (s *stats) Prefill(e engine.PrefillProgress) {
	s.prefillDone, s.prefillTotal = e.Done, e.Total
}

func (s *stats) Delta(d engine.Delta) {
	s.live = d.Live
	s.haveLive = true
	if d.Live.LastTokenMs > 0 {
		s.lat = append(s.lat, d.Live.LastTokenMs)
		if len(s.lat) > maxLatencies {
			s.lat = append(s.lat[:0], s.lat[len(s.lat)-maxLatencies:]...)
		}
	}
}

// Finished settles the live figures to the exact ones of the turn.
func (s *stats) Finished(m engine.TurnMetrics) {
	s.last = &m
	if len(m.PerTokenMillis) > 0 {
		s.lat = append(s.lat[:0], m.PerTokenMillis[max(0, len(m.PerTokenMillis)-maxLatencies):]...)
	}
	s.sessTurns++
	if m.Spec.Enabled {
		s.sessDrafted += m.Spec.Drafted
		s.sessAccepted += m.Spec.Accepted
		if v := m.Spec.Rounds - m.Spec.FallbackRounds; v > 0 && m.Spec.MeanAccepted > 0 {
			s.sessVerify += v
			s.sessCommitted += m.Spec.MeanAccepted * float64(v)
		}
	}
}

// Cleared starts over after /clear or a loaded checkpoint: no last turn,
// and the context holds what the loaded conversation's cache holds.
func (s *stats) Cleared(contextUsed int) {
	s.last, s.idleContext = nil, contextUsed
}

// SetContext sets the context the conversation fills when it took
// another path (a version selected) without a turn.
func (s *stats) SetContext(n int) {
	if s.last != nil {
		last := *s.last
		last.ContextUsed = n
		s.last = &last
	}
	s.idleContext = n
}

func (s *stats) busy() bool { return s.turn.busy() }

// tokPerSec is the decode speed: live while streaming, exact after.
func (s *stats) tokPerSec() (float64, bool) {
	if s.turn.phase == phaseDecode && s.haveLive {
		return s.live.DecodeTokPerS, true
	}
	if s.last != nil {
		return s.last.DecodeTokPerSec, true
	}
	return 0, false
}

func (s *stats) context() (used, limit int) {
	limit = s.info.Context
	switch {
	case s.busy() && s.haveLive:
		used, limit = s.live.ContextUsed, s.live.ContextLimit
	case s.last != nil:
		used, limit = s.last.ContextUsed, s.last.ContextLimit
	case s.busy():
		used = s.promptTokens
	default:
		used = s.idleContext
	}
	if limit == 0 {
		limit = s.info.Context
	}
	return used, limit
}

// specState is what speculation is doing now, or would do next turn.
func (s *stats) specState() engine.SpecState {
	switch {
	case len(s.info.VerifyWidths) == 0:
		return engine.SpecUnsupported
	case s.busy() && s.haveLive && s.live.SpecState != "":
		return s.live.SpecState
	case s.turn.settings.Speculation == engine.SpecModeOff:
		return engine.SpecOff
	case s.last != nil && s.last.Spec.State != "":
		return s.last.Spec.State
	case s.turn.settings.Speculation == engine.SpecModeAuto:
		return engine.SpecAdaptive
	}
	return engine.SpecOn
}

// turnAcceptance is the draft acceptance of the current or last turn.
func (s *stats) turnAcceptance() (float64, bool) {
	if s.busy() && s.haveLive && s.live.SpecState != engine.SpecOff && s.live.SpecState != engine.SpecUnsupported && s.live.SpecState != "" {
		return s.live.AcceptanceRate, true
	}
	if s.last != nil && s.last.Spec.Enabled && s.last.Spec.Drafted > 0 {
		return s.last.Spec.AcceptanceRate, true
	}
	return 0, false
}

func (s *stats) sessionAcceptance() (float64, bool) {
	if s.sessDrafted == 0 {
		return 0, false
	}
	return float64(s.sessAccepted) / float64(s.sessDrafted), true
}

func (s *stats) memory() (engine.Memory, bool) {
	if s.last == nil || s.last.Memory == (engine.Memory{}) {
		return engine.Memory{}, false
	}
	return s.last.Memory, true
}

// View draws the panel: two columns when there is room, one otherwise.
func (s *stats) View() string {
	inner := max(s.width-s.st.PanelBorder.GetHorizontalFrameSize(), 10)
	left, right := s.speedRows(), s.specRows()
	var body []string
	if inner >= 2*colWidth+2 {
		cw := inner / 2
		for i := range max(len(left), len(right)) {
			var l, r string
			if i < len(left) {
				l = left[i].render(s.st, cw-1)
			}
			if i < len(right) {
				r = right[i].render(s.st, inner-cw)
			}
			body = append(body, padRight(l, cw)+r)
		}
	} else {
		for _, r := range append(left, right...) {
			body = append(body, r.render(s.st, inner))
		}
	}
	title := s.st.PanelTitle.Render("stats")
	return s.st.PanelBorder.Width(s.width).Render(title + "\n" + strings.Join(body, "\n"))
}

// Height is the panel height View draws at the current width.
func (s *stats) Height() int {
	inner := max(s.width-s.st.PanelBorder.GetHorizontalFrameSize(), 10)
	l, r := len(s.speedRows()), len(s.specRows())
	rows := l + r
	if inner >= 2*colWidth+2 {
		rows = max(l, r)
	}
	return rows + 1 + s.st.PanelBorder.GetVerticalFrameSize()
}

const (
	colWidth   = 36
	labelWidth = 10
)

type row struct{ label, value string }

func (r row) render(st *Styles, w int) string {
	l := st.Label.Render(padRight(r.label, labelWidth))
	return xansi.Truncate(l+r.value, w, "…")
}

func (s *stats) speedRows() []row {
	st := s.st
	var rows []row
	tps, ok := s.tokPerSec()
	speed := st.Dim.Render("—")
	if ok {
		speed = st.Value.Render(fmt.Sprintf("%.1f tok/s", tps))
		if s.turn.phase == phaseDecode {
			speed += st.Dim.Render(" live")
		}
	}
	if s.turn.phase == phasePrefill && s.prefillTotal > 0 {
		speed = st.Value.Render(fmt.Sprintf("prefill %d%%", 100*s.prefillDone/s.prefillTotal))
	}
	rows = append(rows, row{"decode", speed})

	lat := st.Dim.Render("—")
	if len(s.lat) > 0 {
		lat = st.Spark.Render(sparkline(s.lat, 12)) + " "
		if s.last != nil && !s.busy() && s.last.PerTokenMedianMs > 0 {
			lat += st.Dim.Render(fmt.Sprintf("%s/%s/%s ms", ms(s.last.PerTokenMinMs), ms(s.last.PerTokenMedianMs), ms(s.last.PerTokenMaxMs)))
		} else {
			lat += st.Dim.Render(ms(s.lat[len(s.lat)-1]) + " ms")
		}
	}
	rows = append(rows, row{"latency", lat})

	ttft, prefill := st.Dim.Render("—"), st.Dim.Render("—")
	if s.last != nil && !s.busy() {
		ttft = st.Value.Render(seconds(s.last.TTFTSeconds))
		prefill = st.Value.Render(commas(int(math.Round(s.last.PrefillTokPerSec))) + " tok/s")
	}
	rows = append(rows, row{"TTFT", ttft}, row{"prefill", prefill})

	prompt, reused, gen := s.promptTokens, s.reusedTokens, s.live.Generated
	if s.last != nil && !s.busy() {
		prompt, reused, gen = s.last.PromptTokens, s.last.ReusedTokens, s.last.GeneratedTokens
	}
	rows = append(rows, row{"tokens", st.Value.Render(fmt.Sprintf("%s in, %s reused, %s out", commas(prompt), commas(reused), commas(gen)))})

	used, limit := s.context()
	rows = append(rows, row{"context", contextBar(st, used, limit, 10) + " " + st.Value.Render(commas(used)+" / "+commas(limit))})
	if s.last != nil && s.last.SeamMetered {
		// What the runtime really copied across the seam per token, from
		// its own meter: 0 B when Core ML writes every cache in place.
		rows = append(rows, row{"copied", st.Value.Render(humanBytes(uint64(s.last.SeamCopiedBytesPerToken))) + st.Dim.Render(" a token, host↔Core ML")})
	}
	return rows
}

func (s *stats) specRows() []row {
	st := s.st
	state := s.specState()
	spec := string(state)
	if len(s.info.VerifyWidths) > 0 {
		spec += fmt.Sprintf(" · draft %d", s.turn.settings.DraftLen)
	}
	rows := []row{{"spec", st.Value.Render(spec)}}
	turn, ok1 := s.turnAcceptance()
	sess, ok2 := s.sessionAcceptance()
	acc := st.Dim.Render("—")
	if ok1 || ok2 {
		acc = st.Value.Render(fmt.Sprintf("%s turn · %s session", pctOrDash(turn, ok1), pctOrDash(sess, ok2)))
	}
	rows = append(rows, row{"accepted", acc})
	mean := st.Dim.Render("—")
	if s.last != nil && s.last.Spec.MeanAccepted > 0 {
		mean = st.Value.Render(fmt.Sprintf("%.2f turn", s.last.Spec.MeanAccepted))
		if s.sessVerify > 0 {
			mean += st.Value.Render(fmt.Sprintf(" · %.2f session", s.sessCommitted/float64(s.sessVerify)))
		}
	}
	rows = append(rows, row{"mean len", mean})
	if mem, ok := s.memory(); ok {
		rows = append(rows,
			row{"footprint", st.Value.Render(humanBytes(mem.FootprintBytes)) + st.Dim.Render(" · peak "+humanBytes(mem.FootprintPeakBytes))},
			row{"model mem", st.Value.Render(humanBytes(mem.ModelBytes)) + st.Dim.Render(" · peak "+humanBytes(mem.ModelPeakBytes))},
			row{"available", st.Value.Render(humanBytes(mem.AvailableBytes)) + st.Dim.Render(" · low "+humanBytes(mem.AvailableLowBytes))},
		)
	} else {
		rows = append(rows, row{"memory", st.Dim.Render("after the first turn")})
	}
	return rows
}

// sparkline draws the last n values scaled between their min and max.
func sparkline(vals []float64, n int) string {
	const ticks = "▁▂▃▄▅▆▇█"
	if len(vals) > n {
		vals = vals[len(vals)-n:]
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	var b strings.Builder
	levels := []rune(ticks)
	for _, v := range vals {
		i := 0
		if hi > lo {
			i = int((v - lo) / (hi - lo) * float64(len(levels)-1))
		}
		b.WriteRune(levels[i])
	}
	return b.String()
}

func contextBar(st *Styles, used, limit, width int) string {
	if limit <= 0 {
		return st.BarEmpty.Render(strings.Repeat("░", width))
	}
	full := min(width, int(math.Round(float64(width)*float64(used)/float64(limit))))
	fs := st.BarFull
	if used*10 >= limit*9 {
		fs = st.BarWarn
	}
	return fs.Render(strings.Repeat("█", full)) + st.BarEmpty.Render(strings.Repeat("░", width-full))
}

// Number formatting shared by the panels.

func commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

func percent(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

func pctOrDash(f float64, ok bool) string {
	if !ok {
		return "—"
	}
	return percent(f)
}

func seconds(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

func ms(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func humanBytes(b uint64) string {
	const unit = 1024
	switch {
	case b >= unit*unit*unit:
		return fmt.Sprintf("%.1f GiB", float64(b)/(unit*unit*unit))
	case b >= unit*unit:
		return fmt.Sprintf("%.0f MiB", float64(b)/(unit*unit))
	case b >= unit:
		return fmt.Sprintf("%.0f KiB", float64(b)/unit)
	}
	return fmt.Sprintf("%d B", b)
}

// padRight pads a styled string with spaces to width cells.
func padRight(s string, w int) string {
	if n := w - xansi.StringWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}
