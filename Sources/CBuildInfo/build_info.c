#include "build_info.h"

// Package.swift defines NOTIFYD_BUILD as a string literal; a C define is the one way
// SwiftPM hands a value, not only a flag, to the code it builds.
#ifndef NOTIFYD_BUILD
#define NOTIFYD_BUILD ""
#endif

const char *notifyd_build(void) {
    return NOTIFYD_BUILD;
}
