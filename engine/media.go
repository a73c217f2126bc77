package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orchard-llm/orchard/bundle"
	"github.com/orchard-llm/orchard/coreml"
	"github.com/orchard-llm/orchard/engine/chain"
	"github.com/orchard-llm/orchard/f16"
	"github.com/orchard-llm/orchard/media"
	"github.com/orchard-llm/orchard/tokenizer"
)

// Media kinds a user message may carry.
const (
	MediaImage = "image"
	MediaAudio = "audio"
)

// MediaFile asks for a file to be attached to the message being sent: a
// path on this machine, or the file's bytes when they came without one
// (from an API client, or a screen attached from another machine).
type MediaFile struct {
	Kind string // MediaImage or MediaAudio
	Path string
	// Data, when set, is the file's content and Path is not read; Name
	// names it in chips and messages.
	Data []byte
	Name string

	enc *Encoded // encoded already (a request's files, before its turn)
}

// label names the file in messages.
func (f MediaFile) label() string {
	switch {
	case f.Name != "":
		return f.Name
	case f.Path != "":
		return f.Path
	}
	return "the attached " + f.Kind
}

// Attachment is a file attached to a user message: what the chat shows as
// a chip, what a checkpoint keeps (the file's identity, not its rows: the
// cache holds those), and the soft-token spans it occupies in the prompt.
type Attachment struct {
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Path      string  `json:"path,omitempty"` // as attached; it may be gone later
	SHA256    string  `json:"sha256"`
	Bytes     int64   `json:"bytes"`
	Format    string  `json:"format,omitempty"`
	Width     int     `json:"width,omitempty"`   // images, upright
	Height    int     `json:"height,omitempty"`  // images, upright
	Seconds   float64 `json:"seconds,omitempty"` // audio
	Spans     []int   `json:"spans"`             // soft rows of each span (a clip over 30 s has several)
	Thumbnail []byte  `json:"thumbnail,omitempty"`
}

// Tokens is the attachment's soft tokens in all.
func (a Attachment) Tokens() int {
	n := 0
	for _, s := range a.Spans {
		n += s
	}
	return n
}

// TranscriptionInstruction is the published app's text for a clip sent
// without words (multimodal doc §3.4).
const TranscriptionInstruction = "Transcribe the following speech segment in English into English text.\n\nFollow these specific instructions for formatting the answer:\n* Only output the transcription, with no newlines.\n* When transcribing numbers, write the digits, i.e. write 1.7 and not one point seven, and write 3 instead of three."

// ErrNoEncoder is wrapped when a bundle cannot take a kind of media.
var ErrNoEncoder = errors.New("this bundle has no encoder for it")

// FileError is a media file refused for what it holds (its format, its
// size, its length): the user's to fix, unlike an encoder that fails.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

func fileError(path string, err error) error {
	if err == nil {
		return nil
	}
	var le *media.LimitError
	if errors.As(err, &le) {
		if key := limitSetting(le.Option); key != "" {
			err = fmt.Errorf("%w; the %s setting raises the limit", err, key)
		}
	}
	return &FileError{Path: path, Err: err}
}

// limitSetting is the config key of a media limit (MediaLimits), by the
// media.Options field it sets; "" for one no setting raises.
func limitSetting(option string) string {
	switch option {
	case "MaxBytes":
		return "media.max_file_size"
	case "MaxPixels":
		return "media.max_megapixels"
	case "MaxDecodeBytes":
		return "media.max_decode_size"
	case "MaxSeconds":
		return "media.max_audio_seconds"
	}
	return ""
}

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

// CanAttach says whether the session's bundle takes a kind of media, and
// if not, why (NoEncoder) — also when it has no encoders at all.
func (s *Session) CanAttach(kind string) error {
	if s.Media == nil {
		return NoEncoder(kind, string(s.b.Family), s.b.Dir)
	}
	return s.Media.Can(kind)
}

// encodeMedia is Encoders.encodeFile, refusing a kind the bundle has no
// encoder for by name when it has none at all.
func (s *Session) encodeMedia(f MediaFile, starting func()) (*Encoded, error) {
	if s.Media == nil {
		return nil, s.CanAttach(f.Kind)
	}
	return s.Media.encodeFile(f, starting)
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

// DefaultKeepEncoded is the bytes of soft rows kept by sha256 for files
// sent again: about a hundred E2B pictures.
const DefaultKeepEncoded = 128 << 20

// KeepEncoded sets the bytes of soft rows kept for files sent again (0:
// DefaultKeepEncoded; negative: none); the least recently used go first.
func (e *Encoders) KeepEncoded(bytes int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keepBytes = bytes
	e.memo.trim(e.memoBudget())
	e.count(func(st *MediaStats) { st.Kept, st.KeptBytes = len(e.memo.m), e.memo.bytes })
}

func (e *Encoders) memoBudget() int64 {
	switch {
	case e.keepBytes == 0:
		return DefaultKeepEncoded
	case e.keepBytes < 0:
		return 0
	}
	return e.keepBytes
}

// encodedMemo keeps encoded files by kind and sha256, least recently
// used out first past a byte budget.
type encodedMemo struct {
	m     map[string]*memoEntry
	bytes int64
	clock uint64
}

type memoEntry struct {
	enc  *Encoded
	size int64
	used uint64
}

func (m *encodedMemo) get(kind, sha string) *Encoded {
	ent := m.m[kind+":"+sha]
	if ent == nil {
		return nil
	}
	m.clock++
	ent.used = m.clock
	return ent.enc
}

func (m *encodedMemo) put(kind string, enc *Encoded, budget int64) {
	var size int64
	for _, r := range enc.Rows {
		size += int64(2 * len(r))
	}
	if size > budget {
		return
	}
	if m.m == nil {
		m.m = map[string]*memoEntry{}
	}
	key := kind + ":" + enc.Attachment.SHA256
	if old := m.m[key]; old != nil {
		m.bytes -= old.size
	}
	m.clock++
	kept := &Encoded{Attachment: enc.Attachment, Rows: enc.Rows}
	m.m[key] = &memoEntry{enc: kept, size: size, used: m.clock}
	m.bytes += size
	m.trim(budget)
}

// trim drops the least recently used entries until the rows fit budget.
func (m *encodedMemo) trim(budget int64) {
	for m.bytes > budget && len(m.m) > 0 {
		var oldest string
		var at uint64
		for k, ent := range m.m {
			if oldest == "" || ent.used < at {
				oldest, at = k, ent.used
			}
		}
		m.bytes -= m.m[oldest].size
		delete(m.m, oldest)
	}
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

// spanRef names the media rows at a run of prompt positions: which file
// (by hash) and which of its spans.
type spanRef struct {
	Start  int    `json:"start"`
	Rows   int    `json:"rows"`
	SHA256 string `json:"sha256"`
	Span   int    `json:"span"`
}

// mediaFor converts a message's attachments into the template's spans, in
// the order the template lays them out (images, then audio).
func mediaFor(atts []Attachment) []tokenizer.Media {
	var out []tokenizer.Media
	for _, a := range atts {
		for _, n := range a.Spans {
			out = append(out, tokenizer.Media{Kind: tokenizer.MediaKind(a.Kind), Rows: n})
		}
	}
	return out
}

// layout lists a conversation's attachment spans in prompt order.
func layout(msgs []Message) []spanRef {
	var refs []spanRef
	for _, m := range msgs {
		for _, kind := range []string{MediaImage, MediaAudio} {
			for _, a := range m.Attachments {
				if a.Kind != kind {
					continue
				}
				for i, n := range a.Spans {
					refs = append(refs, spanRef{Rows: n, SHA256: a.SHA256, Span: i})
				}
			}
		}
	}
	return refs
}

// place gives each span of layout its start (where the template put its
// first placeholder) and checks it against ids: the kind's opening token,
// Rows placeholders, its closing token. Positions come from the layout
// (tokenizer.Template.EncodeSpans) or from the record of an earlier turn
// (tailState.Spans), never from looking for placeholder ids: a reply may
// hold one as the model's own token, and it stays that.
func (s *Session) place(layout []spanRef, ids, starts []int) ([]spanRef, error) {
	if len(starts) != len(layout) {
		return nil, fmt.Errorf("the prompt lays out %d media spans for %d attachment spans", len(starts), len(layout))
	}
	refs := slices.Clone(layout)
	for i := range refs {
		refs[i].Start = starts[i]
		if !s.holdsSpan(ids, refs[i]) {
			return nil, fmt.Errorf("the prompt's media span %d (%d tokens at %d) is not where the template put it", i, refs[i].Rows, refs[i].Start)
		}
	}
	return refs, nil
}

// holdsSpan reports whether ids hold a media span at r: an opening token,
// r.Rows placeholders of its kind, the closing token.
func (s *Session) holdsSpan(ids []int, r spanRef) bool {
	if r.Start < 1 || r.Rows <= 0 || r.Start+r.Rows >= len(ids) {
		return false
	}
	for _, k := range []tokenizer.MediaKind{tokenizer.MediaImage, tokenizer.MediaAudio} {
		mt, err := s.tok.MediaTokens(k)
		if err != nil || ids[r.Start] != mt.Placeholder {
			continue
		}
		if ids[r.Start-1] != mt.Open || ids[r.Start+r.Rows] != mt.Close {
			return false
		}
		for _, id := range ids[r.Start : r.Start+r.Rows] {
			if id != mt.Placeholder {
				return false
			}
		}
		return true
	}
	return false
}

// spansIn are the spans that begin within the first n ids (a span whose
// prefill was cut short included: the cache holds part of its rows).
func spansIn(spans []spanRef, n int) []spanRef {
	return slices.DeleteFunc(slices.Clone(spans), func(r spanRef) bool { return r.Start >= n })
}

// softSpans gathers the rows of the placed spans that reach past from (the
// reused prefix): from the session's cache of encoded files, else by
// encoding the file again if it is still there and unchanged (after a
// checkpoint load, say).
func (s *Session) softSpans(msgs []Message, refs []spanRef, from int) ([]chain.SoftSpan, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	byHash := map[string]Attachment{}
	for _, m := range msgs {
		for _, a := range m.Attachments {
			byHash[a.SHA256] = a
		}
	}
	var out []chain.SoftSpan
	for _, r := range refs {
		if r.Start+r.Rows <= from {
			continue
		}
		rows, ok := s.encoded[r.SHA256]
		if !ok {
			a := byHash[r.SHA256]
			enc, err := s.reencode(a)
			if err != nil {
				return nil, err
			}
			rows = enc.Rows
		}
		if r.Span >= len(rows) || len(rows[r.Span]) != r.Rows*s.b.Geometry.Hidden {
			return nil, fmt.Errorf("%s: the encoded rows do not fit the prompt's span", byHash[r.SHA256].Name)
		}
		out = append(out, chain.SoftSpan{Start: r.Start, Rows: rows[r.Span]})
	}
	return out, nil
}

// reencode encodes an attachment's file again, when the cache must be
// rebuilt and its rows are not in memory.
func (s *Session) reencode(a Attachment) (*Encoded, error) {
	if rows, ok := s.Media.lookup(a.Kind, a.SHA256); ok {
		if s.encoded == nil {
			s.encoded = map[string][][]uint16{}
		}
		s.encoded[a.SHA256] = rows
		return &Encoded{Attachment: a, Rows: rows, Reused: true}, nil
	}
	if a.Path == "" {
		return nil, fmt.Errorf("the %s %s must be encoded again to rebuild the cache, and its path is unknown: attach it again or /clear", a.Kind, a.Name)
	}
	if _, err := os.Stat(a.Path); err != nil {
		return nil, fmt.Errorf("the %s %s must be encoded again to rebuild the cache, but %s is gone: attach it again or /clear", a.Kind, a.Name, a.Path)
	}
	enc, err := s.Media.Encode(a.Kind, a.Path)
	if err != nil {
		return nil, err
	}
	if enc.Attachment.SHA256 != a.SHA256 {
		return nil, fmt.Errorf("%s has changed since it was attached (sha256 %.12s…, now %.12s…): attach it again or /clear", a.Path, a.SHA256, enc.Attachment.SHA256)
	}
	if s.encoded == nil {
		s.encoded = map[string][][]uint16{}
	}
	s.encoded[a.SHA256] = enc.Rows
	return enc, nil
}

// mediaPrefix cuts a reusable prefix at the first span whose rows differ
// from those the cache holds: placeholder ids alone do not tell two images
// apart.
func mediaPrefix(lcp int, held, now []spanRef) int {
	for _, n := range now {
		if n.Start >= lcp {
			break
		}
		same := slices.ContainsFunc(held, func(h spanRef) bool { return h == n })
		if !same {
			return n.Start
		}
	}
	return lcp
}

// userMessage is a message to send: a clip sent without words carries the
// published app's transcription instruction (multimodal doc §3.4).
func userMessage(text string, atts []Attachment) Message {
	m := Message{Role: "user", Content: text, Attachments: atts}
	if strings.TrimSpace(text) == "" && slices.ContainsFunc(atts, func(a Attachment) bool { return a.Kind == MediaAudio }) {
		m.Content = TranscriptionInstruction
	}
	return m
}

// attach encodes the files of a message being sent (or takes those
// encoded already) and keeps their rows for as long as the conversation
// may need to prefill them again.
func (s *Session) attach(files []MediaFile, emit func(Event)) ([]Attachment, error) {
	var atts []Attachment
	for _, f := range files {
		enc := f.enc
		if enc == nil {
			var err error
			enc, err = s.encodeMedia(f, func() {
				emit(Notice{Text: fmt.Sprintf("encoding %s (%s)…", filepath.Base(f.label()), f.Kind)})
			})
			if err != nil {
				return nil, err
			}
		}
		if s.encoded == nil {
			s.encoded = map[string][][]uint16{}
		}
		s.encoded[enc.Attachment.SHA256] = enc.Rows
		atts = append(atts, enc.Attachment)
	}
	return atts, nil
}
