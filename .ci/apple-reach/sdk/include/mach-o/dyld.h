// mach-o/dyld.h and mach-o/loader.h of Apple's SDK, what the package uses: the loaded images.
// https://developer.apple.com/documentation/kernel/mach_header — all Apple platforms.
// The _dyld_* functions are documented in `man 3 dyld` (macOS 10.1+; every iOS, tvOS, watchOS
// and visionOS release) and declared without availability in the header.
#ifndef APPLE_REACH_MACHO_DYLD_H
#define APPLE_REACH_MACHO_DYLD_H
#include <stdint.h>

/// https://developer.apple.com/documentation/kernel/mach_header
struct mach_header {
    uint32_t magic;
    int32_t cputype;
    int32_t cpusubtype;
    uint32_t filetype;
    uint32_t ncmds;
    uint32_t sizeofcmds;
    uint32_t flags;
};

/// man 3 dyld: https://developer.apple.com/library/archive/documentation/System/Conceptual/ManPages_iPhoneOS/man3/dyld.3.html
uint32_t _dyld_image_count(void);
const struct mach_header *_dyld_get_image_header(uint32_t image_index);
const char *_dyld_get_image_name(uint32_t image_index);

#endif
