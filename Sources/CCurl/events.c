// See CCurl.h: waiting for libcurl's sockets and timers, and moving its transfers on.
//
// libcurl's socket interface (`curl_multi_socket_action`), not `curl_multi_perform`: a
// perform runs every transfer in the pool, and each one waiting for its response asks
// poll() whether its socket is readable. Over HTTP/2, where twenty lanes share one
// connection, every answer that arrived and every next request of a lane cost twenty such
// runs, most of the HTTP thread's time in a burst. Told which socket is ready, libcurl
// runs the transfers on it; told its timer is due, only those whose time has come (a
// request just added among them).
#if !defined(__APPLE__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // pipe2
#endif
#include "CCurl.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "libcurl.h"

static long long now_milliseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Makes room for `count` entries in an array of pollfd; 0, or -1 when memory ran out.
static int reserve(struct pollfd **array, size_t *capacity, size_t count) {
    if (count <= *capacity) return 0;
    size_t grown = *capacity ? *capacity * 2 : 8;
    while (grown < count) grown *= 2;
    struct pollfd *larger = realloc(*array, grown * sizeof **array);
    if (!larger) return -1;
    *array = larger;
    *capacity = grown;
    return 0;
}

/// libcurl's socket callback: what to wait for on `socket`, or that it is no longer watched.
static int on_socket(void *easy, int socket, int what, void *context, void *socket_context) {
    (void)easy;
    (void)socket_context;
    struct events *events = &((struct pool *)context)->events;
    size_t index = 0;
    while (index < events->count && events->watched[index].fd != socket) index++;
    if (what == WANTS_NOTHING_MORE) {
        if (index < events->count) events->watched[index] = events->watched[--events->count];
        return 0;
    }
    if (index == events->count) {
        // Room in the copy for every socket and the wake pipe is made here, so that a wait
        // never leaves one out for want of memory. Without memory the socket goes unwatched
        // and its transfers end at their timeout: a -1 would end every transfer of the pool
        // for good (libcurl marks the multi handle dead).
        if (reserve(&events->watched, &events->capacity, events->count + 1) != 0 ||
            reserve(&events->polled, &events->polled_capacity, events->count + 2) != 0)
            return 0;
        events->watched[events->count++].fd = socket;
    }
    events->watched[index].events = (short)((what & WANTS_IN ? POLLIN : 0) | (what & WANTS_OUT ? POLLOUT : 0));
    return 0;
}

/// libcurl's timer callback: due in `timeout_ms`, or (-1) not at all.
static int on_timer(void *multi, long timeout_ms, void *context) {
    (void)multi;
    struct events *events = &((struct pool *)context)->events;
    events->timer_due = timeout_ms < 0 ? NO_TIMER : now_milliseconds() + timeout_ms;
    return 0;
}

int events_open(struct pool *pool) {
    struct events *events = &pool->events;
    if (reserve(&events->polled, &events->polled_capacity, 1) != 0) return -1;
    int ends[2];
#ifdef __APPLE__
    int made = pipe(ends);
    for (int i = 0; made == 0 && i < 2; i++) {
        fcntl(ends[i], F_SETFL, fcntl(ends[i], F_GETFL) | O_NONBLOCK);
        fcntl(ends[i], F_SETFD, FD_CLOEXEC);
    }
#else
    // Close-on-exec from the start: another thread may be starting the password command.
    int made = pipe2(ends, O_NONBLOCK | O_CLOEXEC);
#endif
    if (made != 0) {
        free(events->polled);
        return -1;
    }
    events->wake_read = ends[0];
    events->wake_write = ends[1];
    events->timer_due = NO_TIMER;
    curl.multi_setopt(pool->multi, MULTI_SOCKETFUNCTION, on_socket);
    curl.multi_setopt(pool->multi, MULTI_SOCKETDATA, (void *)pool);
    curl.multi_setopt(pool->multi, MULTI_TIMERFUNCTION, on_timer);
    curl.multi_setopt(pool->multi, MULTI_TIMERDATA, (void *)pool);
    return 0;
}

void events_close(struct pool *pool) {
    struct events *events = &pool->events;
    close(events->wake_read);
    close(events->wake_write);
    free(events->watched);
    free(events->polled);
}

/// Copies the watched sockets that wait for something into `polled` (which `on_socket`
/// made room for), after `first` entries left for the caller; returns how many it holds.
static size_t copy_watched(struct events *events, size_t first) {
    size_t count = first;
    for (size_t i = 0; i < events->count; i++) {
        if (!events->watched[i].events) continue;
        events->polled[count] = events->watched[i];
        events->polled[count++].revents = 0;
    }
    return count;
}

void ncurl_multi_perform(void *opaque) {
    struct pool *pool = opaque;
    struct events *events = &pool->events;
    // How many transfers still run, which libcurl tells each call and notifyd does not ask.
    int running = 0;
    size_t count = copy_watched(events, 0);
    int ready = count > 0 ? poll(events->polled, (nfds_t)count, 0) : 0;
    int due = events->timer_due <= now_milliseconds();
    if (ready <= 0 && !due) return;
    for (size_t i = 0; ready > 0 && i < count; i++) {
        short revents = events->polled[i].revents;
        if (!revents) continue;
        // A hang-up or an error is read, for libcurl to find out which it was.
        int bits = (revents & (POLLIN | POLLPRI | POLLHUP | POLLERR) ? CSELECT_IN : 0) | (revents & POLLOUT ? CSELECT_OUT : 0);
        if (revents & POLLNVAL) bits |= CSELECT_ERR;
        curl.multi_socket_action(pool->multi, events->polled[i].fd, bits, &running);
        // Closed without libcurl saying so: left in the list it would be ready for ever.
        if (revents & POLLNVAL) on_socket(NULL, events->polled[i].fd, WANTS_NOTHING_MORE, pool, NULL);
    }
    if (events->timer_due <= now_milliseconds()) {
        // Cleared first: running the timer sets it again if anything is still to come.
        events->timer_due = NO_TIMER;
        curl.multi_socket_action(pool->multi, SOCKET_TIMEOUT, 0, &running);
    }
}

void ncurl_multi_wait(void *opaque, int timeout_ms) {
    struct events *events = &((struct pool *)opaque)->events;
    if (events->timer_due != NO_TIMER) {
        long long left = events->timer_due - now_milliseconds();
        if (left < timeout_ms) timeout_ms = left < 0 ? 0 : (int)left;
    }
    size_t count = copy_watched(events, 1);
    events->polled[0] = (struct pollfd){.fd = events->wake_read, .events = POLLIN};
    if (poll(events->polled, (nfds_t)count, timeout_ms) > 0 && events->polled[0].revents) {
        char drained[64];
        while (read(events->wake_read, drained, sizeof drained) > 0) {}
    }
}

void ncurl_wakeup(void *opaque) {
    // A full pipe already wakes the wait: nothing is lost when this write cannot be made.
    ssize_t written = write(((struct pool *)opaque)->events.wake_write, "", 1);
    (void)written;
}
