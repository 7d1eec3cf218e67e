/* A slow disk, for contrib/benchmarks/slow-disk: loaded into notifyd with LD_PRELOAD, it makes
 * every fsync and fdatasync wait SLOW_FSYNC_MS milliseconds (default 50) before doing its
 * work, as on a busy disk or one behind a slow controller.
 *
 *   cc -O2 -shared -fPIC -o slow-fsync.so contrib/benchmarks/slow-fsync.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static struct timespec delay;

__attribute__((constructor)) static void set_up(void) {
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    const char *text = getenv("SLOW_FSYNC_MS");
    long ms = text ? atol(text) : 50;
    delay.tv_sec = ms / 1000;
    delay.tv_nsec = (ms % 1000) * 1000000L;
}

/* The whole delay even when a signal interrupts it; errno as the caller left it. */
static void wait_like_a_slow_disk(void) {
    int saved = errno;
    struct timespec left = delay;
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
    errno = saved;
}

int fsync(int fd) {
    wait_like_a_slow_disk();
    return real_fsync(fd);
}

int fdatasync(int fd) {
    wait_like_a_slow_disk();
    return real_fdatasync(fd);
}
