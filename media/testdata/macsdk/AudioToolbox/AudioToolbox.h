// Stand-in for <AudioToolbox/AudioToolbox.h>: see ../README.md.
#ifndef ORCHARD_STUB_AUDIOTOOLBOX_H
#define ORCHARD_STUB_AUDIOTOOLBOX_H

#include <CoreFoundation/CoreFoundation.h>

// CoreAudioTypes.h, CoreAudioBaseTypes.h
typedef UInt32 AudioFormatID;
typedef UInt32 AudioFormatFlags;
typedef struct AudioStreamBasicDescription {
	Float64 mSampleRate;
	AudioFormatID mFormatID;
	AudioFormatFlags mFormatFlags;
	UInt32 mBytesPerPacket;
	UInt32 mFramesPerPacket;
	UInt32 mBytesPerFrame;
	UInt32 mChannelsPerFrame;
	UInt32 mBitsPerChannel;
	UInt32 mReserved;
} AudioStreamBasicDescription;
typedef struct AudioBuffer {
	UInt32 mNumberChannels;
	UInt32 mDataByteSize;
	void *mData;
} AudioBuffer;
typedef struct AudioBufferList {
	UInt32 mNumberBuffers;
	AudioBuffer mBuffers[1];
} AudioBufferList;
enum { kAudioFormatLinearPCM = 0x6c70636d }; // 'lpcm'
enum {
	kAudioFormatFlagIsFloat = (1U << 0),
	kAudioFormatFlagIsPacked = (1U << 3),
	kAudioFormatFlagsNativeEndian = 0, // little-endian Macs
	kAudioFormatFlagsNativeFloatPacked = kAudioFormatFlagIsFloat | kAudioFormatFlagsNativeEndian | kAudioFormatFlagIsPacked
};
enum { kAudio_MemFullError = -108 };

// AudioFile.h
typedef struct OpaqueAudioFileID *AudioFileID;
typedef UInt32 AudioFilePropertyID;
enum { kAudioFilePropertyFileFormat = 0x66666d74 }; // 'ffmt'
OSStatus AudioFileGetProperty(AudioFileID inAudioFile, AudioFilePropertyID inPropertyID, UInt32 *ioDataSize, void *outPropertyData);

// ExtendedAudioFile.h
typedef struct OpaqueExtAudioFile *ExtAudioFileRef;
typedef UInt32 ExtAudioFilePropertyID;
enum {
	kExtAudioFileProperty_FileDataFormat = 0x66666d74,   // 'ffmt'
	kExtAudioFileProperty_ClientDataFormat = 0x63666d74, // 'cfmt'
	kExtAudioFileProperty_AudioFile = 0x6166696c,        // 'afil'
	kExtAudioFileProperty_FileLengthFrames = 0x2366726d  // '#frm'
};
OSStatus ExtAudioFileOpenURL(CFURLRef inURL, ExtAudioFileRef *outExtAudioFile);
OSStatus ExtAudioFileDispose(ExtAudioFileRef inExtAudioFile);
OSStatus ExtAudioFileGetProperty(ExtAudioFileRef inExtAudioFile, ExtAudioFilePropertyID inPropertyID, UInt32 *ioPropertyDataSize,
	void *outPropertyData);
OSStatus ExtAudioFileSetProperty(ExtAudioFileRef inExtAudioFile, ExtAudioFilePropertyID inPropertyID, UInt32 inPropertyDataSize,
	const void *inPropertyData);
OSStatus ExtAudioFileRead(ExtAudioFileRef inExtAudioFile, UInt32 *ioNumberFrames, AudioBufferList *ioData);

#endif
