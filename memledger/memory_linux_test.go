package memledger

import (
	"runtime"
	"testing"
)

// TestReadLinux reads the real /proc and checks the ledger moves when
// this process touches memory.
func TestReadLinux(t *testing.T) {
	before, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if before.Physical < 256<<20 || before.Available == 0 || before.Available > before.Physical {
		t.Errorf("implausible system memory: %+v", before)
	}
	if before.Footprint == 0 || before.Footprint != before.Resident || before.Footprint > before.Physical {
		t.Errorf("implausible process memory: %+v", before)
	}
	if before.Thermal != "" {
		t.Errorf("Thermal = %q on Linux", before.Thermal)
	}

	const grow = 64 << 20
	b := make([]byte, grow)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if after.Footprint < before.Footprint+grow/2 {
		t.Errorf("footprint %d → %d after touching %d bytes", before.Footprint, after.Footprint, grow)
	}
	runtime.KeepAlive(b)
	t.Logf("physical %d MiB, available %d MiB, footprint %d → %d MiB", before.Physical>>20, before.Available>>20, before.Footprint>>20, after.Footprint>>20)
}

// TestMappedMemory: touching a mapped file raises the file-backed ledger.
func TestMappedMemory(t *testing.T) {
	m, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if m.Mapped == 0 || m.Mapped > m.Resident {
		t.Fatalf("mapped %d of resident %d: the test binary's own text is file-backed", m.Mapped, m.Resident)
	}
}
