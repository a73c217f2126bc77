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
	L := len(context) + 1
	at := func(i int) int { // seq = context + [last]
		if i == len(context) {
			return last
		}
		return context[i]
	}
	if max <= 0 || p.MinN < 1 || L < p.MinN+1 {
		return dst
	}
	for n := min(p.MaxN, L-1); n >= p.MinN; n-- {
		// Candidate starts j (seq[j:j+n] == final n-gram), most recent first;
		// the match may overlap the suffix.
	scan:
		for j := L - n - 1; j >= 0; j-- {
			for k := n - 1; k >= 0; k-- {
				if at(j+k) != at(L-n+k) {
					continue scan
				}
			}
			end := min(j+n+max, L)
			for i := j + n; i < end; i++ {
				dst = append(dst, at(i))
			}
			return dst
		}
	}
	return dst
}
