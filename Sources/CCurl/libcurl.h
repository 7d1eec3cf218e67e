// Private to CCurl: libcurl's ABI as notifyd calls it, and the connection pool that
// curl.c (loading libcurl, transfers) and events.c (waiting for sockets and timers) share.
#ifndef NOTIFYD_CCURL_LIBCURL_H
#define NOTIFYD_CCURL_LIBCURL_H
#include <limits.h>
#include <poll.h>
#include <stddef.h>

// libcurl's ABI, from its documentation: handles are opaque, options are numbered by type.
typedef void CURL;
typedef void CURLM;
struct curl_slist;
typedef struct {
    int msg;
    CURL *easy_handle;
    union {
        void *whatever;
        int result;
    } data;
} CURLMsg;

enum { OPTION_LONG = 0, OPTION_POINTER = 10000, OPTION_FUNCTION = 20000 };
enum {
    OPT_WRITEDATA = OPTION_POINTER + 1,
    OPT_URL = OPTION_POINTER + 2,
    OPT_PROXY = OPTION_POINTER + 4,
    OPT_ERRORBUFFER = OPTION_POINTER + 10,
    OPT_WRITEFUNCTION = OPTION_FUNCTION + 11,
    OPT_HTTPHEADER = OPTION_POINTER + 23,
    OPT_HEADERDATA = OPTION_POINTER + 29,
    OPT_CUSTOMREQUEST = OPTION_POINTER + 36,
    OPT_POST = OPTION_LONG + 47,
    OPT_FOLLOWLOCATION = OPTION_LONG + 52,
    OPT_POSTFIELDSIZE = OPTION_LONG + 60,
    OPT_FRESH_CONNECT = OPTION_LONG + 74,
    OPT_CONNECT_ONLY = OPTION_LONG + 141,
    OPT_HEADERFUNCTION = OPTION_FUNCTION + 79,
    OPT_NOSIGNAL = OPTION_LONG + 99,
    OPT_PRIVATE = OPTION_POINTER + 103,
    OPT_TIMEOUT_MS = OPTION_LONG + 155,
    OPT_CONNECTTIMEOUT_MS = OPTION_LONG + 156,
    OPT_COPYPOSTFIELDS = OPTION_POINTER + 165,
    OPT_PROTOCOLS = OPTION_LONG + 181,
    OPT_REDIR_PROTOCOLS = OPTION_LONG + 182,
    OPT_PIPEWAIT = OPTION_LONG + 237,
    OPT_MAXAGE_CONN = OPTION_LONG + 288,
    OPT_CAPATH = OPTION_POINTER + 97,
    OPT_CA_CACHE_TIMEOUT = OPTION_LONG + 321,
    OPT_OPENSOCKETFUNCTION = OPTION_FUNCTION + 163,
    OPT_OPENSOCKETDATA = OPTION_POINTER + 164,
    OPT_CLOSESOCKETFUNCTION = OPTION_FUNCTION + 208,
    OPT_CLOSESOCKETDATA = OPTION_POINTER + 209,
    OPT_PREREQFUNCTION = OPTION_FUNCTION + 312,
};
enum { INFO_STRING = 0x100000, INFO_LONG = 0x200000 };
enum {
    INFO_RESPONSE_CODE = INFO_LONG + 2,
    INFO_PRIVATE = INFO_STRING + 21,
    INFO_OS_ERRNO = INFO_LONG + 25,
    INFO_NUM_CONNECTS = INFO_LONG + 26,
    INFO_HTTP_VERSION = INFO_LONG + 46,
    INFO_CAINFO = INFO_STRING + 61,
    INFO_CAPATH = INFO_STRING + 62,
};
// CURL_HTTP_VERSION_2_0: HTTP/2 (HTTP/3 is 30), as CURLINFO_HTTP_VERSION reports it.
enum { HTTP_VERSION_2 = 3 };
enum {
    MULTI_SOCKETFUNCTION = OPTION_FUNCTION + 1,
    MULTI_SOCKETDATA = OPTION_POINTER + 2,
    MULTI_TIMERFUNCTION = OPTION_FUNCTION + 4,
    MULTI_TIMERDATA = OPTION_POINTER + 5,
    MULTI_MAXCONNECTS = OPTION_LONG + 6,
    MULTI_MAX_HOST_CONNECTIONS = OPTION_LONG + 7,
    MULTI_MAX_CONCURRENT_STREAMS = OPTION_LONG + 16,
};
// What the socket callback asks to wait for, and what `curl_multi_socket_action` is told.
enum { WANTS_IN = 1, WANTS_OUT = 2, WANTS_NOTHING_MORE = 4 };
enum { SOCKET_TIMEOUT = -1, CSELECT_IN = 1, CSELECT_OUT = 2, CSELECT_ERR = 4 };
enum { PROTOCOL_HTTP = 1, PROTOCOL_HTTPS = 2, GLOBAL_ALL = 3, MESSAGE_DONE = 1, ERROR_SIZE = 256 };
/// The head of `curl_version_info_data`, the same in every version: its age, the version
/// as text, and as a number (0xXXYYZZ).
struct version_info {
    int age;
    const char *text;
    unsigned int number;
};
enum { OLDEST_VERSION = 0x074400, STANDBY_VERSION = 0x075800 };
/// The head of `struct curl_sockaddr`, which libcurl's open-socket callback is given.
struct socket_address {
    int family, socktype, protocol;
};
/// What a pre-request callback returns to end the transfer before its request is sent.
enum { PREREQ_ABORT = 1 };

// The functions resolved from the loaded library; hidden: nothing outside CCurl calls them.
extern __attribute__((visibility("hidden"))) struct libcurl {
    int (*global_init)(long);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    int (*easy_setopt)(CURL *, int, ...);
    int (*easy_getinfo)(CURL *, int, ...);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLM *(*multi_init)(void);
    int (*multi_setopt)(CURLM *, int, ...);
    int (*multi_add_handle)(CURLM *, CURL *);
    int (*multi_remove_handle)(CURLM *, CURL *);
    int (*multi_socket_action)(CURLM *, int, int, int *);
    int (*multi_cleanup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    const struct version_info *(*version_info)(int);
} curl;

struct transfer;

/// What libcurl asked to be watched (its socket callback) and when its timer is due (its
/// timer callback), for `curl_multi_socket_action`; and the pipe that wakes a wait.
struct events {
    /// The sockets libcurl has open, each with what it waits for (POLLIN, POLLOUT, or
    /// nothing while it waits for neither).
    struct pollfd *watched;
    size_t count, capacity;
    /// The sockets given to poll(): a copy, as the callbacks change `watched` while the
    /// ready ones are handed to libcurl; and the wake pipe's read end in a wait.
    struct pollfd *polled;
    size_t polled_capacity;
    /// CLOCK_MONOTONIC milliseconds at which libcurl's timer is due, or NO_TIMER.
    long long timer_due;
    int wake_read, wake_write;
};
#define NO_TIMER LLONG_MAX

/// A socket libcurl opened, known by its inode as well: libcurl closes some without telling
/// (a connection attempt it gave up), and the number may then be another file's.
struct opened_socket {
    int descriptor;
    unsigned long inode;
};

/// A multi handle, and the transfers finished with, kept to be used again: setting up an
/// easy handle and tearing it down cost a tenth of what libcurl spends on a request to a
/// backend on loopback, and a reset one keeps nothing of its last request but its buffers.
struct pool {
    CURLM *multi;
    struct transfer *spare;
    unsigned spares;
    /// The sockets libcurl opened for the pool's transfers (see `ncurl_multi_open_sockets`).
    struct opened_socket *sockets;
    size_t socket_count, socket_capacity;
    struct events events;
};

/// Sets up the pool's events (its wake pipe, libcurl's callbacks): 0, or -1.
int events_open(struct pool *pool);
/// Closes what `events_open` opened, once the multi handle is cleaned up.
void events_close(struct pool *pool);
#endif
