package engine

// Drafter proposes up to max tokens that may follow context+[last]. It
// appends them to dst and returns it. Verification decides what is kept,
// so a drafter can only change speed, never output.
type Drafter interface {
	Draft(dst, context []int, last, max int) []int
}

// PromptLookup drafts by prompt lookup (okayuji doc §4.1): find the most
// recent earlier occurrence of the final n-gram of context+[last], longest
// n first (MaxN down to MinN), and copy what followed it. The search runs
// over every committed token of the conversation, so a reply that quotes
// the prompt or an earlier turn drafts well.
type PromptLookup struct {
	MinN, MaxN int
}

// Draft scans backwards without allocating; at a full 2,048-token context
// a round costs a few microseconds (BenchmarkPromptLookup).
func (p PromptLookup) Draft(dst, context []int, last, max int) []int {
	L := len(context) + 1 // seq = context + [last]
	if max <= 0 || p.MinN < 1 || L < p.MinN+1 {
		return dst
	}
	var suf [8]int
	for n := min(p.MaxN, L-1, len(suf)); n >= p.MinN; n-- {
		// The final n-gram of seq; a candidate window seq[j:j+n] with
		// j ≤ L-n-1 lies wholly inside context (it may overlap the suffix).
		copy(suf[:n-1], context[len(context)-(n-1):])
		suf[n-1] = last
		tail := suf[n-1]
	scan:
		for j := L - n - 1; j >= 0; j-- {
			if context[j+n-1] != tail {
				continue
			}
			for k := n - 2; k >= 0; k-- {
				if context[j+k] != suf[k] {
					continue scan
				}
			}
			for i := j + n; i < min(j+n+max, L); i++ {
				if i == len(context) {
					dst = append(dst, last)
				} else {
					dst = append(dst, context[i])
				}
			}
			return dst
		}
	}
	return dst
}
