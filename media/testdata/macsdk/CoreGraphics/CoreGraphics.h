// Stand-in for <CoreGraphics/CoreGraphics.h>: see ../README.md.
#ifndef ORCHARD_STUB_COREGRAPHICS_H
#define ORCHARD_STUB_COREGRAPHICS_H

#include <CoreFoundation/CoreFoundation.h>

// CGBase.h, CGGeometry.h (CGRectMake is an inline function there)
typedef double CGFloat;
typedef struct CGPoint { CGFloat x, y; } CGPoint;
typedef struct CGSize { CGFloat width, height; } CGSize;
typedef struct CGRect { CGPoint origin; CGSize size; } CGRect;
static inline CGRect CGRectMake(CGFloat x, CGFloat y, CGFloat width, CGFloat height) {
	CGRect r = {{x, y}, {width, height}};
	return r;
}

// CGImage.h
typedef struct CGImage *CGImageRef;
typedef uint32_t CGImageAlphaInfo;
enum { kCGImageAlphaPremultipliedLast = 1 };
typedef uint32_t CGBitmapInfo;
enum { kCGBitmapByteOrder32Big = (4 << 12) };
size_t CGImageGetWidth(CGImageRef image);
size_t CGImageGetHeight(CGImageRef image);
void CGImageRelease(CGImageRef image);

// CGColorSpace.h
typedef struct CGColorSpace *CGColorSpaceRef;
extern const CFStringRef kCGColorSpaceSRGB;
CGColorSpaceRef CGColorSpaceCreateWithName(CFStringRef name);
void CGColorSpaceRelease(CGColorSpaceRef space);

// CGContext.h, CGBitmapContext.h
typedef struct CGContext *CGContextRef;
CGContextRef CGBitmapContextCreate(void *data, size_t width, size_t height, size_t bitsPerComponent, size_t bytesPerRow,
	CGColorSpaceRef space, uint32_t bitmapInfo);
void CGContextDrawImage(CGContextRef c, CGRect rect, CGImageRef image);
void CGContextRelease(CGContextRef c);

#endif
