package engine

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/f16"
	"github.com/orchard-llm/orchard/media"
)

// MediaLimits bound the files the encoders read; a zero field keeps the
// media package's default (media.DefaultMaxBytes and the rest).
type MediaLimits struct {
	MaxFileBytes   int64
	MaxPixels      int
	MaxDecodeBytes int64
	MaxSeconds     float64
}

// SetLimits bounds the files read from now on; call it before the first
// Encode, as it is not synchronised with one.
func (e *Encoders) SetLimits(l MediaLimits) {
	e.opts.MaxBytes, e.opts.MaxPixels, e.opts.MaxDecodeBytes, e.opts.MaxSeconds = l.MaxFileBytes, l.MaxPixels, l.MaxDecodeBytes, l.MaxSeconds
}

// thumbSide is the longest side of the thumbnail kept with an image.
const thumbSide = 256

// Encoders turns image and audio files into soft rows with a bundle's
// encoder models (vision_fp16, audio_fp16), loaded on first use and kept.
// Both run on the CPU and GPU unless placed otherwise (encoderunits.go).
type Encoders struct {
	b      *bundle.Bundle
	rt     coreml.Runtime
	units  coreml.ComputeUnits
	hidden int
	opts   media.Options
	// KeepInputs keeps each encoder call's inputs in Encoded.Inputs
	// (`orchard media` writes them out; the chat does not need them).
	KeepInputs bool

	mu     sync.Mutex
	vision *coreml.Lazy
	audio  *coreml.Lazy
	mel    *media.MelExtractor
	memo   encodedMemo
	// keepBytes bounds the memo (KeepEncoded).
	keepBytes int64

	statsMu sync.Mutex
	stats   MediaStats
}

// NewEncoders prepares the encoders of b, if it has any; units places the
// vision encoder (DefaultUnits: DefaultVisionUnits), the audio encoder
// runs on DefaultAudioUnits (SetUnits places both).
func NewEncoders(b *bundle.Bundle, rt coreml.Runtime, units coreml.ComputeUnits) *Encoders {
	u := EncoderUnits{Vision: units}.resolve()
	e := &Encoders{b: b, rt: rt, units: u.Vision, hidden: b.Geometry.Hidden, opts: media.DefaultOptions()}
	if c, ok := b.Encoder(bundle.VisionEncoder); ok {
		e.vision = coreml.NewLazy(rt, c.Path, coreml.LoadOptions{ComputeUnits: u.Vision})
	}
	if c, ok := b.Encoder(bundle.AudioEncoder); ok {
		e.audio = coreml.NewLazy(rt, c.Path, coreml.LoadOptions{ComputeUnits: u.Audio})
	}
	return e
}

// Kinds lists the media the bundle can take.
func (e *Encoders) Kinds() []string {
	var k []string
	if e != nil && e.vision != nil {
		k = append(k, MediaImage)
	}
	if e != nil && e.audio != nil {
		k = append(k, MediaAudio)
	}
	return k
}

// Can says whether the bundle takes a kind of media, and if not, why, in a
// sentence naming what is missing (NoEncoder).
func (e *Encoders) Can(kind string) error {
	var fam, dir string
	if e != nil {
		fam, dir = string(e.b.Family), e.b.Dir
	}
	switch kind {
	case MediaImage:
		if e == nil || e.vision == nil {
			return NoEncoder(kind, fam, dir)
		}
	case MediaAudio:
		if e == nil || e.audio == nil {
			return NoEncoder(kind, fam, dir)
		}
	default:
		return NoEncoder(kind, fam, dir)
	}
	return nil
}

// NoEncoder is the refusal of a kind of media by the bundle of a family in
// dir ("" names none), which has no encoder for it: a sentence naming
// what is missing, wrapping ErrNoEncoder (front ends that know the
// bundle's Media refuse early with it). An okayuji bundle (r1, v2) lacks
// the encoder's file next to its manifest; the stateful3 family ships no
// encoders at all, and orchard looks for none in it.
func NoEncoder(kind, family, dir string) error {
	var noun, needs, encoder, file, takers string
	switch kind {
	case MediaImage:
		noun, needs, encoder, file = "images", "images need", "an image encoder", bundle.VisionEncoder+".mlmodelc"
		takers = "the okayuji r1 and v2 bundles, which ship " + file
	case MediaAudio:
		noun, needs, encoder, file = "audio", "audio needs", "an audio encoder", bundle.AudioEncoder+".mlmodelc"
		takers = "the okayuji E2B bundle (r1), which ships " + file
	default:
		return fmt.Errorf("unknown media kind %q (want image or audio)", kind)
	}
	it := "this bundle"
	if dir != "" {
		it = dir
	}
	switch bundle.Family(family) {
	case bundle.Stateful3, bundle.Stateful3Logits:
		return fmt.Errorf("%s %s, and %s bundles ship none (%s is one): orchard takes %s with %s: %w",
			needs, encoder, family, it, noun, takers, ErrNoEncoder)
	}
	why := ""
	if kind == MediaAudio {
		why = " (only the E2B bundle ships one)"
	}
	return fmt.Errorf("%s %s next to the bundle's manifest, and %s has none%s: %w", needs, file, it, why, ErrNoEncoder)
}

// Close releases the loaded encoders.
func (e *Encoders) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.memo = encodedMemo{}
	var errs []error
	for _, l := range []*coreml.Lazy{e.vision, e.audio} {
		if l != nil {
			errs = append(errs, l.Close())
		}
	}
	return errors.Join(errs...)
}

// Encoded is one file's attachment and its soft rows, one slice per span
// (fp16, rows × hidden).
type Encoded struct {
	Attachment Attachment
	Rows       [][]uint16
	Prep       time.Duration // decoding and preprocessing
	Took       time.Duration // encoder time
	Reused     bool          // the rows were kept from an earlier encoding of the same bytes
	// Inputs are the encoder's inputs exactly as fed, per call (with
	// Encoders.KeepInputs): "patches", or "mel" and "mask".
	Inputs []map[string]*coreml.Tensor
}

// Encode preprocesses a file and runs its encoder.
func (e *Encoders) Encode(kind, path string) (*Encoded, error) {
	return e.EncodeFile(MediaFile{Kind: kind, Path: path})
}

// EncodeFile encodes a file from its path or its bytes. Files are known
// by their sha256: bytes encoded before (under any name) come back from
// the encoded rows kept, without preprocessing or running the encoder
// again (Encoded.Reused), so a client that resends a conversation each
// request, or a cache rebuilt later, does not pay for its pictures twice.
func (e *Encoders) EncodeFile(f MediaFile) (*Encoded, error) {
	return e.encodeFile(f, nil)
}

// encodeFile is EncodeFile; starting is called when the file must really
// be encoded (not when its rows are kept).
func (e *Encoders) encodeFile(f MediaFile, starting func()) (_ *Encoded, err error) {
	// A file may come from any client of orchard serve: a bug that one
	// damaged file trips in a decoder fails that file, not the process.
	defer func() {
		if r := recover(); r != nil {
			err = fileError(f.label(), fmt.Errorf("%s %s: orchard could not read it (%v); please report the file", f.Kind, f.label(), r))
		}
	}()
	if err := e.Can(f.Kind); err != nil {
		return nil, err
	}
	var src media.Source
	if f.Data != nil {
		src = media.BytesSource(f.label(), f.Data)
	} else {
		if src, err = media.ReadSource(f.Path, e.opts); err != nil {
			return nil, fileError(f.label(), fmt.Errorf("%s %s: %w", f.Kind, f.Path, err))
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.KeepInputs {
		if enc := e.memo.get(f.Kind, src.Info.SHA256); enc != nil {
			e.count(func(st *MediaStats) { st.Reused++ })
			return asAttached(enc, f, src), nil
		}
	}
	if starting != nil {
		starting()
	}
	var enc *Encoded
	if f.Kind == MediaImage {
		enc, err = e.image(src)
	} else {
		enc, err = e.clip(src)
	}
	if err != nil {
		return nil, err
	}
	enc.Attachment.Path = f.Path
	if !e.KeepInputs {
		e.memo.put(f.Kind, enc, e.memoBudget())
	}
	e.count(func(st *MediaStats) { st.Encoded++; st.Kept, st.KeptBytes = len(e.memo.m), e.memo.bytes })
	return enc, nil
}

// asAttached is a kept encoding given to another file with the same bytes:
// the rows and what the bytes determine are shared, the name and path are
// the file's.
func asAttached(kept *Encoded, f MediaFile, src media.Source) *Encoded {
	a := kept.Attachment
	a.Name, a.Path, a.Spans = src.Info.Name, f.Path, slices.Clone(a.Spans)
	return &Encoded{Attachment: a, Rows: kept.Rows, Reused: true}
}

// lookup returns the kept rows of a file by its hash, if they are kept.
func (e *Encoders) lookup(kind, sha string) ([][]uint16, bool) {
	if e == nil {
		return nil, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if enc := e.memo.get(kind, sha); enc != nil {
		e.count(func(st *MediaStats) { st.Reused++ })
		return enc.Rows, true
	}
	return nil, false
}

// MediaStats are the figures of the encoders: files encoded, files whose
// rows were kept from an earlier encoding, and what is kept.
type MediaStats struct {
	Encoded   int   // files preprocessed and run through an encoder
	Reused    int   // files served from the kept rows instead
	Kept      int   // files whose rows are kept
	KeptBytes int64 // their rows' bytes
}

// Stats reports the encoders' figures.
func (e *Encoders) Stats() MediaStats {
	if e == nil {
		return MediaStats{}
	}
	e.statsMu.Lock()
	defer e.statsMu.Unlock()
	return e.stats
}

func (e *Encoders) count(f func(*MediaStats)) {
	e.statsMu.Lock()
	f(&e.stats)
	e.statsMu.Unlock()
}

// model loads an encoder and checks the width of its soft rows against the
// text model's hidden size before it ever runs (multimodal doc §4).
func (e *Encoders) model(l *coreml.Lazy, name string, rank int) (coreml.Model, coreml.TensorSpec, error) {
	m, err := l.Model()
	if err != nil {
		return nil, coreml.TensorSpec{}, fmt.Errorf("%s: %w", name, err)
	}
	out, ok := m.Description().Outputs["soft_tokens"]
	if !ok {
		return nil, out, fmt.Errorf("%s declares no soft_tokens output", name)
	}
	if len(out.Shape) != rank {
		return nil, out, fmt.Errorf("%s: soft_tokens has shape %v, want rank %d", name, out.Shape, rank)
	}
	if w := out.Shape[rank-1]; w != e.hidden {
		return nil, out, fmt.Errorf("the %s encoder emits %d-wide soft tokens but this bundle's hidden size is %d — %s does not belong to this model", name, w, e.hidden, name)
	}
	if out.DType != coreml.Float16 && out.DType != coreml.Float32 {
		return nil, out, fmt.Errorf("%s: soft_tokens are %s; orchard reads fp16 or fp32", name, out.DType)
	}
	return m, out, nil
}

func (e *Encoders) image(src media.Source) (*Encoded, error) {
	const name = bundle.VisionEncoder
	m, _, err := e.model(e.vision, name, 2)
	if err != nil {
		return nil, err
	}
	in, ok := m.Description().Inputs["patches"]
	if !ok {
		return nil, fmt.Errorf("%s declares no patches input", name)
	}
	grid, err := media.VisionGrid(name+".mlmodelc", in.Shape)
	if err != nil {
		return nil, err
	}
	prep := time.Now()
	path := src.Info.Path
	img, err := media.DecodeImage(src, e.opts)
	if err != nil {
		return nil, fileError(path, err)
	}
	patches, err := img.Patches(grid)
	if err != nil {
		return nil, fileError(path, err)
	}
	start := time.Now()
	t := e.rt.Alloc(in.Shape, coreml.Float16)
	copy(t.U16(), patches)
	var kept []map[string]*coreml.Tensor
	if e.KeepInputs {
		kept = append(kept, map[string]*coreml.Tensor{"patches": cloneTensor(t)})
	}
	out, err := m.Predict(coreml.Features{"patches": t}, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rows, err := softRows(out["soft_tokens"], e.hidden, -1)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	thumb, _ := img.Thumbnail(thumbSide)
	sum := img.Summary(len(rows) / e.hidden)
	a := Attachment{Kind: MediaImage, Name: sum.Name, SHA256: sum.SHA256, Bytes: sum.Bytes, Format: sum.Format,
		Width: sum.Width, Height: sum.Height, Spans: []int{len(rows) / e.hidden}, Thumbnail: thumb}
	return &Encoded{Attachment: a, Rows: [][]uint16{rows}, Prep: start.Sub(prep), Took: time.Since(start), Inputs: kept}, nil
}

func cloneTensor(t *coreml.Tensor) *coreml.Tensor {
	return &coreml.Tensor{Shape: slices.Clone(t.Shape), DType: t.DType, Data: slices.Clone(t.Data)}
}

func (e *Encoders) clip(src media.Source) (*Encoded, error) {
	const name = bundle.AudioEncoder
	m, _, err := e.model(e.audio, name, 3)
	if err != nil {
		return nil, err
	}
	d := m.Description()
	melSpec, mok := d.Inputs["mel"]
	maskSpec, kok := d.Inputs["mask"]
	if !mok || !kok {
		return nil, fmt.Errorf("%s declares no mel and mask inputs", name)
	}
	if !slices.Equal(melSpec.Shape, []int{1, media.MelFrames, media.MelBins}) || !slices.Equal(maskSpec.Shape, []int{1, media.MelFrames}) {
		return nil, fmt.Errorf("%s takes mel %v and mask %v; orchard feeds [1 %d %d] and [1 %d] (30 s)", name, melSpec.Shape, maskSpec.Shape, media.MelFrames, media.MelBins, media.MelFrames)
	}
	prep := time.Now()
	path := src.Info.Path
	clip, err := media.DecodeAudio(src, e.opts)
	if err != nil {
		return nil, fileError(path, err)
	}
	if e.mel == nil {
		e.mel = media.NewMelExtractor()
	}
	segs := clip.Split() // ≤ 30 s each; a longer clip becomes several spans, never a cut
	enc := &Encoded{}
	melT := e.rt.Alloc(melSpec.Shape, coreml.Float16)
	maskT := e.rt.Alloc(maskSpec.Shape, coreml.Float16)
	for _, sg := range segs {
		in, err := e.mel.Compute(sg.Samples)
		if err != nil {
			return nil, fileError(path, fmt.Errorf("%s: %w", clip.Info.Name, err))
		}
		copy(melT.U16(), in.Mel)
		copy(maskT.U16(), in.Mask)
		if e.KeepInputs {
			enc.Inputs = append(enc.Inputs, map[string]*coreml.Tensor{"mel": cloneTensor(melT), "mask": cloneTensor(maskT)})
		}
		t1 := time.Now()
		out, err := m.Predict(coreml.Features{"mel": melT, "mask": maskT}, nil, nil)
		enc.Took += time.Since(t1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		rows, err := softRows(out["soft_tokens"], e.hidden, in.Tokens)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		enc.Rows = append(enc.Rows, rows)
		enc.Attachment.Spans = append(enc.Attachment.Spans, in.Tokens)
	}
	enc.Prep = time.Since(prep) - enc.Took // decoding, resampling and the log-mels
	sum := clip.Summary()
	a := &enc.Attachment
	a.Kind, a.Name, a.SHA256, a.Bytes, a.Format, a.Seconds = MediaAudio, sum.Name, sum.SHA256, sum.Bytes, sum.Format, sum.Seconds
	return enc, nil
}

// softRows copies the first want rows (all when want < 0) of an encoder's
// soft_tokens output, fp16 or fp32, as fp16, honouring the row count the
// output declares.
func softRows(t *coreml.Tensor, hidden, want int) ([]uint16, error) {
	if t == nil || t.InBackend() {
		return nil, errors.New("no soft_tokens output")
	}
	if len(t.Shape) == 0 || t.Shape[len(t.Shape)-1] != hidden {
		return nil, fmt.Errorf("soft_tokens shape %v, rows of %d wanted", t.Shape, hidden)
	}
	have := t.Len() / hidden
	if want < 0 {
		want = have
	}
	if want == 0 || want > have {
		return nil, fmt.Errorf("%d soft tokens wanted, the encoder gave %d", want, have)
	}
	out := make([]uint16, want*hidden)
	if t.DType == coreml.Float16 {
		copy(out, t.U16())
		return out, nil
	}
	for i := range out {
		out[i] = f16.FromF32(t.F32(i))
	}
	return out, nil
}
