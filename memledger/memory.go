package memledger

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Memory is the memory ledger shown beside a chat: what this process costs
// and what the machine has left. Sizes are in bytes.
type Memory struct {
	Footprint uint64 // charged to this process: phys_footprint on macOS (what jetsam and Activity Monitor use), VmRSS on Linux
	Resident  uint64 // resident set of this process
	Mapped    uint64 // file-backed resident memory: the mmap'd sidecars (RssFile on Linux; 0 where not reported)
	Wired     uint64 // system memory that cannot be paged out: wired pages on macOS, Unevictable on Linux
	Available uint64 // memory available to new work without swapping
	Physical  uint64 // installed memory
	Thermal   string // nominal, fair, serious or critical on macOS; "" where not reported
}

// LowBytes is the installed memory below which the published runtimes
// do not preload speculation assets (the verify head and width-4 chain).
const LowBytes = 7 << 30

// Low reports whether a machine with physical bytes of memory should
// skip preloading speculation assets. An unknown size (0) counts as low.
func Low(physical uint64) bool { return physical < LowBytes }

// thermalName names an NSProcessInfoThermalState value.
func thermalName(state int) string {
	switch state {
	case 0:
		return "nominal"
	case 1:
		return "fair"
	case 2:
		return "serious"
	case 3:
		return "critical"
	}
	return fmt.Sprintf("thermal(%d)", state)
}

// parseKB reads "Key: value kB" lines, as /proc/self/status and
// /proc/meminfo print them, returning the values of keys in bytes. Every key
// must be present.
func parseKB(r io.Reader, keys ...string) (map[string]uint64, error) {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	out := make(map[string]uint64, len(keys))
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || !want[key] {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("%s: no value", key)
		}
		v, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		unit := uint64(1)
		if len(fields) > 1 {
			if fields[1] != "kB" {
				return nil, fmt.Errorf("%s: unit %q", key, fields[1])
			}
			unit = 1024
		}
		out[key] = v * unit
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("%s: missing", k)
		}
	}
	return out, nil
}
