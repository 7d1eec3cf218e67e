/* What the system's libcurl alone costs in private memory: loads it the way notifyd does
 * (dlopen, libcurl.so.4 first, then the GnuTLS build), initialises it, makes one request,
 * and prints "PRIVATE_KIB DIRTY_KIB" from /proc/self/smaps_rollup. A floor under notifyd's
 * own figure: nothing Swift, no daemon, just the HTTP library and its TLS libraries.
 *
 *   libcurl-floor URL
 *
 * Measured alone, as notifyd is: pages another process maps too count as shared, not private.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

enum { GLOBAL_ALL = 3, OPT_URL = 10002, OPT_WRITEFUNCTION = 20011 };

static size_t discard(char *data, size_t size, size_t count, void *context) {
    (void)data;
    (void)context;
    return size * count;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: libcurl-floor URL\n");
        return 2;
    }
    static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4"};
    void *library = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !library; i++) library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        fprintf(stderr, "libcurl-floor: %s\n", dlerror());
        return 1;
    }
    int (*global_init)(long) = (int (*)(long))dlsym(library, "curl_global_init");
    void *(*easy_init)(void) = (void *(*)(void))dlsym(library, "curl_easy_init");
    int (*easy_setopt)(void *, int, ...) = (int (*)(void *, int, ...))dlsym(library, "curl_easy_setopt");
    int (*easy_perform)(void *) = (int (*)(void *))dlsym(library, "curl_easy_perform");
    if (!global_init || !easy_init || !easy_setopt || !easy_perform || global_init(GLOBAL_ALL) != 0) {
        fprintf(stderr, "libcurl-floor: libcurl would not start\n");
        return 1;
    }
    void *easy = easy_init();
    if (!easy || easy_setopt(easy, OPT_URL, argv[1]) != 0 || easy_setopt(easy, OPT_WRITEFUNCTION, discard) != 0) {
        fprintf(stderr, "libcurl-floor: libcurl would not take the request\n");
        return 1;
    }
    int result = easy_perform(easy);
    if (result != 0) {
        fprintf(stderr, "libcurl-floor: the request failed (CURLcode %d)\n", result);
        return 1;
    }

    FILE *rollup = fopen("/proc/self/smaps_rollup", "r");
    if (!rollup) {
        perror("libcurl-floor: /proc/self/smaps_rollup");
        return 1;
    }
    long clean = 0, dirty = 0, value;
    char line[256];
    while (fgets(line, sizeof line, rollup)) {
        if (sscanf(line, "Private_Clean: %ld", &value) == 1) clean = value;
        if (sscanf(line, "Private_Dirty: %ld", &value) == 1) dirty = value;
    }
    fclose(rollup);
    printf("%ld %ld\n", clean + dirty, dirty);
    return 0;
}
