package engine

import (
	"math"
	"math/rand/v2"
	"slices"
)

// sampler picks the next token from logits with temperature, top-k,
// top-p, min-p and a repetition penalty, reproducibly for a seed. Its
// buffers are reused, so a token costs no allocation after the first.
type sampler struct {
	s     Sampling
	rng   *rand.Rand
	probs []float64
	idx   []int
}

func newSampler(s Sampling, seed uint64, turn int) *sampler {
	return &sampler{s: s, rng: rand.New(rand.NewPCG(seed, uint64(turn)))}
}

// pick returns the sampled token. logits are soft-capped values; recent
// are the tokens the repetition penalty applies to.
func (sm *sampler) pick(logits []float32, recent []int) int {
	s := sm.s
	n := len(logits)
	if cap(sm.probs) < n {
		sm.probs, sm.idx = make([]float64, n), make([]int, n)
	}
	p, idx := sm.probs[:n], sm.idx[:n]
	for i, v := range logits {
		p[i] = float64(v)
	}
	if s.RepetitionPenalty > 0 && s.RepetitionPenalty != 1 {
		for _, t := range recent {
			if t >= 0 && t < n {
				// As HF: divide positive logits, multiply negative ones.
				if p[t] > 0 {
					p[t] /= s.RepetitionPenalty
				} else {
					p[t] *= s.RepetitionPenalty
				}
			}
		}
	}
	if s.Temperature <= 0 {
		best := 0
		for i := range p {
			if p[i] > p[best] {
				best = i
			}
		}
		return best
	}
	maxL := math.Inf(-1)
	for _, v := range p {
		maxL = max(maxL, v)
	}
	var sum float64
	for i, v := range p {
		p[i] = math.Exp((v - maxL) / s.Temperature)
		sum += p[i]
		idx[i] = i
	}
	// Sort candidates by probability (ties by id, for reproducibility).
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return a - b
	})
	keep := n
	if s.TopK > 0 && s.TopK < keep {
		keep = s.TopK
	}
	if s.MinP > 0 {
		floor := s.MinP * p[idx[0]]
		for k := 1; k < keep; k++ {
			if p[idx[k]] < floor {
				keep = k
				break
			}
		}
	}
	if s.TopP > 0 && s.TopP < 1 {
		var c float64
		for k := 0; k < keep; k++ {
			c += p[idx[k]] / sum
			if c >= s.TopP {
				keep = k + 1
				break
			}
		}
	}
	var total float64
	for _, i := range idx[:keep] {
		total += p[i]
	}
	r := sm.rng.Float64() * total
	for _, i := range idx[:keep] {
		r -= p[i]
		if r < 0 {
			return i
		}
	}
	return idx[keep-1]
}
