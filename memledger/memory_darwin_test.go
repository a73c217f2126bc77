//go:build darwin && cgo

package memledger

import (
	"slices"
	"testing"
)

// TestReadDarwin reads the real ledger of this Mac.
func TestReadDarwin(t *testing.T) {
	m, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if m.Physical < 4<<30 || m.Footprint == 0 || m.Resident == 0 || m.Wired == 0 || m.Available == 0 || m.Available > m.Physical {
		t.Errorf("implausible ledger: %+v", m)
	}
	if !slices.Contains([]string{"nominal", "fair", "serious", "critical"}, m.Thermal) {
		t.Errorf("Thermal = %q", m.Thermal)
	}
	t.Logf("%+v", m)
}
