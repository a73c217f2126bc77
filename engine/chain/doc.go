// Package chain drives a bundle's chunk graphs through the coreml seam: one
// Chain per bundle family hides the graph plumbing — inputs, caches, states,
// scheduling — behind the small interface the generation loop stands on.
//
// What lives here: the Chain interface and Open (chain.go), a driver per
// family (chain_r1.go, chain_v2.go, chain_stateful3.go), what a loaded
// chunk offers (contract.go), host tensors viewed or converted to the
// declared shapes and dtypes (conform.go), the host-side inputs — embedding
// and per-layer dequant, RoPE rows, soft rows (inputs.go), cache state in and
// out for checkpoints (snapshot.go), the warm-up of every function a chain
// uses (warm.go), the seam's copy meter as a chain reads it (SeamCopies),
// the full-recompute oracle fed by the same host inputs (oracle.go) and the
// selftest gates that check a chain against itself.
//
// Touch this package to add a bundle family or to change how graphs are
// called. What never lives here: conversations, turns, templates, sampling,
// speculation policy, events or goroutines — those are package engine's,
// which stands on Chain and never the other way round: chain imports
// nothing of engine.
package chain
