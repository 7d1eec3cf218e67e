#ifndef C_PSEUDO_TERMINAL_H
#define C_PSEUDO_TERMINAL_H

#include <stddef.h>

/// Opens a new pseudo-terminal for a test: returns its leader's descriptor, close-on-exec,
/// and writes the follower's path into `path`; or -1 with errno set. (posix_openpt and
/// ptsname_r are not imported into Swift on Linux.)
int pseudo_terminal_open(char *path, size_t size);

#endif
