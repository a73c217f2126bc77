package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/orchard-llm/orchard/internal/testbundle"
)

// BenchmarkCompaction: a compaction on the small preset (2,048 positions)
// of a conversation that fills most of it, from the cache the turns left
// ("warm": the summarisation prompt reuses the turns it summarises, so
// only the instruction is prefilled) and from an empty cache ("cold": what
// summarising costs without that reuse). prefill-tokens/op is what each
// fed; the next turn then reuses the system prompt (TestCompactFortyTurns).
func BenchmarkCompaction(b *testing.B) {
	bun := testbundle.Preset(b, "r1", "small")
	type entry struct {
		Match string `json:"match"`
		Reply string `json:"reply"`
	}
	long := strings.Repeat("The orchard keeps pears, plums and apples in rows by the wall. ", 12)
	rs := []entry{{`^Summarise the conversation`, "The user asked about the orchard's fruit; the answers described its rows."}}
	for n := 1; n <= 20; n++ {
		rs = append(rs, entry{fmt.Sprintf(`^Q%d\b`, n), long})
	}
	data, _ := json.Marshal(map[string]any{"replies": rs})
	set := Settings{MaxTokens: 200, System: "Be brief.", ContextPolicy: ContextStop, Speculation: SpecModeOff}
	rt := scriptedRuntime(b, bun, string(data))
	s := scriptedSession(b, bun, rt, set)
	for n := 1; ; n++ {
		if _, end := reply(b, s, fmt.Sprintf("Q%d", n)); end == nil {
			b.Fatal("no end")
		} else if f, ok := end.(Finished); !ok || f.Metrics.ContextUsed > 1500 {
			break
		}
	}
	cp, err := s.Checkpoint("full", 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"warm", "cold"} {
		b.Run(mode, func(b *testing.B) {
			var fed, reused int
			for b.Loop() {
				b.StopTimer()
				if err := s.Restore(cp); err != nil {
					b.Fatal(err)
				}
				if mode == "cold" {
					if err := s.chain.Reset(); err != nil {
						b.Fatal(err)
					}
					s.committed, s.unfed = nil, append(s.committed, s.unfed...)
				}
				b.StartTimer()
				err := s.Compact(func(ev Event) {
					if c, ok := ev.(Compacted); ok {
						fed += c.PromptTokens - c.ReusedTokens
						reused += c.ReusedTokens
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fed)/float64(b.N), "prefill-tokens/op")
			b.ReportMetric(float64(reused)/float64(b.N), "reused-tokens/op")
		})
	}
}
