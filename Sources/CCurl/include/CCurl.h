// notifyd's HTTP client on Linux: the system's libcurl, loaded at run time with dlopen.
//
// Loading it at run time, rather than linking it, needs neither libcurl's headers nor
// `libcurl.so` at build time (only Debian's -dev package has those), so `swift build`
// and `swift test` work on any machine with Swift; the runtime library `libcurl.so.4` is
// already there wherever Swift's own networking runs. The few declarations needed are
// written here from libcurl's documented, stable ABI. Variadic `curl_easy_setopt` is
// only ever called from C, where calling a variadic function is portable.
#ifndef NOTIFYD_CCURL_H
#define NOTIFYD_CCURL_H

#include <stddef.h>

/// Takes a hold on libcurl, loading and initialising it when nothing held it; returns 0,
/// or -1 with a message in `error` (and no hold). Each hold is given back with `ncurl_release`.
int ncurl_hold(char *error, size_t error_size);
/// Gives back a hold; the last one unloads libcurl, which no pointer from it may outlive.
void ncurl_release(void);

/// Requests one HTTP/2 connection carries at once, at most (the server may allow fewer).
enum { NCURL_STREAMS_PER_CONNECTION = 100 };

/// A multi handle with its connection pool: at most `max_host_connections` to one host.
void *ncurl_multi_new(long max_host_connections);

/// Resizes the pool of `multi`: at most `max_host_connections` to one host, and as many
/// kept alive. Transfers beyond it wait for a connection; spare idle ones are closed.
void ncurl_multi_limit(void *multi, long max_host_connections);

/// One request, added to `multi`. `headers` are whole lines ("Name: value"). The reply
/// body is kept up to `limit` bytes; past that the transfer is aborted and marked too large.
/// With `fresh_connection`, no kept-alive connection is reused for it; otherwise one
/// idle for at most `keep_alive_seconds` may be.
void *ncurl_transfer_start(void *multi, const char *url, const char *method, const char *const *headers, size_t header_count,
                           const void *body, size_t body_length, int has_body, long timeout_ms, long connect_timeout_ms, size_t limit,
                           int fresh_connection, long keep_alive_seconds, int connect_only);

/// A connection to `url`'s server made ready for the pool's next requests, with nothing
/// sent on it: a transfer that opens a new connection (and its TLS handshake) and ends,
/// with an error, the moment it would send its request, leaving the connection in the pool
/// where libcurl keeps it for a multiplexing one (HTTP/2). NULL before libcurl 7.88, which
/// would close it: nothing is started.
void *ncurl_standby_connection_start(void *multi, const char *url, long connect_timeout_ms, long keep_alive_seconds);

/// The sockets the pool's transfers opened that are still open: its connections, kept
/// alive or in use, and those being made.
long ncurl_multi_open_sockets(void *multi);

/// Moves on, without waiting, the transfers whose sockets are ready and those whose time
/// has come (a request just added among them).
void ncurl_multi_perform(void *multi);

/// Waits at most `timeout_ms` (less when one of libcurl's own timers is due) for a socket
/// to be ready or for `ncurl_wakeup`. Costs nothing while it waits.
void ncurl_multi_wait(void *multi, int timeout_ms);

/// Wakes a thread waiting in `ncurl_multi_wait`; safe from any thread.
void ncurl_wakeup(void *multi);

/// Frees a multi handle whose transfers have all been freed, and the spare ones it kept.
void ncurl_multi_free(void *multi);

/// The next finished transfer, or NULL.
void *ncurl_next_finished(void *multi);

/// After a transfer finished: libcurl's result code (0 is success) and the HTTP status.
int ncurl_transfer_result(void *transfer, long *status);
int ncurl_transfer_too_large(void *transfer);
/// Whether the finished transfer's response came over a connection that multiplexes
/// requests (HTTP/2 or later).
int ncurl_transfer_multiplexed(void *transfer);
/// The system's error number behind a failed connection (ENETUNREACH, ECONNREFUSED...), or 0.
int ncurl_transfer_os_errno(void *transfer);

/// How many new connections the finished transfer opened: 0 when it only used one kept
/// alive from before.
int ncurl_transfer_new_connections(void *transfer);
const unsigned char *ncurl_transfer_body(void *transfer, size_t *length);
/// Headers of the final response, or NULL; without the trailing line break.
const char *ncurl_transfer_location(void *transfer);
const char *ncurl_transfer_retry_after(void *transfer);
/// libcurl's words for a failure ("SSL certificate problem: …").
const char *ncurl_transfer_error_text(void *transfer);

/// Removes the transfer from `multi` (finished or not) and frees it, or keeps it in the
/// pool for a later request (a few at most; reset before it is used again).
void ncurl_transfer_free(void *multi, void *transfer);

// The result codes the client tells apart.
enum {
    NCURL_OK = 0,
    NCURL_UNSUPPORTED_PROTOCOL = 1,
    NCURL_COULDNT_RESOLVE_PROXY = 5,
    NCURL_COULDNT_RESOLVE_HOST = 6,
    NCURL_COULDNT_CONNECT = 7,
    NCURL_WRITE_ERROR = 23,
    NCURL_OPERATION_TIMEDOUT = 28,
    NCURL_SSL_CONNECT_ERROR = 35,
    NCURL_GOT_NOTHING = 52,
    NCURL_SEND_ERROR = 55,
    NCURL_RECV_ERROR = 56,
    NCURL_PEER_FAILED_VERIFICATION = 60,
};

#endif
