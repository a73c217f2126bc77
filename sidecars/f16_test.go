package sidecars

import "testing"

func TestNegF16(t *testing.T) {
	if got := NegF16(-1e9); got != 0xFC00 {
		t.Errorf("NegF16(-1e9) = %#04x, want -inf 0xfc00", got)
	}
	if got := NegF16(-65504); got != 0xFBFF {
		t.Errorf("NegF16(-65504) = %#04x, want 0xfbff", got)
	}
}
