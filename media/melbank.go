package media

import "math"

// melBank is the HTK 128-bin mel filterbank over the 257 bins of a 512-point
// FFT at 16 kHz, 0–8000 Hz, without area normalisation: HF's
// mel_filter_bank(257, 128, 0, 8000, 16000, norm=None, mel_scale="htk"),
// which the Swift runtime ships as AudioMelTables (multimodal.md §2.3 step
// 5.4). Each FFT bin feeds at most two adjacent mel bins, so it is stored
// sparsely as the Swift tables are: bin k adds weight0[k] to mel bin
// first[k] and weight1[k] to first[k]+1; first[k] is -1 when bin k feeds
// none.
type melBank struct {
	first   [spectrumBins]int
	weight0 [spectrumBins]float64
	weight1 [spectrumBins]float64
}

func hertzToMel(f float64) float64 { return 2595 * log10Exact(1+f/700) }
func melToHertz(m float64) float64 { return 700 * (pow10Exact(m/2595) - 1) }

// newMelBank builds the table with numpy's arithmetic: linspace(0, mel(8000),
// 130) is i·step with the last point set to the stop value, the FFT bin
// frequencies are k·31.25 (exact), and a triangle's weight is
// max(0, min(-(lo-f)/(c-lo), (hi-f)/(hi-c))).
func newMelBank() *melBank {
	melMax := hertzToMel(sampleRateHz / 2)
	step := melMax / (MelBins + 1)
	var pts [MelBins + 2]float64
	for i := range MelBins + 1 {
		pts[i] = melToHertz(float64(i) * step)
	}
	pts[MelBins+1] = melToHertz(melMax)

	b := &melBank{}
	for k := range spectrumBins {
		f := float64(k) * (sampleRateHz / 2) / (spectrumBins - 1)
		b.first[k] = -1
		for j := range MelBins {
			lo, c, hi := pts[j], pts[j+1], pts[j+2]
			w := math.Max(0, math.Min(-(lo-f)/(c-lo), (hi-f)/(hi-c)))
			switch {
			case w <= 0:
			case b.first[k] < 0:
				b.first[k], b.weight0[k] = j, w
			case j == b.first[k]+1:
				b.weight1[k] = w
			}
		}
	}
	return b
}

// apply adds the filterbank's response to mag (257 magnitudes) into mel.
func (b *melBank) apply(mag *[spectrumBins]float64, mel *[MelBins]float64) {
	*mel = [MelBins]float64{}
	for k, j := range b.first {
		if j < 0 {
			continue
		}
		mel[j] += mag[k] * b.weight0[k]
		if j+1 < MelBins {
			mel[j+1] += mag[k] * b.weight1[k]
		}
	}
}
