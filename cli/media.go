package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/config"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine"
	"github.com/orchard-llm/orchard/media"
	"github.com/orchard-llm/orchard/tui"
)

// mediaFlags collects --image and --audio files, in order.
type mediaFlags []engine.MediaFile

// kind returns the flag.Value that adds files of one kind.
func (f *mediaFlags) kind(k string) flag.Value { return mediaFlag{f, k} }

func (f mediaFlags) hasAudio() bool {
	for _, m := range f {
		if m.Kind == engine.MediaAudio {
			return true
		}
	}
	return false
}

type mediaFlag struct {
	list *mediaFlags
	kind string
}

func (m mediaFlag) String() string { return "" }

func (m mediaFlag) Set(path string) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	*m.list = append(*m.list, engine.MediaFile{Kind: m.kind, Path: path})
	return nil
}

// attachmentLine is an attachment as one line: name, size, pixels or
// seconds, soft tokens.
func attachmentLine(a engine.Attachment) string {
	s := media.Summary{Kind: a.Kind, Name: a.Name, Bytes: a.Bytes, Width: a.Width, Height: a.Height, Seconds: a.Seconds, Tokens: a.Tokens()}
	return s.String()
}

const mediaUsage = `orchard media: run a bundle's image or audio encoder alone and write its tensors

usage:
  orchard media image --model DIR [--patches-out F.npy] [--soft-out F.npy] IMAGE
  orchard media audio --model DIR [--mel-out F.npy] [--mask-out F.npy] [--soft-out F.npy] AUDIO

The .npy files hold the encoder's input exactly as fed (fp16 patches
[1, grid², 768]; fp16 mel [1, 3000, 128] and mask [1, 3000]) and, with
--soft-out, the soft-token rows that enter the prompt (fp16 [rows, hidden];
the first rows of the audio encoder's output). A clip over 30 s is encoded
in segments: the files then hold one more leading axis, one entry per
segment. They are the tools for checking a Mac's output against the Swift
app's.
`

// runMedia is `orchard media image|audio`.
func runMedia(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, mediaUsage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	kind := args[0]
	if kind != engine.MediaImage && kind != engine.MediaAudio {
		fmt.Fprintf(stderr, "orchard media: unknown kind %q (want image or audio)\n\n%s", kind, mediaUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("orchard media "+kind, flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "bundle folder")
	demo := fs.Bool("demo", false, "use the demo bundle")
	compute := fs.String("compute", "", "compute units of the encoders (default: cpuAndGPU, or model.vision_units / model.audio_units)")
	soft := fs.String("soft-out", "", "write the soft-token rows that enter the prompt to this .npy `file`")
	var patches, mel, mask *string
	if kind == engine.MediaImage {
		patches = fs.String("patches-out", "", "write the encoder's input patches to this .npy `file`")
	} else {
		mel = fs.String("mel-out", "", "write the log-mel input to this .npy `file`")
		mask = fs.String("mask-out", "", "write the frame mask input to this .npy `file`")
	}
	flags := config.RegisterFlags(fs, "media.max_file_size", "media.max_megapixels", "media.max_decode_size", "media.max_audio_seconds")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return exitUsage
	}
	cfg, err := config.Load(config.Options{Env: os.Getenv, Flags: flags, Actions: tui.KeyNames()})
	if err != nil {
		return configError(stderr, "orchard media", err)
	}
	if len(pos) != 1 || (*model == "") == !*demo {
		fmt.Fprintf(stderr, "orchard media %s: give --model DIR (or --demo) and one %s file\n", kind, kind)
		return exitUsage
	}
	units, err := coreml.ParseComputeUnits(*compute)
	if err != nil {
		fmt.Fprintln(stderr, "orchard media: --compute:", err)
		return exitUsage
	}
	dir := *model
	if *demo {
		if dir, err = demoBundle("r1", stderr); err != nil {
			fmt.Fprintln(stderr, "orchard media:", err)
			return exitFailure
		}
	}
	b, err := bundle.Open(dir)
	if err != nil {
		fmt.Fprintln(stderr, "orchard media:", err)
		return exitUsage
	}
	rt, _, err := runtimeFor(b)
	if err != nil {
		fmt.Fprintln(stderr, "orchard media:", err)
		return exitFailure
	}
	// --compute places both encoders; else the config's (cpuAndGPU).
	eu := engine.EncoderUnits{Vision: cfg.Model.VisionUnits, Audio: cfg.Model.AudioUnits}
	if units != coreml.DefaultUnits {
		eu = engine.EncoderUnits{Vision: units, Audio: units}
	}
	enc := newEncoders(b, rt, eu, cfg)
	defer enc.Close()
	enc.KeepInputs = true
	res, err := enc.Encode(kind, pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "orchard media:", err)
		return exitCode(err)
	}
	H := b.Geometry.Hidden
	writes := []struct {
		path, name string
	}{{deref(patches), "patches"}, {deref(mel), "mel"}, {deref(mask), "mask"}}
	for _, w := range writes {
		if w.path == "" {
			continue
		}
		if err := writeInputs(w.path, w.name, res.Inputs); err != nil {
			fmt.Fprintln(stderr, "orchard media:", err)
			return exitFailure
		}
	}
	if *soft != "" {
		var rows []uint16
		for _, r := range res.Rows {
			rows = append(rows, r...)
		}
		if err := media.WriteNPYF16(*soft, []int{len(rows) / H, H}, rows); err != nil {
			fmt.Fprintln(stderr, "orchard media:", err)
			return exitFailure
		}
	}
	var shapes []string
	for _, name := range []string{"patches", "mel", "mask"} {
		if t := res.Inputs[0][name]; t != nil {
			shapes = append(shapes, fmt.Sprintf("%s %v %s", name, t.Shape, t.DType))
		}
	}
	a := res.Attachment
	fmt.Fprintf(stdout, "%s · input %s · soft rows [%d %d]", attachmentLine(a), strings.Join(shapes, ", "), a.Tokens(), H)
	if len(a.Spans) > 1 {
		fmt.Fprintf(stdout, " in %d segments %v", len(a.Spans), a.Spans)
	}
	fmt.Fprintf(stdout, " · preprocessing %.0f ms · encoder %.0f ms\n", res.Prep.Seconds()*1000, res.Took.Seconds()*1000)
	return exitOK
}

// writeInputs writes one named encoder input as fed: the tensor itself for
// one call, stacked along a new leading axis for several (segments).
func writeInputs(path, name string, calls []map[string]*coreml.Tensor) error {
	var shape []int
	var data []uint16
	for _, c := range calls {
		t := c[name]
		if t == nil {
			return fmt.Errorf("the encoder takes no %s input", name)
		}
		shape = t.Shape
		data = append(data, t.U16()...)
	}
	if len(calls) > 1 {
		shape = append([]int{len(calls)}, shape...)
	}
	return media.WriteNPYF16(path, shape, data)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
