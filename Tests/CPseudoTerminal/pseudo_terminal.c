#define _GNU_SOURCE
#include "CPseudoTerminal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int pseudo_terminal_open(char *path, size_t size) {
    int leader = posix_openpt(O_RDWR | O_NOCTTY);
    if (leader < 0) return -1;
    if (fcntl(leader, F_SETFD, FD_CLOEXEC) != 0 || grantpt(leader) != 0 || unlockpt(leader) != 0
        || ptsname_r(leader, path, size) != 0) {
        int saved = errno;
        close(leader);
        errno = saved;
        return -1;
    }
    return leader;
}
