package media

// SoftTokens is the number of audio soft rows the prompt holds for a clip
// of n samples at 16 kHz: the Swift runtime's
// softTokenCount(melFrameCount(paddedSampleCount(n))), two stride-2
// subsamplings t → (t-1)/2 + 1 of the frame count on the 128-padded length
// (multimodal.md §2.5). It is one more than HF's mask-sum count for about
// 5 % of lengths; orchard follows the runtime the bundles were verified
// with. 1 s gives 25, 30 s gives 750. Clips shorter than MinSamples have no
// log-mel and give 0; clips over 30 s count as their first 30 s.
func SoftTokens(n int) int {
	if n < MinSamples {
		return 0
	}
	t := melFrameCount(roundUp(min(n, MaxSamples), padMultiple))
	for range 2 {
		t = (t-1)/2 + 1
	}
	return t
}
