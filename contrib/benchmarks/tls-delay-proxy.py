#!/usr/bin/env python3
"""A backend far away, behind HTTPS: terminates TLS on a loopback port and forwards each
connection to a plain HTTP backend (the dev backend), delaying every byte by --delay-ms
each way (default 20: 40 ms per round trip). With --plain it terminates nothing: it
forwards the bytes as they come, delayed the same way, to a server that speaks TLS itself
(nginx, as the HTTP/2 front end of contrib/benchmarks/run).

    contrib/benchmarks/tls-delay-proxy.py --cert CERT --key KEY --backend HOST:PORT [--delay-ms MS]
    contrib/benchmarks/tls-delay-proxy.py --plain --backend HOST:PORT [--delay-ms MS]

The delay is applied to the encrypted bytes, before TLS and after it (with --plain, to the
bytes as they pass, which are the client's TLS), so the TLS handshake pays its round trips
as it would over a real network; the first bytes of a connection also wait one more round
trip, the TCP handshake's (connecting to loopback returns at once, so the client sends its
hello a round trip earlier than it could over a real link). Each client connection gets
its own connection to the backend, kept open as long as both ends keep theirs: HTTP/1.1
keep-alive passes through (and HTTP/2, with --plain), and a backend that closes an idle
connection (the dev backend does after 60 s, nginx after its keepalive_timeout) closes the
client's too, with a FIN (and, terminating TLS, a close_notify before it), and answers
anything the client sends after that with a reset, a round trip later as over a real link.
Terminating TLS, ALPN offers http/1.1 only (the dev backend speaks nothing else); with
--plain the client and the backend agree on their own.

Prints `listening on 127.0.0.1:PORT` first. Each line read on standard input is answered
with one JSON line of counts since the start: connections accepted, connections open now,
the most open at once, how many of those open the server has closed (the client has not
closed its end yet), on how many connections a client sent bytes after the server had
closed them (terminating TLS, bytes holding data, not only the client's close_notify; with
--plain any bytes, a close_notify too), and when the last bytes of a request went to the
backend (`time.monotonic()`, the system's monotonic clock; with --plain, the last bytes of
anything the client sent). Terminating TLS, also TLS handshakes completed (of which resumed
sessions) and handshakes that failed; with --plain there are no such counts (the backend
knows them). Ends at the end of standard input, or on SIGTERM.
"""
import argparse, asyncio, collections, json, selectors, signal, socket, ssl, struct, sys, time


class Counts:
    def __init__(self, tls):
        self.tls = tls
        self.connections = self.handshakes = self.resumed = self.failed = self.open = self.most_open = 0
        self.server_closed = self.after_close = 0
        self.last_request = 0.0

    def forwarded(self):
        self.last_request = time.monotonic()

    def as_json(self):
        counts = dict(connections=self.connections, open=self.open, most_open=self.most_open, server_closed=self.server_closed,
                      after_close=self.after_close, last_request=self.last_request)
        if self.tls:
            counts.update(handshakes=self.handshakes, resumed=self.resumed, failed=self.failed)
        return json.dumps(counts)


class TimerLead:
    """How early to set a timer so that it fires when asked: a virtual machine's timers fire
    some 0.2-0.3 ms late, which would add that much to every delay, both ways. The lead is
    the lower quartile of how late the last 64 timers fired, so most wakes still come a
    little late and the rest are waited out in a short spin (`Delayed.drain`): nothing goes
    before its time. On the 2-core test machine: a delay's median lateness 276 -> 50 us,
    for 5 us more CPU per delay."""

    LIMIT = 0.0005  # no lead beyond this, however late the timers: a spin stays short

    def __init__(self):
        self.late = collections.deque(maxlen=64)
        self.seconds = 0.0

    def observe(self, lateness):
        self.late.append(lateness)
        ordered = sorted(self.late)
        self.seconds = min(max(0.0, ordered[len(ordered) // 4]), self.LIMIT)


LEAD = TimerLead()


class Delayed:
    """Hands each chunk to `deliver` `delay` seconds after it was pushed, in order, never
    before and mostly within tens of microseconds after (see `TimerLead`). None is an end
    of stream, delivered in its turn."""

    def __init__(self, loop, delay, deliver, first_extra=0.0):
        self.loop, self.delay, self.deliver = loop, delay, deliver
        self.extra = first_extra
        self.queue = collections.deque()
        self.timer = None
        self.armed_for = 0.0

    def push(self, chunk):
        self.queue.append((self.loop.time() + self.delay + self.extra, chunk))
        self.extra = 0.0
        if self.timer is None:
            self.arm()

    def arm(self):
        self.armed_for = self.queue[0][0] - LEAD.seconds
        self.timer = self.loop.call_at(self.armed_for, self.drain)

    def drain(self):
        self.timer = None
        LEAD.observe(self.loop.time() - self.armed_for)
        while self.queue:
            due = self.queue[0][0]
            if due > self.loop.time() + LEAD.seconds + 0.00005:
                break
            while self.loop.time() < due:
                pass
            self.deliver(self.queue.popleft()[1])
        if self.queue:
            self.arm()


class ClientConnection(asyncio.Protocol):
    """One client's connection: TLS through memory buffers, so that the encrypted bytes
    can be delayed on their way in and out; without a TLS context (--plain), the bytes as
    they come."""

    def __init__(self, loop, context, backend, delay, counts):
        self.loop, self.backend, self.delay, self.counts = loop, backend, delay, counts
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_side=True) if context else None
        self.inbound = Delayed(loop, delay, self.from_client, first_extra=2 * delay)
        self.outbound = Delayed(loop, delay, self.to_client)
        self.transport = None
        self.upstream = None
        self.waiting = []  # plaintext for the backend before its connection is up
        self.secure = False
        self.backend_done = False  # the backend's connection is closed or closing
        self.finished = False  # this end has sent its FIN: the server has closed
        self.written_after_close = False

    def connection_made(self, transport):
        self.transport = transport
        self.counts.connections += 1
        self.counts.open += 1
        self.counts.most_open = max(self.counts.most_open, self.counts.open)
        self.loop.create_task(self.connect_backend())

    async def connect_backend(self):
        try:
            _, upstream = await self.loop.create_connection(lambda: BackendConnection(self), *self.backend)
        except OSError:
            self.outbound.push(None)
            return
        self.upstream = upstream
        for chunk in self.waiting:
            upstream.transport.write(chunk)
            self.counts.forwarded()
        self.waiting = []
        if self.backend_done:
            upstream.transport.close()

    def data_received(self, data):
        self.inbound.push(data)

    def eof_received(self):
        self.inbound.push(None)
        return True  # closed once the FIN has come through the delay

    def connection_lost(self, exc):
        self.counts.open -= 1
        self.counts.server_closed -= int(self.finished)
        self.inbound.push(None)

    def from_client(self, chunk):
        if chunk is None:
            self.close_backend()
            self.transport.close()
            return
        if self.finished:
            if self.carries_data(chunk) and not self.written_after_close:
                self.written_after_close = True
                self.counts.after_close += 1
            # A server that has closed answers anything more with a reset, which takes a
            # one-way trip back; sent at once, a client would learn of the close sooner
            # than over a real link (it may still be reading the close_notify).
            self.loop.call_later(self.delay, self.reset)
            return
        if self.tls is None:
            self.to_backend(chunk)
            return
        self.incoming.write(chunk)
        if not self.secure:
            try:
                self.tls.do_handshake()
                self.secure = True
                self.counts.handshakes += 1
                self.counts.resumed += int(self.tls.session_reused)
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError:
                self.counts.failed += 1
                self.flush()
                self.outbound.push(None)
                return
        if self.secure:
            while True:
                try:
                    plain = self.tls.read(65536)
                except ssl.SSLWantReadError:
                    break
                except (ssl.SSLZeroReturnError, ssl.SSLError):
                    plain = b""
                if not plain:
                    self.close_backend()
                    break
                self.to_backend(plain)
        self.flush()

    def carries_data(self, chunk):
        """Whether bytes sent after the close hold a request, not only the client's own
        close_notify (libcurl sends one when it drops a connection it finds too old). With
        --plain any bytes count: the TLS is the client's and the backend's."""
        if self.tls is None or not self.secure:
            return True
        self.incoming.write(chunk)
        try:
            return bool(self.tls.read(65536))
        except ssl.SSLError:
            return False

    def reset(self):
        if not self.transport.is_closing():
            self.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.transport.abort()

    def to_backend(self, plain):
        if self.upstream is not None:
            self.upstream.transport.write(plain)
            self.counts.forwarded()
        else:
            self.waiting.append(plain)

    def close_backend(self):
        if self.upstream is not None:
            self.upstream.transport.close()
        self.backend_done = True

    def from_backend(self, plain):
        if self.tls is None:
            self.outbound.push(plain)
        elif self.secure:
            self.tls.write(plain)
            self.flush()

    def backend_closed(self):
        """The backend closed its connection (an idle one, say): so does this one, with a
        close_notify and a FIN, as a TLS server closing an idle connection does (with
        --plain the backend's own close_notify, if any, has come through already)."""
        self.backend_done = True
        if self.tls is not None and self.secure:
            try:
                self.tls.unwrap()
            except ssl.SSLError:
                pass
            self.flush()
        self.outbound.push(None)

    def flush(self):
        if self.tls is None:
            return
        data = self.outgoing.read()
        if data:
            self.outbound.push(data)

    def to_client(self, chunk):
        if self.transport.is_closing() or self.finished:
            return
        if chunk is not None:
            self.transport.write(chunk)
        else:
            self.finished = True
            self.counts.server_closed += 1
            self.transport.write_eof()


class BackendConnection(asyncio.Protocol):
    def __init__(self, client):
        self.client = client
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.client.from_backend(data)

    def connection_lost(self, exc):
        self.client.backend_closed()


async def serve(args):
    loop = asyncio.get_running_loop()
    context = None
    if not args.plain:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        context.set_alpn_protocols(["http/1.1"])
    host, _, port = args.backend.rpartition(":")
    backend = (host or "127.0.0.1", int(port))
    counts = Counts(tls=context is not None)
    server = await loop.create_server(lambda: ClientConnection(loop, context, backend, args.delay_ms / 1000, counts),
                                      "127.0.0.1", args.port, backlog=256)
    print(f"listening on 127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)

    finished = loop.create_future()

    def command():
        if sys.stdin.readline():
            print(counts.as_json(), flush=True)
        elif not finished.done():
            finished.set_result(None)

    loop.add_reader(sys.stdin.fileno(), command)
    loop.add_signal_handler(signal.SIGTERM, lambda: finished.done() or finished.set_result(None))
    await finished
    server.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cert", help="the server's certificate (PEM)")
    parser.add_argument("--key", help="its private key (PEM)")
    parser.add_argument("--plain", action="store_true", help="no TLS: forward the bytes as they come, delayed (the backend speaks TLS itself)")
    parser.add_argument("--backend", required=True, help="HOST:PORT of the plain HTTP backend (with --plain, of the server to pass the bytes to)")
    parser.add_argument("--delay-ms", type=float, default=20.0, help="one-way delay (default 20)")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: any free one)")
    args = parser.parse_args()
    if not args.plain and not (args.cert and args.key):
        parser.error("--cert and --key are needed, unless --plain")
    # select(2), not asyncio's default epoll: epoll waits in whole milliseconds, rounded up,
    # which added up to a millisecond to each delay (1.2 ms to a round trip, measured with
    # curl on a kept connection: 42.2 → 41.0 ms), where select waits to the microsecond.
    # It takes descriptors below 1,024 only: some 500 connections at once, far above what a
    # benchmark opens.
    loop = asyncio.SelectorEventLoop(selectors.SelectSelector())
    try:
        loop.run_until_complete(serve(args))
    finally:
        loop.close()


if __name__ == "__main__":
    main()
