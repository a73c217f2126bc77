package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Bundle is an opened, validated bundle folder.
type Bundle struct {
	Dir        string
	Family     Family
	Manifest   *Manifest // r1, v2
	R1         *R1Config
	V2         *V2Config
	S3         *S3Config
	ConfigFile string // the file that defines the graph geometry
	Geometry   Geometry
	Chunks     []Chunk // in execution order
	Heads      []Chunk // r1/v2 lm heads (lmhead, then the batched verify head)
	Encoders   []Chunk // vision and audio encoders present (encoders.go)
	EOS        []int
	Template   Template
	Tokenizer  string // tokenizer.json path
	Files      []File
	Identity   Identity
	// Notes are facts worth knowing that do not stop the bundle: a
	// function the config names but metadata.json does not list, a
	// metadata.json that says nothing about a chunk's outputs.
	Notes []string

	configBytes []byte
}

// Geometry is the family-independent shape of the model, as far as the
// bundle declares it (0 = not declared).
type Geometry struct {
	Layers        int      `json:"layers"`
	Hidden        int      `json:"hidden"`
	Heads         int      `json:"heads,omitempty"`
	KVHeads       int      `json:"kv_heads"`
	KVHeadsFull   int      `json:"kv_heads_full,omitempty"`
	HeadDim       int      `json:"head_dim"`
	GlobalHeadDim int      `json:"global_head_dim"`
	Context       int      `json:"context"`
	SlidingWindow int      `json:"sliding_window"`
	PLEDim        int      `json:"ple_dim"`
	Vocab         int      `json:"vocab,omitempty"`
	FirstShared   int      `json:"first_shared,omitempty"`
	LayerTypes    []string `json:"layer_types,omitempty"`
	ChunkBounds   [][2]int `json:"chunk_bounds,omitempty"`
	VerifyWidths  []int    `json:"verify_widths,omitempty"`
	MaxRows       int      `json:"max_rows,omitempty"` // v2 S upper bound; stateful3 prefill batch
}

// Chunk is one model folder of the chain.
type Chunk struct {
	Name      string   `json:"name"`
	Path      string   `json:"path"`
	Layers    [2]int   `json:"layers"`
	Functions []string `json:"functions,omitempty"`
}

// Template is how the bundle wants prompts wrapped; nil fields fall back
// to the Gemma 4 template.
type Template struct {
	PromptPrefix         *string `json:"prompt_prefix,omitempty"`
	PromptSuffix         *string `json:"prompt_suffix,omitempty"`
	AssistantSuffix      *string `json:"assistant_suffix,omitempty"`
	PromptSuffixThinking *string `json:"prompt_suffix_thinking,omitempty"`
}

// File is one checked file of the bundle.
type File struct {
	Path   string `json:"path"` // relative to Dir
	Role   string `json:"role"`
	Size   int64  `json:"size"`
	Want   int64  `json:"want,omitempty"` // expected size; 0 = any
	Status string `json:"status"`         // ok, missing, wrong size, dir
	Detail string `json:"detail,omitempty"`
}

// ValidationError lists every problem found; the Bundle is still returned
// so inspect can show the good files beside the bad.
type ValidationError struct {
	Dir      string
	Problems []string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("bundle %s is not usable:\n  %s", e.Dir, strings.Join(e.Problems, "\n  "))
}

// ErrNotBundle is wrapped when a folder holds no recognisable bundle.
var ErrNotBundle = errors.New("no model bundle found")

// Open finds the bundle at or under dir, detects its family, parses its
// configs and validates every file size. It loads no tables or weights.
func Open(dir string) (*Bundle, error) {
	root, err := Find(dir)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Dir: root}
	if err := b.detect(); err != nil {
		return nil, err
	}
	var v validator
	v.b = b
	switch b.Family {
	case R1:
		b.loadR1(&v)
		b.findEncoders()
	case V2:
		b.loadV2(&v)
		b.findEncoders()
	case Stateful3, Stateful3Logits:
		b.loadS3(&v)
	}
	b.checkLimits(&v)
	b.Identity = b.identity()
	if len(v.problems) > 0 {
		return b, &ValidationError{Dir: root, Problems: v.problems}
	}
	return b, nil
}

// Refine replaces the family and geometry with what the loaded models
// declare, adds the notes saying so and recomputes the identity. The engine
// calls it: files are hints, the loaded model is the contract. A geometry
// out of range or inconsistent is refused before anything is sized from
// it, as a config's would be, and the bundle stays as it was.
func (b *Bundle) Refine(f Family, g Geometry, notes []string) error {
	if problems := CheckGeometry(g); len(problems) > 0 {
		return fmt.Errorf("bundle %s: the loaded models declare %s", b.Dir, strings.Join(problems, "; "))
	}
	b.Family, b.Geometry = f, g
	b.Notes = append(b.Notes, notes...)
	b.Identity = b.identity()
	return nil
}

// Find returns the bundle folder at dir or below it: the folder itself, a
// subfolder such as gemma4_e2b_stateful_chunks/, or the newest snapshot of a
// Hugging Face cache repo (models--OWNER--NAME/snapshots/REV/).
func Find(dir string) (string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("bundle %s: %w", dir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("bundle %s: not a folder", dir)
	}
	if isBundleDir(dir) {
		return dir, nil
	}
	var found []string
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		if depth > 4 {
			return
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() && e.Type()&os.ModeSymlink == 0 {
				continue
			}
			name := e.Name()
			if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".mlmodelc") || strings.HasSuffix(name, ".mlpackage") {
				continue
			}
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				continue
			}
			if isBundleDir(p) {
				found = append(found, p)
				continue
			}
			walk(p, depth+1)
		}
	}
	walk(dir, 1)
	switch len(found) {
	case 0:
		return "", fmt.Errorf("bundle %s: %w (looked for manifest.json or model_config.json up to 4 folders deep)", dir, ErrNotBundle)
	case 1:
		return found[0], nil
	}
	// Several snapshots of one Hugging Face repo: take the newest.
	if snaps := snapshotsOnly(found); len(snaps) == len(found) {
		slices.SortFunc(snaps, func(a, b string) int { return modTime(b).Compare(modTime(a)) })
		return snaps[0], nil
	}
	return "", fmt.Errorf("bundle %s: several bundles below it, pick one:\n  %s", dir, strings.Join(found, "\n  "))
}

func isBundleDir(d string) bool {
	for _, f := range []string{"manifest.json", "model_config.json"} {
		if st, err := os.Stat(filepath.Join(d, f)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

func snapshotsOnly(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.Contains(filepath.ToSlash(p), "/snapshots/") {
			out = append(out, p)
		}
	}
	return out
}

// detect reads the family's defining file (okayuji doc §1.4, stateful doc §0).
func (b *Bundle) detect() error {
	mpath := filepath.Join(b.Dir, "manifest.json")
	if _, err := readConfigFile(mpath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("bundle %s: manifest.json: %s", b.Dir, regfileReason(err))
	}
	if data, err := readConfigFile(mpath); err == nil {
		var m Manifest
		extra, notes, err := decodeKeeping(data, &m)
		if err != nil {
			return fmt.Errorf("bundle %s: manifest.json: %w", b.Dir, err)
		}
		for _, n := range notes {
			b.Notes = append(b.Notes, "manifest.json: "+n)
		}
		m.Extra = extra
		b.Manifest = &m
		switch m.Format {
		case FormatR1:
			b.Family = R1
		case FormatV2:
			b.Family = V2
		case "":
			return fmt.Errorf("bundle %s: manifest.json has no \"format\"; orchard runs %q and %q bundles (stateless v1 chains are not supported)", b.Dir, FormatR1, FormatV2)
		default:
			return fmt.Errorf("bundle %s: manifest.json format %q is not one orchard knows (want %q or %q)", b.Dir, m.Format, FormatR1, FormatV2)
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "model_config.json")); err == nil {
		// A hint: chunk_3's metadata.json, when it describes the default
		// function, tells the logits variant (cardbud). The engine reads the
		// loaded model and corrects the family if the file was silent.
		b.Family = Stateful3
		if m, err := ReadModelMeta(chunkPath(b.Dir, "chunk_3")); err == nil {
			if sch := m.Schema(""); sch != nil {
				if _, ok := FindFeature(sch.Outputs, "logits"); ok {
					b.Family = Stateful3Logits
				}
			}
		}
		return nil
	}
	return fmt.Errorf("bundle %s: %w", b.Dir, ErrNotBundle)
}

// chunkPath resolves a chunk name to its folder: the name itself when it
// carries an extension, else name.mlmodelc, else name.mlpackage.
func chunkPath(dir, name string) string {
	if strings.HasSuffix(name, ".mlmodelc") || strings.HasSuffix(name, ".mlpackage") {
		return filepath.Join(dir, name)
	}
	c := filepath.Join(dir, name+".mlmodelc")
	if _, err := os.Stat(c); err != nil {
		if p := filepath.Join(dir, name+".mlpackage"); exists(p) {
			return p
		}
	}
	return c
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// ConfigBytes returns the raw bytes of the defining config (hashed into the identity).
func (b *Bundle) ConfigBytes() []byte { return b.configBytes }

// Name is the manifest name or the folder name.
func (b *Bundle) Name() string {
	if b.Manifest != nil && b.Manifest.Name != "" {
		return b.Manifest.Name
	}
	if b.S3 != nil && b.S3.ModelName != "" {
		return b.S3.ModelName
	}
	return filepath.Base(b.Dir)
}
