// Package memledger reads the memory ledger shown beside a chat and served
// as metrics: what this process costs (its footprint, resident and mapped
// bytes) and what the machine has left (wired, available, installed, the
// thermal state on macOS), from Mach and sysctl on macOS and /proc on
// Linux.
package memledger
