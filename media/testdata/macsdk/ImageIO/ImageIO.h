// Stand-in for <ImageIO/ImageIO.h>: see ../README.md.
#ifndef ORCHARD_STUB_IMAGEIO_H
#define ORCHARD_STUB_IMAGEIO_H

#include <CoreGraphics/CoreGraphics.h>

// CGImageSource.h
typedef struct CGImageSource *CGImageSourceRef;
typedef int32_t CGImageSourceStatus;
enum {
	kCGImageStatusUnexpectedEOF = -5,
	kCGImageStatusInvalidData = -4,
	kCGImageStatusUnknownType = -3,
	kCGImageStatusReadingHeader = -2,
	kCGImageStatusIncomplete = -1,
	kCGImageStatusComplete = 0
};
extern const CFStringRef kCGImageSourceShouldCache;
CGImageSourceRef CGImageSourceCreateWithData(CFDataRef data, CFDictionaryRef options);
CFStringRef CGImageSourceGetType(CGImageSourceRef isrc);
size_t CGImageSourceGetCount(CGImageSourceRef isrc);
size_t CGImageSourceGetPrimaryImageIndex(CGImageSourceRef isrc);
CGImageSourceStatus CGImageSourceGetStatusAtIndex(CGImageSourceRef isrc, size_t index);
CFDictionaryRef CGImageSourceCopyPropertiesAtIndex(CGImageSourceRef isrc, size_t index, CFDictionaryRef options);
CGImageRef CGImageSourceCreateImageAtIndex(CGImageSourceRef isrc, size_t index, CFDictionaryRef options);

// CGImageProperties.h
extern const CFStringRef kCGImagePropertyPixelWidth;
extern const CFStringRef kCGImagePropertyPixelHeight;
extern const CFStringRef kCGImagePropertyOrientation;

#endif
