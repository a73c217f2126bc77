package media

// Segment is one part of a clip split for the encoder: Samples is
// a.Samples[Start:End], at most MaxSamples long.
type Segment struct {
	Start, End int // sample offsets at 16 kHz
	Samples    []float32
}

// Seconds is where the segment starts in the clip.
func (s Segment) Seconds() float64 { return float64(s.Start) / SampleRate }

// Split cuts the clip into the fewest segments of at most 30 s, of nearly
// equal length, each cut placed at the quietest 20 ms within a second of
// the equal split (so words are rarely cut), yet never making a segment
// longer than 30 s. A clip of at most 30 s is one segment. Every sample
// belongs to exactly one segment: nothing is dropped.
func (a *Audio) Split() []Segment {
	n := len(a.Samples)
	k := max(1, (n+MaxSamples-1)/MaxSamples)
	cuts := []int{0}
	for i := 1; i < k; i++ {
		target := i * n / k
		// Keep both neighbours within MaxSamples: the previous cut is
		// fixed, the next one lands within slack of its own target.
		slack := (MaxSamples - (n+k-1)/k) / 2
		reach := min(SampleRate, slack)
		lo := max(target-reach, cuts[len(cuts)-1]+1)
		hi := min(target+reach, cuts[len(cuts)-1]+MaxSamples)
		cuts = append(cuts, quietest(a.Samples, lo, hi, target))
	}
	cuts = append(cuts, n)
	segs := make([]Segment, 0, k)
	for i := range k {
		s, e := cuts[i], cuts[i+1]
		segs = append(segs, Segment{Start: s, End: e, Samples: a.Samples[s:e]})
	}
	return segs
}

// quietest returns the centre of the 20 ms window with the least energy
// whose centre lies in [lo, hi] (stepping 10 ms from target both ways); of
// equally quiet ones, the nearest to target.
func quietest(x []float32, lo, hi, target int) int {
	const win, hop = 320, 160
	best, bestE := target, energy(x, target, win)
	for d := hop; target-d >= lo || target+d <= hi; d += hop {
		for _, c := range [2]int{target - d, target + d} {
			if c < lo || c > hi {
				continue
			}
			if e := energy(x, c, win); e < bestE {
				best, bestE = c, e
			}
		}
	}
	return best
}

func energy(x []float32, c, win int) float32 {
	var e float32
	for i := max(0, c-win/2); i < min(len(x), c+win/2); i++ {
		e += x[i] * x[i]
	}
	return e
}
