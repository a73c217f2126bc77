// Stand-in for <CoreFoundation/CoreFoundation.h>: see ../README.md.
#ifndef ORCHARD_STUB_COREFOUNDATION_H
#define ORCHARD_STUB_COREFOUNDATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// MacTypes.h
typedef unsigned char Boolean;
typedef uint8_t UInt8;
typedef uint32_t UInt32;
typedef int32_t SInt32;
typedef int64_t SInt64;
typedef double Float64;
typedef SInt32 OSStatus;
enum { noErr = 0 };

// CFBase.h
typedef long CFIndex;
typedef unsigned long CFTypeID;
typedef const void *CFTypeRef;
typedef const struct __CFAllocator *CFAllocatorRef;
typedef const struct __CFString *CFStringRef;
extern const CFAllocatorRef kCFAllocatorDefault;
void CFRelease(CFTypeRef cf);
CFTypeID CFGetTypeID(CFTypeRef cf);

// CFData.h
typedef const struct __CFData *CFDataRef;
CFDataRef CFDataCreate(CFAllocatorRef allocator, const UInt8 *bytes, CFIndex length);

// CFNumber.h
typedef const struct __CFBoolean *CFBooleanRef;
extern const CFBooleanRef kCFBooleanFalse;
typedef const struct __CFNumber *CFNumberRef;
typedef CFIndex CFNumberType;
enum { kCFNumberLongLongType = 11 };
CFTypeID CFNumberGetTypeID(void);
Boolean CFNumberGetValue(CFNumberRef number, CFNumberType theType, void *valuePtr);

// CFDictionary.h
typedef const struct __CFDictionary *CFDictionaryRef;
typedef struct {
	CFIndex version;
	const void *(*retain)(CFAllocatorRef allocator, const void *value);
	void (*release)(CFAllocatorRef allocator, const void *value);
	CFStringRef (*copyDescription)(const void *value);
	Boolean (*equal)(const void *value1, const void *value2);
	unsigned long (*hash)(const void *value);
} CFDictionaryKeyCallBacks;
typedef struct {
	CFIndex version;
	const void *(*retain)(CFAllocatorRef allocator, const void *value);
	void (*release)(CFAllocatorRef allocator, const void *value);
	CFStringRef (*copyDescription)(const void *value);
	Boolean (*equal)(const void *value1, const void *value2);
} CFDictionaryValueCallBacks;
extern const CFDictionaryKeyCallBacks kCFTypeDictionaryKeyCallBacks;
extern const CFDictionaryValueCallBacks kCFTypeDictionaryValueCallBacks;
CFDictionaryRef CFDictionaryCreate(CFAllocatorRef allocator, const void **keys, const void **values, CFIndex numValues,
	const CFDictionaryKeyCallBacks *keyCallBacks, const CFDictionaryValueCallBacks *valueCallBacks);
const void *CFDictionaryGetValue(CFDictionaryRef theDict, const void *key);

// CFURL.h
typedef const struct __CFURL *CFURLRef;
CFURLRef CFURLCreateFromFileSystemRepresentation(CFAllocatorRef allocator, const UInt8 *buffer, CFIndex bufLen, Boolean isDirectory);

#endif
