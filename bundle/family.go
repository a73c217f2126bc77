// Package bundle opens a model bundle folder: it finds the bundle, detects
// its family, parses its manifests with every key the published runtimes
// read, validates every file's size before anything heavy is loaded, and
// computes the identity that checkpoints are bound to.
package bundle

// Family is one of the published bundle layouts orchard runs.
type Family string

const (
	R1              Family = "r1"               // okayuji E2B: coreml-corellm-r1, host KV
	V2              Family = "v2"               // okayuji E4B: coreml-stateful-chain-v2, MLState chunks
	Stateful3       Family = "stateful3"        // mlboydaisuke E2B: 3 stateful chunks, token_id out
	Stateful3Logits Family = "stateful3-logits" // cardbud E2B: as stateful3, chunk_3 emits logits
)

// Manifest formats that select a family.
const (
	FormatR1 = "coreml-corellm-r1"
	FormatV2 = "coreml-stateful-chain-v2"
)

// Families lists every family, in the order the docs present them.
func Families() []Family { return []Family{R1, V2, Stateful3, Stateful3Logits} }

// ParseFamily accepts a family id.
func ParseFamily(s string) (Family, bool) {
	for _, f := range Families() {
		if string(f) == s {
			return f, true
		}
	}
	return "", false
}

// SameCache reports whether two families keep their caches alike, so a
// checkpoint of one restores into the other: the stateful 3-chunk bundles
// and their logits variant share chunk_1, chunk_2 and their states.
func SameCache(a, b Family) bool {
	base := func(f Family) Family {
		if f == Stateful3Logits {
			return Stateful3
		}
		return f
	}
	return base(a) == base(b)
}
