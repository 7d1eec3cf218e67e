// See CCurl.h. Loading libcurl, and each transfer; waiting for its sockets and timers is
// in events.c.
#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libcurl.h"

struct libcurl curl;

// The library is held while any connection pool is: `references` counts the holders, and
// the last to let go unloads it, with every library it brought (see `ncurl_release`).
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static void *library;
static unsigned long references;
/// Whether a standby connection can be made (see `ncurl_standby_connection_start`).
static int standby_possible;
/// Whether transfers trust libcurl's built-in CA file alone, leaving out its CA directory
/// (see `trust_the_ca_file_alone`).
static int ca_file_alone;

/// libcurl keeps the CA certificates it parsed for a connection, for the next connections
/// of the same multi handle (`CURLOPT_CA_CACHE_TIMEOUT`, 7.87 on), only where they come
/// from a CA file alone. Debian's build names a directory as well (`/etc/ssl/certs`, the
/// same certificates as the file, one per hashed name, both written by
/// update-ca-certificates), so every new connection parsed the whole bundle again on the
/// HTTP thread: some 140 certificates, 20 to 30 ms of CPU each time, one after another, so
/// that connections opened together (a burst over HTTP/1.1, the streams a GOAWAY refused)
/// each waited for the parses of those before it. Where libcurl's defaults name both and
/// the file can be read, the file alone is trusted, and parsed once per pool.
static int trust_the_ca_file_alone(void) {
    CURL *probe = curl.easy_init();
    if (!probe) return 0;
    const char *file = NULL, *directory = NULL;
    // Unknown to libcurl before 7.84: nothing is changed there.
    int known = curl.easy_getinfo(probe, INFO_CAINFO, &file) == 0 && curl.easy_getinfo(probe, INFO_CAPATH, &directory) == 0;
    int alone = known && file && directory && access(file, R_OK) == 0;
    curl.easy_cleanup(probe);
    return alone;
}

/// Loads libcurl, resolves what notifyd calls and initialises it; returns 0, or -1 with
/// the reason in `error`. Called with `load_lock` held and nothing loaded.
static int load(char *error, size_t error_size) {
#ifdef __APPLE__
    static const char *const names[] = {"libcurl.4.dylib", "libcurl.dylib"};
#else
    // The OpenSSL build first, as FoundationNetworking uses; then the GnuTLS one.
    static const char *const names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"};
#endif
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !library; i++) library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(error, error_size, "cannot load libcurl (%s): install it (Debian and Ubuntu: apt-get install libcurl4)", dlerror());
        return -1;
    }
#define RESOLVE(field, symbol)                                                                                      \
    if (!(*(void **)&curl.field = dlsym(library, symbol))) {                                                         \
        snprintf(error, error_size, "libcurl has no %s: it is older than 7.68; install a newer one", symbol);       \
        dlclose(library);                                                                                          \
        library = NULL;                                                                                            \
        return -1;                                                                                                 \
    }
    RESOLVE(global_init, "curl_global_init")
    RESOLVE(global_cleanup, "curl_global_cleanup")
    RESOLVE(easy_init, "curl_easy_init")
    RESOLVE(easy_setopt, "curl_easy_setopt")
    RESOLVE(easy_getinfo, "curl_easy_getinfo")
    RESOLVE(easy_cleanup, "curl_easy_cleanup")
    RESOLVE(easy_reset, "curl_easy_reset")
    RESOLVE(slist_append, "curl_slist_append")
    RESOLVE(slist_free_all, "curl_slist_free_all")
    RESOLVE(multi_init, "curl_multi_init")
    RESOLVE(multi_setopt, "curl_multi_setopt")
    RESOLVE(multi_add_handle, "curl_multi_add_handle")
    RESOLVE(multi_remove_handle, "curl_multi_remove_handle")
    RESOLVE(multi_socket_action, "curl_multi_socket_action")
    RESOLVE(version_info, "curl_version_info")
    RESOLVE(multi_info_read, "curl_multi_info_read")
    RESOLVE(multi_cleanup, "curl_multi_cleanup")
#undef RESOLVE
    // The functions above are all older than 7.68, the oldest libcurl notifyd is tested
    // with, so finding them does not say the library is new enough; its version does.
    const struct version_info *version = curl.version_info(0);
    if (!version || version->number < OLDEST_VERSION) {
        snprintf(error, error_size, "libcurl %s is older than 7.68; install a newer one", version ? version->text : "(unknown)");
        dlclose(library);
        library = NULL;
        return -1;
    }
    // With CURLOPT_NOSIGNAL (signals and threads do not mix) libcurl leaves SIGPIPE to the
    // program, and a TLS write to a peer that hung up would end the process. notifyd
    // ignores SIGPIPE anyway; any other program using this does too from here on.
    struct sigaction pipe_action;
    if (sigaction(SIGPIPE, NULL, &pipe_action) == 0 && pipe_action.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
    if (curl.global_init(GLOBAL_ALL) != 0) {
        snprintf(error, error_size, "libcurl failed to initialise");
        dlclose(library);
        library = NULL;
        return -1;
    }
    ca_file_alone = trust_the_ca_file_alone();
    // Before 7.88 a connection becomes HTTP/2 only once a request is sent on it: one whose
    // transfer ends before that is closed, not kept.
    standby_possible = version->number >= STANDBY_VERSION;
    return 0;
}

int ncurl_hold(char *error, size_t error_size) {
    pthread_mutex_lock(&load_lock);
    int result = references > 0 || load(error, error_size) == 0 ? 0 : -1;
    if (result == 0) references++;
    pthread_mutex_unlock(&load_lock);
    return result;
}

void ncurl_release(void) {
    pthread_mutex_lock(&load_lock);
    if (references > 0 && --references == 0) {
        curl.global_cleanup();
        // Unmaps libcurl and the libraries only it needed (LDAP, SSH, Kerberos, GnuTLS...:
        // about 430 KiB of relocated, dirty pages on Debian). OpenSSL stays: it pins itself.
        dlclose(library);
        library = NULL;
    }
    pthread_mutex_unlock(&load_lock);
}

struct transfer {
    /// In the pool's list of spare transfers, the next one.
    struct transfer *next_spare;
    CURL *easy;
    struct curl_slist *headers;
    unsigned char *body;
    size_t length, capacity, limit;
    int too_large;
    int result;
    /// The connection a connect-only transfer made is its own until it is cleaned up:
    /// such a transfer is never kept for reuse.
    int connect_only;
    char location[1024];
    char retry_after[128];
    char error[ERROR_SIZE];
};

/// Spare transfers kept at most: a finished request's is taken again by the next one of
/// its lane at once, so a few serve a whole burst.
enum { SPARE_TRANSFERS = 8 };

void *ncurl_multi_new(long max_host_connections) {
    struct pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->multi = curl.multi_init();
    if (!pool->multi) {
        free(pool);
        return NULL;
    }
    if (events_open(pool) != 0) {
        curl.multi_cleanup(pool->multi);
        free(pool);
        return NULL;
    }
    ncurl_multi_limit(pool, max_host_connections);
    return pool;
}

void ncurl_multi_limit(void *opaque, long max_host_connections) {
    CURLM *multi = ((struct pool *)opaque)->multi;
    curl.multi_setopt(multi, MULTI_MAX_HOST_CONNECTIONS, max_host_connections);
    curl.multi_setopt(multi, MULTI_MAXCONNECTS, max_host_connections);
    // libcurl's default (since 7.67; older ones ignore the option), set so that the count
    // notifyd keeps of requests in flight is the one libcurl keeps.
    curl.multi_setopt(multi, MULTI_MAX_CONCURRENT_STREAMS, (long)NCURL_STREAMS_PER_CONNECTION);
}

static void destroy(struct transfer *transfer) {
    curl.easy_cleanup(transfer->easy);
    curl.slist_free_all(transfer->headers);
    free(transfer->body);
    free(transfer);
}

/// A transfer ready for a new request: a spare one reset, or a new one.
static struct transfer *new_transfer(struct pool *pool) {
    struct transfer *transfer = pool->spare;
    if (transfer) {
        pool->spare = transfer->next_spare;
        pool->spares--;
        curl.easy_reset(transfer->easy);
        transfer->next_spare = NULL;
        transfer->length = 0;
        transfer->too_large = 0;
        transfer->result = 0;
        transfer->connect_only = 0;
        transfer->location[0] = transfer->retry_after[0] = transfer->error[0] = '\0';
        return transfer;
    }
    transfer = calloc(1, sizeof *transfer);
    if (!transfer) return NULL;
    transfer->easy = curl.easy_init();
    if (!transfer->easy) {
        free(transfer);
        return NULL;
    }
    return transfer;
}

static size_t take_body(char *data, size_t size, size_t count, void *context) {
    struct transfer *transfer = context;
    size_t bytes = size * count;
    if (bytes > transfer->limit - transfer->length) {
        // Returning less than was given aborts the transfer: nothing more is read.
        transfer->too_large = 1;
        return 0;
    }
    if (transfer->length + bytes > transfer->capacity) {
        size_t capacity = transfer->capacity ? transfer->capacity : 512;
        while (capacity < transfer->length + bytes) capacity *= 2;
        unsigned char *grown = realloc(transfer->body, capacity);
        if (!grown) return 0;
        transfer->body = grown;
        transfer->capacity = capacity;
    }
    memcpy(transfer->body + transfer->length, data, bytes);
    transfer->length += bytes;
    return bytes;
}

/// Copies a header's value, trimmed, if the line is `name: value`.
static void keep_header(const char *line, size_t length, const char *name, char *into, size_t room) {
    size_t name_length = strlen(name);
    if (length <= name_length || strncasecmp(line, name, name_length) != 0 || line[name_length] != ':') return;
    const char *value = line + name_length + 1;
    const char *end = line + length;
    while (value < end && (*value == ' ' || *value == '\t')) value++;
    while (end > value && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) end--;
    size_t kept = (size_t)(end - value) < room - 1 ? (size_t)(end - value) : room - 1;
    memcpy(into, value, kept);
    into[kept] = '\0';
}

static size_t take_header(char *line, size_t size, size_t count, void *context) {
    struct transfer *transfer = context;
    size_t length = size * count;
    if (length >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        // A new response (after a 100 Continue, say): only the last one's headers count.
        transfer->location[0] = '\0';
        transfer->retry_after[0] = '\0';
    }
    keep_header(line, length, "Location", transfer->location, sizeof transfer->location);
    keep_header(line, length, "Retry-After", transfer->retry_after, sizeof transfer->retry_after);
    return length;
}

/// The inode of an open descriptor, or 0.
static unsigned long inode_of(int descriptor) {
    struct stat status;
    return fstat(descriptor, &status) == 0 ? (unsigned long)status.st_ino : 0;
}

/// Forgets the sockets libcurl closed without telling (a connection attempt it gave up:
/// 7.88 closes those itself), found closed or holding another file now.
static void forget_closed_sockets(struct pool *pool) {
    size_t kept = 0;
    for (size_t i = 0; i < pool->socket_count; i++) {
        if (inode_of(pool->sockets[i].descriptor) == pool->sockets[i].inode) pool->sockets[kept++] = pool->sockets[i];
    }
    pool->socket_count = kept;
}

static void forget_socket(struct pool *pool, int descriptor) {
    for (size_t i = 0; i < pool->socket_count; i++) {
        if (pool->sockets[i].descriptor == descriptor) {
            pool->sockets[i] = pool->sockets[--pool->socket_count];
            return;
        }
    }
}

/// Keeps the pool's sockets (`ncurl_multi_open_sockets`), and makes them close on exec
/// (libcurl 7.88 does not): a password command has no business with the backend's
/// connections. Its spawn closes what it would inherit anyway where glibc can (2.34 on).
static int open_socket(void *context, int purpose, struct socket_address *address) {
    (void)purpose;
    struct pool *pool = context;
    int type = address->socktype;
#ifdef SOCK_CLOEXEC
    type |= SOCK_CLOEXEC;
#endif
    int descriptor = socket(address->family, type, address->protocol);
    if (descriptor < 0) return descriptor;
    // A number reused after a close libcurl did not tell of names this socket now.
    forget_socket(pool, descriptor);
    if (pool->socket_count == pool->socket_capacity) forget_closed_sockets(pool);
    if (pool->socket_count == pool->socket_capacity) {
        size_t capacity = pool->socket_capacity ? pool->socket_capacity * 2 : 8;
        struct opened_socket *grown = realloc(pool->sockets, capacity * sizeof *grown);
        // Left out of the count: at worst a standby connection is opened beside it.
        if (!grown) return descriptor;
        pool->sockets = grown;
        pool->socket_capacity = capacity;
    }
    pool->sockets[pool->socket_count++] = (struct opened_socket){descriptor, inode_of(descriptor)};
    return descriptor;
}

static int close_socket(void *context, int descriptor) {
    forget_socket(context, descriptor);
    return close(descriptor);
}

/// A transfer to `url` with the options every one of the pool's shares, or NULL.
static struct transfer *prepared_transfer(struct pool *pool, const char *url, long timeout_ms, long connect_timeout_ms,
                                          int fresh_connection, long keep_alive_seconds) {
    struct transfer *transfer = new_transfer(pool);
    if (!transfer) return NULL;
    CURL *easy = transfer->easy;
    curl.easy_setopt(easy, OPT_URL, url);
    curl.easy_setopt(easy, OPT_PRIVATE, (void *)transfer);
    curl.easy_setopt(easy, OPT_ERRORBUFFER, transfer->error);
    curl.easy_setopt(easy, OPT_NOSIGNAL, 1L);
    // A redirect would hand the Authorization header to wherever it points.
    curl.easy_setopt(easy, OPT_FOLLOWLOCATION, 0L);
    curl.easy_setopt(easy, OPT_PROTOCOLS, (long)(PROTOCOL_HTTP | PROTOCOL_HTTPS));
    curl.easy_setopt(easy, OPT_REDIR_PROTOCOLS, (long)(PROTOCOL_HTTP | PROTOCOL_HTTPS));
    curl.easy_setopt(easy, OPT_TIMEOUT_MS, timeout_ms);
    curl.easy_setopt(easy, OPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    curl.easy_setopt(easy, OPT_FRESH_CONNECT, (long)(fresh_connection != 0));
    curl.easy_setopt(easy, OPT_MAXAGE_CONN, keep_alive_seconds);
    curl.easy_setopt(easy, OPT_OPENSOCKETFUNCTION, open_socket);
    curl.easy_setopt(easy, OPT_OPENSOCKETDATA, (void *)pool);
    curl.easy_setopt(easy, OPT_CLOSESOCKETFUNCTION, close_socket);
    curl.easy_setopt(easy, OPT_CLOSESOCKETDATA, (void *)pool);
    // A burst started before any connection to an HTTPS backend has said whether it
    // multiplexes (HTTP/2, by ALPN in the TLS handshake) waits for the first one to say,
    // rather than opening a connection per request: one handshake where the backend speaks
    // HTTP/2, and the others opened one handshake later where it does not. Plain HTTP is
    // HTTP/1.1 from the start: nothing to wait for.
    if (strncasecmp(url, "https:", 6) == 0) curl.easy_setopt(easy, OPT_PIPEWAIT, 1L);
    // Plain http is for a backend on this machine, and carries the password in clear: never
    // through a proxy that http_proxy or all_proxy names, which would read it (and could
    // answer for the backend). Over https a proxy only relays the encrypted connection.
    if (strncasecmp(url, "http:", 5) == 0) curl.easy_setopt(easy, OPT_PROXY, "");
    if (ca_file_alone) curl.easy_setopt(easy, OPT_CAPATH, (char *)NULL);
    // A CA added to the system's store while connections come and go is taken up within
    // the hour (libcurl's default keeps the parsed file for a day); a pool opened anew
    // (after keep_alive, or a network change) reads it at once.
    curl.easy_setopt(easy, OPT_CA_CACHE_TIMEOUT, 3600L);
    return transfer;
}

/// The transfer, handed to the pool's multi handle; or NULL, and the transfer freed.
static struct transfer *started(struct pool *pool, struct transfer *transfer) {
    if (curl.multi_add_handle(pool->multi, transfer->easy) == 0) return transfer;
    destroy(transfer);
    return NULL;
}

void *ncurl_transfer_start(void *opaque, const char *url, const char *method, const char *const *headers, size_t header_count,
                           const void *body, size_t body_length, int has_body, long timeout_ms, long connect_timeout_ms, size_t limit,
                           int fresh_connection, long keep_alive_seconds, int connect_only) {
    struct pool *pool = opaque;
    struct transfer *transfer = prepared_transfer(pool, url, timeout_ms, connect_timeout_ms, fresh_connection, keep_alive_seconds);
    if (!transfer) return NULL;
    transfer->limit = limit;
    for (size_t i = 0; i < header_count; i++) transfer->headers = curl.slist_append(transfer->headers, headers[i]);
    // libcurl adds "Expect: 100-continue" to larger bodies; ASP.NET needs no such round trip.
    transfer->headers = curl.slist_append(transfer->headers, "Expect:");
    CURL *easy = transfer->easy;
    curl.easy_setopt(easy, OPT_HTTPHEADER, transfer->headers);
    curl.easy_setopt(easy, OPT_WRITEFUNCTION, take_body);
    curl.easy_setopt(easy, OPT_WRITEDATA, (void *)transfer);
    curl.easy_setopt(easy, OPT_HEADERFUNCTION, take_header);
    curl.easy_setopt(easy, OPT_HEADERDATA, (void *)transfer);
    if (has_body) {
        // Copied: the caller's buffer need not outlive this call.
        curl.easy_setopt(easy, OPT_POSTFIELDSIZE, (long)body_length);
        curl.easy_setopt(easy, OPT_COPYPOSTFIELDS, body_length ? body : "");
    }
    curl.easy_setopt(easy, OPT_CUSTOMREQUEST, method);
    if (connect_only) {
        transfer->connect_only = 1;
        // Connects (with the TLS handshake of an https URL) and ends there: no request is
        // sent, and the connection is never lent to another transfer.
        curl.easy_setopt(easy, OPT_CONNECT_ONLY, 1L);
        curl.easy_setopt(easy, OPT_FRESH_CONNECT, 1L);
    }
    return started(pool, transfer);
}

/// Ends the standby transfer once its connection is made, before a request is sent.
static int before_request(void *context, char *server_address, char *local_address, int server_port, int local_port) {
    (void)context, (void)server_address, (void)local_address, (void)server_port, (void)local_port;
    return PREREQ_ABORT;
}

void *ncurl_standby_connection_start(void *opaque, const char *url, long connect_timeout_ms, long keep_alive_seconds) {
    struct pool *pool = opaque;
    if (!standby_possible) return NULL;
    struct transfer *transfer = prepared_transfer(pool, url, connect_timeout_ms, connect_timeout_ms, 1, keep_alive_seconds);
    if (!transfer) return NULL;
    // Were it unknown, the transfer would send its request: nothing is started then.
    if (curl.easy_setopt(transfer->easy, OPT_PREREQFUNCTION, before_request) != 0) {
        destroy(transfer);
        return NULL;
    }
    return started(pool, transfer);
}

long ncurl_multi_open_sockets(void *opaque) {
    struct pool *pool = opaque;
    forget_closed_sockets(pool);
    return (long)pool->socket_count;
}

void ncurl_multi_free(void *opaque) {
    struct pool *pool = opaque;
    while (pool->spare) {
        struct transfer *transfer = pool->spare;
        pool->spare = transfer->next_spare;
        destroy(transfer);
    }
    curl.multi_cleanup(pool->multi);
    events_close(pool);
    free(pool->sockets);
    free(pool);
}

void *ncurl_next_finished(void *opaque) {
    int left = 0;
    CURLMsg *message;
    while ((message = curl.multi_info_read(((struct pool *)opaque)->multi, &left))) {
        if (message->msg != MESSAGE_DONE) continue;
        struct transfer *transfer = NULL;
        curl.easy_getinfo(message->easy_handle, INFO_PRIVATE, (char **)&transfer);
        if (!transfer) continue;
        transfer->result = message->data.result;
        return transfer;
    }
    return NULL;
}

int ncurl_transfer_result(void *opaque, long *status) {
    struct transfer *transfer = opaque;
    *status = 0;
    curl.easy_getinfo(transfer->easy, INFO_RESPONSE_CODE, status);
    return transfer->result;
}

int ncurl_transfer_os_errno(void *opaque) {
    struct transfer *transfer = opaque;
    long number = 0;
    curl.easy_getinfo(transfer->easy, INFO_OS_ERRNO, &number);
    return (int)number;
}

int ncurl_transfer_new_connections(void *opaque) {
    struct transfer *transfer = opaque;
    long count = 0;
    curl.easy_getinfo(transfer->easy, INFO_NUM_CONNECTS, &count);
    return (int)count;
}

int ncurl_transfer_multiplexed(void *opaque) {
    struct transfer *transfer = opaque;
    long version = 0;
    curl.easy_getinfo(transfer->easy, INFO_HTTP_VERSION, &version);
    return version >= HTTP_VERSION_2;
}

int ncurl_transfer_too_large(void *opaque) { return ((struct transfer *)opaque)->too_large; }

const unsigned char *ncurl_transfer_body(void *opaque, size_t *length) {
    struct transfer *transfer = opaque;
    *length = transfer->length;
    return transfer->body;
}

const char *ncurl_transfer_location(void *opaque) {
    struct transfer *transfer = opaque;
    return transfer->location[0] ? transfer->location : NULL;
}

const char *ncurl_transfer_retry_after(void *opaque) {
    struct transfer *transfer = opaque;
    return transfer->retry_after[0] ? transfer->retry_after : NULL;
}

const char *ncurl_transfer_error_text(void *opaque) { return ((struct transfer *)opaque)->error; }

void ncurl_transfer_free(void *opaque_pool, void *opaque) {
    struct pool *pool = opaque_pool;
    struct transfer *transfer = opaque;
    curl.multi_remove_handle(pool->multi, transfer->easy);
    if (pool->spares >= SPARE_TRANSFERS || transfer->connect_only) {
        destroy(transfer);
        return;
    }
    curl.slist_free_all(transfer->headers);
    transfer->headers = NULL;
    transfer->next_spare = pool->spare;
    pool->spare = transfer;
    pool->spares++;
}
