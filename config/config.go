// Package config builds orchard's one Config value from, in rising
// precedence, built-in defaults, the TOML config file, environment
// variables and command-line flags, remembering where every value came
// from. It also knows orchard's folders (XDG config and data homes), opens
// the log file, finds model bundles in search folders and the Hugging Face
// cache, and remembers the user's model choice.
package config

import (
	"path/filepath"

	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/media"
)

// Config is the effective configuration. Load fills it; Source tells where
// each value came from.
type Config struct {
	Model       Model
	Speculation Speculation
	Sampling    Sampling
	Chat        Chat
	Data        Data
	Log         Log
	UI          UI
	History     History
	Media       Media
	Server      Server
	// MCP holds the [mcp.servers.NAME] tables.
	MCP MCP
	// Keys maps a TUI action to the keys bound to it, overriding the TUI's
	// defaults action by action; an empty list unbinds the action.
	Keys map[string][]string

	// File is the config file that was read, or would have been read had
	// it existed (FileFound false).
	File      string
	FileFound bool

	sources map[string]Source
}

// Model says which bundle to open and how to run it.
type Model struct {
	Path         string   // bundle folder; "" = choose in the picker
	SearchDirs   []string // folders `orchard models` and the picker scan
	ComputeUnits coreml.ComputeUnits
	// VerifyHeadUnits places r1's batched verify head; DefaultUnits keeps
	// the published rule (CPU when the chain may use the Neural Engine).
	VerifyHeadUnits coreml.ComputeUnits
	// HeadUnits places v2's lm head; DefaultUnits runs it with the chunks
	// (CORELLM_V2_HEAD_CU=chunks).
	HeadUnits coreml.ComputeUnits
	// VisionUnits and AudioUnits place the encoders; DefaultUnits is
	// cpuAndGPU for both, as the seed cards measured them.
	VisionUnits, AudioUnits coreml.ComputeUnits
	// PrefillPastWindow keeps stateful3's batched prefill on past the
	// sliding window (chain.Options.BatchPastWindow; not exact).
	PrefillPastWindow bool
	// WarmUp runs every function once at open (chain.Warm): auto does
	// it on Core ML, where a function's first call compiles it.
	WarmUp WarmUp
}

// WarmUp says when to warm a bundle's functions up at open.
type WarmUp string

const (
	WarmAuto WarmUp = "auto" // on Core ML only: the pure-Go runtime compiles nothing
	WarmOn   WarmUp = "on"
	WarmOff  WarmUp = "off"
)

// SpecMode turns prompt-lookup speculation on, off, or on where the bundle
// supports it.
type SpecMode string

const (
	SpecOn   SpecMode = "on"
	SpecOff  SpecMode = "off"
	SpecAuto SpecMode = "auto"
)

// Speculation configures prompt-lookup drafting.
type Speculation struct {
	Mode        SpecMode
	DraftLength int // tokens drafted per round, 1…16
	NgramMin    int // shortest suffix n-gram looked up
	NgramMax    int // longest suffix n-gram looked up
}

// Sampling holds the defaults for bundles that emit logits; bundles that
// emit argmax ids are always greedy. Its fields match engine.Sampling's,
// so engine.Sampling(c.Sampling) converts it.
type Sampling struct {
	Temperature       float64 // 0 = greedy
	TopK              int     // 0 = no limit
	TopP              float64 // (0, 1]
	MinP              float64 // [0, 1]
	RepetitionPenalty float64 // 1 = none
	Seed              uint64  // same seed, same settings: same reply
}

// ContextPolicy says what happens when a conversation fills the context.
type ContextPolicy string

const (
	ContextStop       ContextPolicy = "stop"        // finish the reply, ask the user to start anew
	ContextDropOldest ContextPolicy = "drop-oldest" // forget the oldest turns and re-prefill
	ContextCompact    ContextPolicy = "compact"     // the model summarises the oldest turns (the default)
)

// Chat holds conversation defaults.
type Chat struct {
	SystemPrompt string
	Thinking     bool
	ContextFull  ContextPolicy
	Tools        Tools
}

// Tools configures the model's calls of MCP servers' tools.
type Tools struct {
	// Allow names the tools that run without asking: "server.tool", or
	// "server.*" for all of a server's.
	Allow []string
	// MaxCalls bounds the calls in one turn.
	MaxCalls int
}

// DefaultMaxToolCalls is chat.tools.max_calls' default.
const DefaultMaxToolCalls = 8

// Data locates orchard's data folder.
type Data struct {
	Dir string // holds checkpoints/, metrics.jsonl, autosave, logs/, state.json
}

// History configures the conversation history: every conversation is
// kept in <data.dir>/history, its text always, its cache for the most
// recent KeepKV conversations within KVBudget bytes.
type History struct {
	Enabled  bool
	KeepKV   int
	KVBudget int64
}

// Media bounds the pictures and clips orchard reads, and the encoder
// output it keeps for files sent again.
type Media struct {
	MaxFileSize     int64 // largest picture or clip file read
	MaxMegapixels   int   // largest picture, decoded
	MaxDecodeSize   int64 // memory one picture may take to decode
	MaxAudioSeconds int   // longest clip
	KeepEncoded     int64 // encoder output kept in memory; 0 keeps none
}

// Log configures the log file.
type Log struct {
	Debug bool
}

// Server configures orchard serve (and the chat attaching to it).
type Server struct {
	Listen string // TCP address of orchard serve
	APIKey string // required as a bearer token when set; never shown
	// MaxMediaSize is the largest picture or clip a request may carry.
	MaxMediaSize int64
	// AllowedHosts are host names the Host header may carry besides
	// loopback, this machine's name and the listen address (a name,
	// "*.example.com", or "*" for any).
	AllowedHosts []string
	// Origins are the browser origins that may call the server
	// ("http://localhost:3000", "https://*.example.com", or "*"); none
	// by default.
	Origins []string
	// StrictSampling refuses sampling parameters an argmax bundle cannot
	// honour (400) instead of decoding greedily and saying so.
	StrictSampling bool
	// Aliases are more names requests may give the served model.
	Aliases []string
}

// UI holds presentation choices.
type UI struct {
	Theme string // auto, dark or light
}

// Themes lists the accepted ui.theme values.
func Themes() []string { return []string{"auto", "dark", "light"} }

// Source returns where the value of key (as in the config file, e.g.
// "sampling.top_p" or "keys.quit") came from.
func (c *Config) Source(key string) Source { return c.sources[key] }

// CheckpointsDir is the folder of named checkpoints.
func (c *Config) CheckpointsDir() string { return filepath.Join(c.Data.Dir, "checkpoints") }

// HistoryDir is the folder of the conversation history.
func (c *Config) HistoryDir() string { return filepath.Join(c.Data.Dir, "history") }

// MetricsFile is the JSON-lines file of per-turn metrics.
func (c *Config) MetricsFile() string { return filepath.Join(c.Data.Dir, "metrics.jsonl") }

// AutosaveFile is where the current conversation is saved as it goes.
func (c *Config) AutosaveFile() string { return filepath.Join(c.Data.Dir, "autosave") }

// LogDir is the folder of orchard.log.
func (c *Config) LogDir() string { return filepath.Join(c.Data.Dir, "logs") }

// defaults returns the built-in configuration; every value's source is
// FromDefault. The data folder is "" when env names no home.
func defaults(env func(string) string) *Config {
	c := &Config{
		Model: Model{SearchDirs: []string{}, WarmUp: WarmAuto},
		Speculation: Speculation{
			Mode:        SpecAuto,
			DraftLength: 4, // the published runtime's default
			NgramMin:    2, // the engine's: a 2-gram is tried when no 3-gram matches
			NgramMax:    3, // the published drafters' longest
		},
		// Greedy, the only mode argmax bundles have; the rest take effect
		// only with a temperature, and then filter nothing until set.
		Sampling: Sampling{TopP: 1, RepetitionPenalty: 1},
		Chat:     Chat{ContextFull: ContextCompact, Tools: Tools{Allow: []string{}, MaxCalls: DefaultMaxToolCalls}},
		UI:       UI{Theme: "auto"},
		// Five E4B caches of a full 2K context take about 600 MB.
		History: History{Enabled: true, KeepKV: 5, KVBudget: 2 << 30},
		// The media package's limits; kept encodings as
		// engine.DefaultKeepEncoded (a hundred E2B pictures).
		Media: Media{MaxFileSize: media.DefaultMaxBytes, MaxMegapixels: media.DefaultMaxPixels / 1_000_000,
			MaxDecodeSize: media.DefaultMaxDecodeBytes, MaxAudioSeconds: media.DefaultMaxSeconds, KeepEncoded: 128 << 20},
		Server:  Server{Listen: "127.0.0.1:11535", MaxMediaSize: 32 << 20, AllowedHosts: []string{}, Origins: []string{}, Aliases: []string{}},
		MCP:     MCP{Servers: map[string]MCPServer{}},
		Keys:    map[string][]string{},
		sources: map[string]Source{},
	}
	if d, err := DataDir(env); err == nil {
		c.Data.Dir = d
	}
	return c
}
