package memledger

import (
	"strings"
	"testing"
)

func TestLow(t *testing.T) {
	for _, tt := range []struct {
		physical uint64
		low      bool
	}{
		{6 << 30, true}, // 6 GB iPhone 15
		{7<<30 - 1, true},
		{7 << 30, false},
		{8 << 30, false}, // 8 GB Mac
		{0, true},        // unknown
	} {
		if got := Low(tt.physical); got != tt.low {
			t.Errorf("Low(%d) = %v, want %v", tt.physical, got, tt.low)
		}
	}
}

func TestThermalName(t *testing.T) {
	for state, want := range []string{"nominal", "fair", "serious", "critical"} {
		if got := thermalName(state); got != want {
			t.Errorf("thermalName(%d) = %q, want %q", state, got, want)
		}
	}
	if got := thermalName(7); got != "thermal(7)" {
		t.Errorf("thermalName(7) = %q", got)
	}
}

const meminfo = `MemTotal:       16315948 kB
MemFree:         1220532 kB
MemAvailable:    9875312 kB
Buffers:          402148 kB
Unevictable:       21684 kB
HugePages_Total:       0
`

func TestParseKB(t *testing.T) {
	got, err := parseKB(strings.NewReader(meminfo), "MemTotal", "MemAvailable", "Unevictable", "HugePages_Total")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"MemTotal": 16315948 << 10, "MemAvailable": 9875312 << 10, "Unevictable": 21684 << 10, "HugePages_Total": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	status := "Name:\torchard\nVmPeak:\t  123 kB\nVmRSS:\t   52344 kB\nThreads:\t12\n"
	if got, err := parseKB(strings.NewReader(status), "VmRSS"); err != nil || got["VmRSS"] != 52344<<10 {
		t.Errorf("VmRSS = %d, %v", got["VmRSS"], err)
	}
	for _, bad := range []string{"MemTotal: 12 MB\n", "MemTotal: lots kB\n", "MemTotal:\n", "MemFree: 1 kB\n"} {
		if _, err := parseKB(strings.NewReader(bad), "MemTotal"); err == nil {
			t.Errorf("parseKB(%q) succeeded", bad)
		}
	}
}
