package memledger

import (
	"fmt"
	"os"
)

// Read reads the ledger from /proc. Linux has no phys_footprint, so
// Footprint is the resident set.
func Read() (Memory, error) {
	status, err := readKB("/proc/self/status", "VmRSS", "RssFile")
	if err != nil {
		return Memory{}, err
	}
	info, err := readKB("/proc/meminfo", "MemTotal", "MemAvailable", "Unevictable")
	if err != nil {
		return Memory{}, err
	}
	return Memory{
		Footprint: status["VmRSS"],
		Resident:  status["VmRSS"],
		Mapped:    status["RssFile"],
		Wired:     info["Unevictable"],
		Available: info["MemAvailable"],
		Physical:  info["MemTotal"],
	}, nil
}

func readKB(path string, keys ...string) (map[string]uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("memory ledger: %w", err)
	}
	defer f.Close()
	m, err := parseKB(f, keys...)
	if err != nil {
		return nil, fmt.Errorf("memory ledger: %s: %w", path, err)
	}
	return m, nil
}
