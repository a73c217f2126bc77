//go:build darwin && cgo

package media

// The macOS decoders behind Options.Images and Options.Audio: ImageIO for
// HEIC, HEIF, AVIF and the other pictures the pure-Go decoders do not read;
// AudioToolbox's ExtAudioFile (what AVAudioFile is built on) for m4a, aac,
// caf, aiff and the rest of what AVFoundation reads. The C below only
// talks to the frameworks; the budget, orientation and channel averaging
// are decodeSystemImage and decodeSystemAudio (system.go), tested on every
// platform. C never keeps a Go pointer past the call it was given to: the
// file's bytes are copied into a CFData, and the pixel and sample buffers
// are released by the same call that fills them.

/*
#cgo LDFLAGS: -framework CoreFoundation -framework CoreGraphics -framework ImageIO -framework AudioToolbox
#include <stdlib.h>
#include <string.h>
#include <CoreFoundation/CoreFoundation.h>
#include <CoreGraphics/CoreGraphics.h>
#include <ImageIO/ImageIO.h>
#include <AudioToolbox/AudioToolbox.h>

// Results of the orchard_image_* helpers.
enum {
	ORCHARD_IMAGE_OK = 0,
	ORCHARD_IMAGE_UNSUPPORTED = 1, // ImageIO does not read the data
	ORCHARD_IMAGE_STATUS = 2,      // the image is not complete: see status
	ORCHARD_IMAGE_NO_SIZE = 3,     // the properties hold no pixel size
	ORCHARD_IMAGE_NO_IMAGE = 4,    // CGImageSourceCreateImageAtIndex failed
	ORCHARD_IMAGE_NO_MEMORY = 5,   // a CoreFoundation object could not be made
	ORCHARD_IMAGE_NO_CONTEXT = 6,  // CGBitmapContextCreate failed
};

// orchard_image is one picture being decoded. orchard_image_close releases
// what the other helpers made, whatever they returned.
typedef struct {
	CGImageSourceRef source;
	CGImageRef image;
	size_t index;     // the primary image
	long width;       // as the properties declare
	long height;
	int orientation;  // kCGImagePropertyOrientation, 1 when absent
	int status;       // the CGImageSourceStatus, for ORCHARD_IMAGE_STATUS
} orchard_image;

// orchard_no_cache is the options dictionary asking ImageIO not to keep a
// decoded copy: the pixels are drawn once, into orchard's buffer.
static CFDictionaryRef orchard_no_cache(void) {
	const void *keys[1] = {kCGImageSourceShouldCache};
	const void *values[1] = {kCFBooleanFalse};
	return CFDictionaryCreate(kCFAllocatorDefault, keys, values, 1, &kCFTypeDictionaryKeyCallBacks, &kCFTypeDictionaryValueCallBacks);
}

// orchard_cfnumber reads an integer property; 0 when it is absent or not
// an integer.
static int orchard_cfnumber(CFDictionaryRef dict, CFStringRef key, long long *out) {
	CFTypeRef v = CFDictionaryGetValue(dict, key);
	if (v == NULL || CFGetTypeID(v) != CFNumberGetTypeID()) {
		return 0;
	}
	return CFNumberGetValue((CFNumberRef)v, kCFNumberLongLongType, out) ? 1 : 0;
}

// orchard_image_open reads the header of the primary image of n bytes at
// data (copied: ImageIO keeps its own CFData) without decoding pixels.
static int orchard_image_open(const void *data, long n, orchard_image *im) {
	memset(im, 0, sizeof *im);
	im->orientation = 1;
	CFDataRef bytes = CFDataCreate(kCFAllocatorDefault, (const UInt8 *)data, (CFIndex)n);
	if (bytes == NULL) {
		return ORCHARD_IMAGE_NO_MEMORY;
	}
	im->source = CGImageSourceCreateWithData(bytes, NULL);
	CFRelease(bytes); // the source holds its own reference
	if (im->source == NULL) {
		return ORCHARD_IMAGE_UNSUPPORTED;
	}
	if (CGImageSourceGetType(im->source) == NULL || CGImageSourceGetCount(im->source) == 0) {
		return ORCHARD_IMAGE_UNSUPPORTED;
	}
	im->index = CGImageSourceGetPrimaryImageIndex(im->source);
	CGImageSourceStatus status = CGImageSourceGetStatusAtIndex(im->source, im->index);
	if (status != kCGImageStatusComplete) {
		im->status = (int)status;
		return ORCHARD_IMAGE_STATUS;
	}
	CFDictionaryRef opts = orchard_no_cache();
	if (opts == NULL) {
		return ORCHARD_IMAGE_NO_MEMORY;
	}
	CFDictionaryRef props = CGImageSourceCopyPropertiesAtIndex(im->source, im->index, opts);
	CFRelease(opts);
	if (props == NULL) {
		return ORCHARD_IMAGE_NO_SIZE;
	}
	long long w = 0, h = 0, orientation = 1;
	int sized = orchard_cfnumber(props, kCGImagePropertyPixelWidth, &w) && orchard_cfnumber(props, kCGImagePropertyPixelHeight, &h);
	if (!orchard_cfnumber(props, kCGImagePropertyOrientation, &orientation) || orientation < 1 || orientation > 8) {
		orientation = 1;
	}
	CFRelease(props);
	if (!sized) {
		return ORCHARD_IMAGE_NO_SIZE;
	}
	im->width = (long)w;
	im->height = (long)h;
	im->orientation = (int)orientation;
	return ORCHARD_IMAGE_OK;
}

// orchard_image_create makes the CGImage (ImageIO decodes when it is
// drawn) and reports its size.
static int orchard_image_create(orchard_image *im, long *w, long *h) {
	CFDictionaryRef opts = orchard_no_cache();
	if (opts == NULL) {
		return ORCHARD_IMAGE_NO_MEMORY;
	}
	im->image = CGImageSourceCreateImageAtIndex(im->source, im->index, opts);
	CFRelease(opts);
	if (im->image == NULL) {
		return ORCHARD_IMAGE_NO_IMAGE;
	}
	*w = (long)CGImageGetWidth(im->image);
	*h = (long)CGImageGetHeight(im->image);
	return ORCHARD_IMAGE_OK;
}

// orchard_image_draw decodes the image into pix, w×h 8-bit RGBA in sRGB
// (colour-matched from the file's profile), premultiplied over the zeroed
// buffer, top row first. The context using pix is released before return.
static int orchard_image_draw(orchard_image *im, void *pix, long w, long h) {
	CGColorSpaceRef srgb = CGColorSpaceCreateWithName(kCGColorSpaceSRGB);
	if (srgb == NULL) {
		return ORCHARD_IMAGE_NO_MEMORY;
	}
	CGContextRef ctx = CGBitmapContextCreate(pix, (size_t)w, (size_t)h, 8, (size_t)w * 4, srgb,
		(CGBitmapInfo)kCGImageAlphaPremultipliedLast | kCGBitmapByteOrder32Big);
	CGColorSpaceRelease(srgb);
	if (ctx == NULL) {
		return ORCHARD_IMAGE_NO_CONTEXT;
	}
	CGContextDrawImage(ctx, CGRectMake(0, 0, (CGFloat)w, (CGFloat)h), im->image);
	CGContextRelease(ctx);
	return ORCHARD_IMAGE_OK;
}

static void orchard_image_close(orchard_image *im) {
	if (im->image != NULL) {
		CGImageRelease(im->image);
		im->image = NULL;
	}
	if (im->source != NULL) {
		CFRelease(im->source);
		im->source = NULL;
	}
}

// orchard_audio is one audio file being decoded.
typedef struct {
	ExtAudioFileRef file;
	double rate;
	int channels;
	unsigned int file_type;   // AudioFileTypeID of the container, 0 if unknown
	unsigned int data_format; // AudioFormatID of the stored samples
	long long frames;         // the length in frames (estimated for some formats), 0 if unknown
} orchard_audio;

// orchard_audio_open opens the file at path and sets it to give float32
// interleaved frames at the file's own rate and channel count. It returns
// an OSStatus and names the failing call in *call.
static int orchard_audio_open(const char *path, orchard_audio *a, const char **call) {
	memset(a, 0, sizeof *a);
	*call = "CFURLCreateFromFileSystemRepresentation";
	CFURLRef url = CFURLCreateFromFileSystemRepresentation(kCFAllocatorDefault, (const UInt8 *)path, (CFIndex)strlen(path), false);
	if (url == NULL) {
		return kAudio_MemFullError;
	}
	*call = "ExtAudioFileOpenURL";
	OSStatus st = ExtAudioFileOpenURL(url, &a->file);
	CFRelease(url);
	if (st != noErr) {
		a->file = NULL;
		return (int)st;
	}
	AudioStreamBasicDescription in;
	memset(&in, 0, sizeof in);
	UInt32 size = sizeof in;
	*call = "ExtAudioFileGetProperty(kExtAudioFileProperty_FileDataFormat)";
	st = ExtAudioFileGetProperty(a->file, kExtAudioFileProperty_FileDataFormat, &size, &in);
	if (st != noErr) {
		return (int)st;
	}
	a->rate = in.mSampleRate;
	a->channels = (int)in.mChannelsPerFrame;
	a->data_format = in.mFormatID;
	if (in.mChannelsPerFrame == 0 || !(in.mSampleRate > 0)) {
		return noErr; // refused, with the values, by the caller
	}
	SInt64 frames = 0;
	size = sizeof frames;
	if (ExtAudioFileGetProperty(a->file, kExtAudioFileProperty_FileLengthFrames, &size, &frames) == noErr && frames > 0) {
		a->frames = frames;
	}
	AudioFileID file = NULL; // owned by the ExtAudioFile
	size = sizeof file;
	if (ExtAudioFileGetProperty(a->file, kExtAudioFileProperty_AudioFile, &size, &file) == noErr && file != NULL) {
		UInt32 type = 0;
		size = sizeof type;
		if (AudioFileGetProperty(file, kAudioFilePropertyFileFormat, &size, &type) == noErr) {
			a->file_type = type;
		}
	}
	AudioStreamBasicDescription out;
	memset(&out, 0, sizeof out);
	out.mSampleRate = in.mSampleRate;
	out.mFormatID = kAudioFormatLinearPCM;
	out.mFormatFlags = kAudioFormatFlagsNativeFloatPacked;
	out.mChannelsPerFrame = in.mChannelsPerFrame;
	out.mBitsPerChannel = 32;
	out.mFramesPerPacket = 1;
	out.mBytesPerFrame = 4 * in.mChannelsPerFrame;
	out.mBytesPerPacket = out.mBytesPerFrame;
	*call = "ExtAudioFileSetProperty(kExtAudioFileProperty_ClientDataFormat)";
	st = ExtAudioFileSetProperty(a->file, kExtAudioFileProperty_ClientDataFormat, (UInt32)sizeof out, &out);
	return (int)st;
}

// orchard_audio_read decodes up to frames frames into buf (frames ×
// channels floats) and reports how many it read, 0 at the end.
static int orchard_audio_read(orchard_audio *a, float *buf, unsigned int frames, unsigned int *got) {
	AudioBufferList list;
	list.mNumberBuffers = 1;
	list.mBuffers[0].mNumberChannels = (UInt32)a->channels;
	list.mBuffers[0].mDataByteSize = (UInt32)(frames * 4u * (unsigned int)a->channels);
	list.mBuffers[0].mData = buf;
	UInt32 n = frames;
	OSStatus st = ExtAudioFileRead(a->file, &n, &list);
	*got = st == noErr ? n : 0;
	return (int)st;
}

static void orchard_audio_close(orchard_audio *a) {
	if (a->file != NULL) {
		ExtAudioFileDispose(a->file);
		a->file = NULL;
	}
}
*/
import "C"

import (
	"errors"
	"fmt"
	"image"
	"os"
	"unsafe"
)

// platformDecoders are ImageIO and AudioToolbox.
func platformDecoders() (ImageDecoder, AudioDecoder) { return imageIO{}, audioToolbox{} }

// imageIO decodes pictures with ImageIO: the primary image (the first
// frame of an animation), colour-matched to sRGB, turned upright by its
// orientation property as package media turns JPEGs.
type imageIO struct{}

func (imageIO) DecodeImage(path string, data []byte, maxPixels int) (image.Image, error) {
	if len(data) == 0 {
		return nil, errors.New("the file is empty")
	}
	var im C.orchard_image
	defer C.orchard_image_close(&im)
	if rc := C.orchard_image_open(unsafe.Pointer(&data[0]), C.long(len(data)), &im); rc != C.ORCHARD_IMAGE_OK {
		return nil, imageIOError(rc, &im)
	}
	m, err := decodeSystemImage(cgImage{&im}, maxPixels)
	if err != nil {
		return nil, fmt.Errorf("ImageIO: %w", err)
	}
	return m, nil
}

// cgImage is the systemImage of an orchard_image.
type cgImage struct{ im *C.orchard_image }

func (c cgImage) Header() (w, h, orientation int) {
	return int(c.im.width), int(c.im.height), int(c.im.orientation)
}

func (c cgImage) Create() (w, h int, err error) {
	var cw, ch C.long
	if rc := C.orchard_image_create(c.im, &cw, &ch); rc != C.ORCHARD_IMAGE_OK {
		return 0, 0, imageIOError(rc, c.im)
	}
	return int(cw), int(ch), nil
}

func (c cgImage) Draw(pix []byte, w, h int) error {
	if w <= 0 || h <= 0 || len(pix) != 4*w*h {
		return fmt.Errorf("a %d-byte buffer for %d×%d pixels", len(pix), w, h)
	}
	if rc := C.orchard_image_draw(c.im, unsafe.Pointer(&pix[0]), C.long(w), C.long(h)); rc != C.ORCHARD_IMAGE_OK {
		return imageIOError(rc, c.im)
	}
	return nil
}

// imageIOError explains an orchard_image_* result.
func imageIOError(rc C.int, im *C.orchard_image) error {
	switch rc {
	case C.ORCHARD_IMAGE_UNSUPPORTED:
		return fmt.Errorf("%w: ImageIO does not read it", ErrUnsupportedFormat)
	case C.ORCHARD_IMAGE_STATUS:
		return fmt.Errorf("ImageIO: %s", imageStatusText(int(im.status)))
	case C.ORCHARD_IMAGE_NO_SIZE:
		return errors.New("ImageIO reports no pixel size for it")
	case C.ORCHARD_IMAGE_NO_IMAGE:
		return errors.New("ImageIO could not decode it (CGImageSourceCreateImageAtIndex failed)")
	case C.ORCHARD_IMAGE_NO_MEMORY:
		return errors.New("ImageIO: out of memory")
	case C.ORCHARD_IMAGE_NO_CONTEXT:
		return errors.New("CoreGraphics could not make an RGBA bitmap for it (CGBitmapContextCreate failed)")
	}
	return fmt.Errorf("ImageIO: result %d", int(rc))
}

// audioToolbox decodes audio with ExtAudioFile, which reads what
// AVAudioFile reads (it is built on it): m4a, aac, caf, aiff, mp3, wav…
type audioToolbox struct{}

func (audioToolbox) DecodeAudio(path string, data []byte, maxSeconds float64) (*PCM, error) {
	if len(data) == 0 {
		return nil, errors.New("the file is empty")
	}
	// ExtAudioFile opens URLs. It gets a private copy of the bytes that
	// were read and hashed, not path, which may have changed since.
	tmp, err := writeTempAudio(path, data)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	cpath := C.CString(tmp)
	defer C.free(unsafe.Pointer(cpath))
	var a C.orchard_audio
	defer C.orchard_audio_close(&a)
	var call *C.char
	if st := C.orchard_audio_open(cpath, &a, &call); st != 0 {
		return nil, audioStatusError(C.GoString(call), int32(st))
	}
	return decodeSystemAudio(extAudio{&a}, maxSeconds)
}

// extAudio is the systemAudio of an orchard_audio.
type extAudio struct{ a *C.orchard_audio }

func (e extAudio) Format() (rate float64, channels int, frames int64, name string) {
	return float64(e.a.rate), int(e.a.channels), int64(e.a.frames), audioFormatName(uint32(e.a.file_type), uint32(e.a.data_format))
}

func (e extAudio) Read(buf []float32) (int, error) {
	ch := int(e.a.channels)
	if ch < 1 || len(buf) < ch {
		return 0, fmt.Errorf("a %d-sample buffer for %d channels", len(buf), ch)
	}
	var got C.uint
	if st := C.orchard_audio_read(e.a, (*C.float)(unsafe.Pointer(&buf[0])), C.uint(len(buf)/ch), &got); st != 0 {
		return 0, audioStatusError("ExtAudioFileRead", int32(st))
	}
	return int(got), nil
}
