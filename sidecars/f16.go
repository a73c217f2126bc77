package sidecars

import "github.com/orchard-llm/orchard/f16"

// NegF16 is the fp16 bits of a config mask fill value. Like Float16(NEG) it
// overflows: -1e9 becomes -inf (0xFC00), while -65504 stays 0xFBFF.
func NegF16(neg float64) uint16 { return f16.FromF64(neg) }
