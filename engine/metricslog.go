package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/orchard-llm/orchard/regfile"
)

// MetricsLog appends one JSON object per turn to metrics.jsonl with the
// field names of the okayuji runtime's log (okayuji doc §7), so existing
// analysis scripts keep working. Keys are sorted; absent values omitted.
type MetricsLog struct {
	mu     sync.Mutex
	f      *os.File
	ident  map[string]any
	loaded time.Duration // model load time, logged with the first turn only
}

// OpenMetricsLog opens (creating, 0600) the log for appending.
func OpenMetricsLog(path string, info ModelInfo, bundleDir string, load time.Duration) (*MetricsLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("metrics log: %w", err)
	}
	f, err := regfile.OpenAppend(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("metrics log: %w", err)
	}
	host, _ := os.Hostname()
	return &MetricsLog{f: f, loaded: load, ident: map[string]any{
		"modelID": info.Name, "computeUnits": info.ComputeUnits, "bundleFolder": filepath.Base(bundleDir),
		"deviceModel": runtime.GOOS + "/" + runtime.GOARCH, "osVersion": runtime.GOOS, "appBuild": "orchard",
		"hostName": host, "family": info.Family,
	}}, nil
}

// Record writes one turn.
func (l *MetricsLog) Record(m TurnMetrics) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := map[string]any{"kind": "message", "timestamp": time.Now().UTC().Format(time.RFC3339Nano)}
	for k, v := range l.ident {
		rec[k] = v
	}
	if l.loaded > 0 {
		rec["modelLoadSeconds"] = l.loaded.Seconds()
		l.loaded = 0
	}
	const mb = 1 << 20
	add := map[string]any{
		"promptTokens": m.PromptTokens, "reusedTokens": m.ReusedTokens, "generatedTokens": m.GeneratedTokens,
		"finishReason": m.FinishReason, "ttftSeconds": m.TTFTSeconds, "prefillSeconds": m.PrefillSeconds,
		"prefillTokPerSec": m.PrefillTokPerSec, "decodeTokPerSec": m.DecodeTokPerSec,
		"perTokenMillis": m.PerTokenMillis, "perTokenMinMs": m.PerTokenMinMs, "perTokenMaxMs": m.PerTokenMaxMs,
		"perTokenMedianMs": m.PerTokenMedianMs, "perTokenMeanMs": m.PerTokenMeanMs,
		"contextLength": m.ContextLimit, "contextUsed": m.ContextUsed,
		"specEnabled": m.Spec.Enabled, "specState": m.Spec.State,
		"footprintAtEndMB": float64(m.Memory.FootprintBytes) / mb, "peakFootprintMB": float64(m.Memory.FootprintPeakBytes) / mb,
		"modelMemoryMB": float64(m.Memory.ModelBytes) / mb, "availableMemoryMB": float64(m.Memory.AvailableBytes) / mb,
	}
	if m.Spec.Rounds > 0 || m.Spec.FallbackRounds > 0 {
		add["specRounds"], add["specDrafted"], add["specAccepted"] = m.Spec.Rounds, m.Spec.Drafted, m.Spec.Accepted
		add["specAcceptanceRate"], add["pldAcceptRate"] = m.Spec.AcceptanceRate, m.Spec.PLDRate
		add["specFallbackRounds"], add["meanAcceptedPerVerify"] = m.Spec.FallbackRounds, m.Spec.MeanAccepted
	}
	if m.DroppedTurns > 0 {
		add["droppedTurns"] = m.DroppedTurns
	}
	for k, v := range add {
		rec[k] = v
	}
	return l.write(rec)
}

// write appends one record as a line (the caller holds l.mu).
func (l *MetricsLog) write(rec map[string]any) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = l.f.Write(append(line, '\n'))
	return err
}

// RecordKV writes a `kv` record for a cache save or restore (okayuji doc
// §7): the operation, the cache bytes, how long the export or import took
// and the committed tokens.
func (l *MetricsLog) RecordKV(op string, bytes int64, sec float64, tokens int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := map[string]any{"kind": "kv", "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"kvOp": op, "kvBytes": bytes, "kvDurationSeconds": sec, "promptTokens": tokens}
	for k, v := range l.ident {
		rec[k] = v
	}
	return l.write(rec)
}

// Close closes the file.
func (l *MetricsLog) Close() error { return l.f.Close() }
