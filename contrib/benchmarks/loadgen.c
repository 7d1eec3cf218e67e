/* Pipelined request load on a Unix socket, for any line protocol whose replies are one
 * line each (notifyd's JSON lines, redis's inline commands). Keeps DEPTH requests in
 * flight on each of CONNS connections and counts reply lines, for SECONDS or until
 * COUNT replies in all, then prints "REPLIES SECONDS REPLIES_PER_SECOND".
 *
 *   loadgen SOCKET CONNS DEPTH SECONDS COUNT REQUEST
 *
 * REQUEST is sent as given plus "\n" (for redis, pass "PING\r"). COUNT 0 means no limit.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

struct conn {
    int fd;
    long in_flight;
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int connect_to(const char *path) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address.sun_path) return -1;
    strcpy(address.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Writes `count` copies of the request; they are small, so a short write is rare and
 * simply finished with blocking writes. */
static int send_requests(int fd, const char *request, size_t length, long count) {
    static char buffer[1 << 16];
    size_t per = sizeof buffer / length;
    while (count > 0) {
        size_t n = (size_t)count < per ? (size_t)count : per;
        for (size_t i = 0; i < n; i++) memcpy(buffer + i * length, request, length);
        size_t total = n * length, offset = 0;
        while (offset < total) {
            ssize_t written = write(fd, buffer + offset, total - offset);
            if (written < 0) {
                if (errno == EINTR) continue;
                return -1;
            }
            offset += (size_t)written;
        }
        count -= (long)n;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: loadgen SOCKET CONNS DEPTH SECONDS COUNT REQUEST\n");
        return 2;
    }
    const char *path = argv[1];
    int conns = atoi(argv[2]);
    long depth = atol(argv[3]);
    double seconds = atof(argv[4]);
    long limit = atol(argv[5]);
    size_t length = strlen(argv[6]) + 1;
    char *request = malloc(length + 1);
    if (conns < 1 || depth < 1 || !request) {
        fprintf(stderr, "loadgen: CONNS and DEPTH must be at least 1\n");
        return 2;
    }
    memcpy(request, argv[6], length - 1);
    request[length - 1] = '\n';
    if (depth * (long)length > (1 << 16)) depth = (1 << 16) / (long)length;

    struct conn *c = calloc((size_t)conns, sizeof *c);
    struct pollfd *fds = calloc((size_t)conns, sizeof *fds);
    for (int i = 0; i < conns; i++) {
        c[i].fd = connect_to(path);
        if (c[i].fd < 0) {
            fprintf(stderr, "loadgen: cannot connect to %s: %s\n", path, strerror(errno));
            return 1;
        }
        fds[i] = (struct pollfd){.fd = c[i].fd, .events = POLLIN};
    }

    long sent = 0, replies = 0;
    double start = now(), deadline = start + seconds;
    int sending = 1;
    for (int i = 0; i < conns; i++) {
        long n = limit > 0 && limit - sent < depth ? limit - sent : depth;
        if (n > 0 && send_requests(c[i].fd, request, length, n) != 0) return 1;
        c[i].in_flight = n;
        sent += n;
    }
    static char buffer[1 << 16];
    for (;;) {
        long outstanding = 0;
        for (int i = 0; i < conns; i++) outstanding += c[i].in_flight;
        if (outstanding == 0) break;
        if (poll(fds, (nfds_t)conns, 10000) <= 0) {
            fprintf(stderr, "loadgen: no reply for 10 s\n");
            return 1;
        }
        if (sending && (now() >= deadline || (limit > 0 && sent >= limit))) sending = 0;
        for (int i = 0; i < conns; i++) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t got = read(c[i].fd, buffer, sizeof buffer);
            if (got <= 0) {
                fprintf(stderr, "loadgen: connection closed with %ld replies outstanding\n", c[i].in_flight);
                return 1;
            }
            long lines = 0;
            for (ssize_t k = 0; k < got; k++) lines += buffer[k] == '\n';
            c[i].in_flight -= lines;
            replies += lines;
            // Top the connection up to DEPTH again once half of its window has come back.
            if (sending && c[i].in_flight <= depth / 2) {
                long n = depth - c[i].in_flight;
                if (limit > 0 && limit - sent < n) n = limit - sent;
                if (n > 0) {
                    if (send_requests(c[i].fd, request, length, n) != 0) return 1;
                    c[i].in_flight += n;
                    sent += n;
                }
            }
        }
    }
    double elapsed = now() - start;
    printf("%ld %.6f %.1f\n", replies, elapsed, replies / elapsed);
    return 0;
}
