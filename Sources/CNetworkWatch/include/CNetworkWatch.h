// What notifyd watches of the kernel on Linux, from its socket loop: the routing netlink
// socket (links, addresses and routes coming and going) and a timer that the kernel
// cancels when the wall clock is set or the machine resumes from suspend. Each call
// returns at once; none waits. Everything else (reading the messages, deciding what they
// mean) is in Swift. On other systems every call fails with ENOSYS.
#ifndef NOTIFYD_CNETWORKWATCH_H
#define NOTIFYD_CNETWORKWATCH_H

#include <stddef.h>

/// A non-blocking, close-on-exec NETLINK_ROUTE socket that receives the link, IPv4 and
/// IPv6 address and IPv4 and IPv6 route groups. Its port id goes to `*port`. -1 and errno.
int nwatch_netlink_open(unsigned *port);

/// Asks for every route (a dump); the replies carry `sequence`. 0, or -1 and errno.
int nwatch_request_routes(int fd, unsigned sequence);

/// Takes one datagram into `buffer`. Returns its full length, which is more than `size`
/// when it was cut short; 0 when none waits; -1 and errno otherwise (ENOBUFS: the kernel
/// dropped messages the socket had no room for). `*from_kernel` is 1 when the kernel sent
/// it, 0 when another process did.
long nwatch_receive(int fd, void *buffer, size_t size, int *from_kernel);

/// A non-blocking timer on the wall clock, armed a century ahead with
/// TFD_TIMER_CANCEL_ON_SET: it never fires, but becomes readable when the clock is set or
/// the machine resumes. -1 and errno.
int nwatch_clock_open(void);

/// After the timer became readable: 1 when the clock changed (the timer is armed again),
/// 0 when nothing did, -1 and errno.
int nwatch_clock_changed(int fd);

/// CLOCK_BOOTTIME in seconds: CLOCK_MONOTONIC plus the time spent suspended.
double nwatch_boot_seconds(void);

#endif
