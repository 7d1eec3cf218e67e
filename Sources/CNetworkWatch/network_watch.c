// See CNetworkWatch.h.
#include "CNetworkWatch.h"

#include <errno.h>

#ifdef __linux__
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int nwatch_netlink_open(unsigned *port) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    socklen_t length = sizeof address;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || getsockname(fd, (struct sockaddr *)&address, &length) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    *port = address.nl_pid;
    return fd;
}

int nwatch_request_routes(int fd, unsigned sequence) {
    struct {
        struct nlmsghdr header;
        struct rtmsg route;
    } request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_len = sizeof request;
    request.header.nlmsg_type = RTM_GETROUTE;
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    request.header.nlmsg_seq = sequence;
    request.route.rtm_family = AF_UNSPEC;
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.nl_family = AF_NETLINK;
    ssize_t sent;
    do {
        sent = sendto(fd, &request, sizeof request, MSG_DONTWAIT, (struct sockaddr *)&kernel, sizeof kernel);
    } while (sent < 0 && errno == EINTR);
    return sent == (ssize_t)sizeof request ? 0 : -1;
}

long nwatch_receive(int fd, void *buffer, size_t size, int *from_kernel) {
    struct sockaddr_nl sender;
    socklen_t length = sizeof sender;
    memset(&sender, 0, sizeof sender);
    ssize_t received;
    // MSG_TRUNC: the full length even when the buffer was too small, so a cut datagram is known.
    do {
        received = recvfrom(fd, buffer, size, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&sender, &length);
    } while (received < 0 && errno == EINTR);
    if (received < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    *from_kernel = sender.nl_family == AF_NETLINK && sender.nl_pid == 0;
    return (long)received;
}

static int arm(int fd) {
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) return -1;
    struct itimerspec far;
    memset(&far, 0, sizeof far);
    far.it_value.tv_sec = now.tv_sec + 100L * 366 * 86400;
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &far, NULL);
}

int nwatch_clock_open(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd < 0) return -1;
    if (arm(fd) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int nwatch_clock_changed(int fd) {
    unsigned long long expirations;
    ssize_t got;
    do {
        got = read(fd, &expirations, sizeof expirations);
    } while (got < 0 && errno == EINTR);
    if (got < 0 && errno == ECANCELED) return arm(fd) == 0 ? 1 : -1;
    if (got < 0) return errno == EAGAIN ? 0 : -1;
    // A century went by: arm it again.
    return arm(fd) == 0 ? 0 : -1;
}

double nwatch_boot_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

#else

int nwatch_netlink_open(unsigned *port) { (void)port; errno = ENOSYS; return -1; }
int nwatch_request_routes(int fd, unsigned sequence) { (void)fd; (void)sequence; errno = ENOSYS; return -1; }
long nwatch_receive(int fd, void *buffer, size_t size, int *from_kernel) { (void)fd; (void)buffer; (void)size; (void)from_kernel; errno = ENOSYS; return -1; }
int nwatch_clock_open(void) { errno = ENOSYS; return -1; }
int nwatch_clock_changed(int fd) { (void)fd; errno = ENOSYS; return -1; }
double nwatch_boot_seconds(void) { return 0; }

#endif
