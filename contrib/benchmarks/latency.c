/* Round-trip latency on a Unix socket, one request at a time: sends REQUEST plus "\n",
 * waits for the one-line reply, pauses PAUSE_MS, and so on for SECONDS; then prints
 * "COUNT P50_MS P99_MS MAX_MS". A reply that is held up shows as a long round trip, where
 * a throughput count (contrib/benchmarks/loadgen.c) would hide it among the quick ones.
 *
 *   latency SOCKET SECONDS PAUSE_MS REQUEST
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Reads until the reply's newline; the reply is small, so anything after it is not expected. */
static int read_reply(int fd) {
    char buffer[1 << 16];
    for (;;) {
        ssize_t got = read(fd, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        if (memchr(buffer, '\n', (size_t)got)) return 0;
    }
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: latency SOCKET SECONDS PAUSE_MS REQUEST\n");
        return 2;
    }
    double seconds = atof(argv[2]);
    struct timespec pause = {atoi(argv[3]) / 1000, (atoi(argv[3]) % 1000) * 1000000L};
    size_t length = strlen(argv[4]);
    char *request = malloc(length + 1);
    memcpy(request, argv[4], length);
    request[length] = '\n';

    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof address.sun_path) {
        fprintf(stderr, "latency: socket path too long\n");
        return 1;
    }
    strcpy(address.sun_path, argv[1]);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("latency: connect");
        return 1;
    }

    size_t count = 0, capacity = 1024;
    double *samples = malloc(capacity * sizeof *samples);
    double end = now() + seconds;
    while (now() < end) {
        double start = now();
        if (write(fd, request, length + 1) != (ssize_t)(length + 1) || read_reply(fd) != 0) {
            fprintf(stderr, "latency: the connection failed after %zu replies\n", count);
            return 1;
        }
        if (count == capacity) samples = realloc(samples, (capacity *= 2) * sizeof *samples);
        samples[count++] = (now() - start) * 1000;
        nanosleep(&pause, NULL);
    }
    if (count == 0) {
        fprintf(stderr, "latency: no reply in %.1f s\n", seconds);
        return 1;
    }
    qsort(samples, count, sizeof *samples, by_value);
    printf("%zu %.3f %.3f %.3f\n", count, samples[count / 2], samples[(count * 99) / 100], samples[count - 1]);
    return 0;
}
