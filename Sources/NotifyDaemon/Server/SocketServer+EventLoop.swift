#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol
import NotifySocket
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifySystem

extension SocketServer {
    /// The loop's state, touched by its thread only.
    final class EventLoop: @unchecked Sendable {
        // @unchecked: created on the starting thread and then used by the loop thread alone.
        let server: SocketServer
        /// Its descriptors are polled with the clients', its burst's end is one of the deadlines.
        let network: NetworkMonitor?
        var connections: [Int: ClientConnection] = [:]
        var nextNumber = 1
        var accepting = true
        var acceptPausedUntil: Double?
        var drainDeadline: Double?
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
        var refusals: RefusalLog
        /// When to call `whenQuiet`, unless activity comes first; nil while idle.
        var quietDue: Double?
        let ownUID = currentUID()

        var limits: ServerLimits { server.limits }
        var logger: Logger { server.logger }

        init(server: SocketServer, network: NetworkMonitor?) {
            self.server = server
            self.network = network
            refusals = RefusalLog(interval: server.limits.refusalLogInterval)
        }

        func run() {
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
            defer { scratch.deallocate() }
            var fds: [pollfd] = []
            var polled: [ClientConnection] = []
            while true {
                let now = monotonicSeconds()
                fds.removeAll(keepingCapacity: true)
                polled.removeAll(keepingCapacity: true)
                fds.append(pollfd(fd: server.inbox.readFD, events: Int16(POLLIN), revents: 0))
                let listening = accepting && (acceptPausedUntil.map { now >= $0 } ?? true)
                if listening {
                    acceptPausedUntil = nil
                    fds.append(pollfd(fd: server.listener, events: Int16(POLLIN), revents: 0))
                }
                for connection in connections.values {
                    var events: Int16 = 0
                    if connection.wantsToRead(limits) { events |= Int16(POLLIN) }
                    if connection.unsentBytes > 0 { events |= Int16(POLLOUT) }
                    // A connection waiting on its commands is not polled: a hung-up peer
                    // would otherwise report POLLHUP on every pass.
                    guard events != 0 else { continue }
                    fds.append(pollfd(fd: connection.fd, events: events, revents: 0))
                    polled.append(connection)
                }
                let firstNetwork = fds.count
                for fd in network?.descriptors ?? [] { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
                let ready = fds.withUnsafeMutableBufferPointer { buffer in
                    poll(buffer.baseAddress, nfds_t(buffer.count), pollTimeout(now: now))
                }
                if ready < 0 && errno != EINTR {
                    logger.error("poll failed: \(errnoText()); notifyd can no longer serve its socket")
                    return
                }
                let after = monotonicSeconds()
                if ready > 0 {
                    quietDue = after + limits.quietPeriod
                    server.quietPending.store(true, ordering: .relaxed)
                } else if let due = quietDue, after >= due {
                    quietDue = nil
                    server.quietPending.store(false, ordering: .relaxed)
                    server.whenQuiet()
                }
                if fds[0].revents != 0 {
                    for message in server.inbox.take() { handle(message, now: after) }
                }
                if listening && fds[1].revents != 0 { acceptPending(now: after) }
                let first = listening ? 2 : 1
                for (index, connection) in polled.enumerated() where fds[first + index].revents != 0 {
                    guard connections[connection.number] === connection else { continue }
                    serve(connection, revents: fds[first + index].revents, scratch: scratch, now: after)
                }
                if let network = network {
                    for index in firstNetwork..<fds.count where fds[index].revents != 0 {
                        network.readable(fds[index].fd, scratch: scratch, now: after)
                    }
                    network.pass(now: after)
                }
                closeStalled(now: after)
                for line in refusals.due(now: after) { logger.warning(line) }
                if finishDraining(now: after) { return }
            }
        }

        /// Closes what is left and resumes whoever waits on a loop that is gone.
        func end() {
            for line in refusals.due(now: monotonicSeconds(), flushAll: true) { logger.warning(line) }
            for connection in Array(connections.values) { close(connection, why: nil) }
            for message in server.inbox.close() {
                switch message {
                case .stopAccepting(let waiter), .drain(_, let waiter): waiter.resume()
                case .replies, .watch, .event, .activity: break
                }
            }
            for waiter in drainWaiters { waiter.resume() }
            drainWaiters = []
            network?.close()
        }

        /// Milliseconds until the next deadline, or -1: nothing to wait for, no wake-ups.
        private func pollTimeout(now: Double) -> Int32 {
            var deadlines: [Double] = connections.values.compactMap { $0.stalledSince.map { $0 + limits.drainTimeout } }
            if let acceptPausedUntil { deadlines.append(acceptPausedUntil) }
            if let drainDeadline { deadlines.append(drainDeadline) }
            if let refusalsDue = refusals.nextDeadline { deadlines.append(refusalsDue) }
            if let quietDue { deadlines.append(quietDue) }
            if let networkDue = network?.deadline { deadlines.append(networkDue) }
            guard let next = deadlines.min() else { return -1 }
            return Int32(max(0, min((next - now) * 1000, 60_000)).rounded(.up))
        }

        private func handle(_ message: LoopInbox.Message, now: Double) {
            switch message {
            case .replies(let number, let replies):
                guard let connection = connections[number] else { return }
                for (sequence, bytes) in replies { connection.replyArrived(sequence: sequence, bytes: bytes) }
                pump(connection, now: now)
            case .watch(let number):
                guard let connection = connections[number], !connection.watching else { return }
                connection.startWatching()
                server.watchers.add(1, ordering: .relaxed)
            case .activity:
                break
            case .event(let bytes):
                for connection in connections.values where connection.watching {
                    connection.event(bytes, limits: limits)
                    flush(connection, now: now)
                }
            case .stopAccepting(let waiter):
                accepting = false
                waiter.resume()
            case .drain(let grace, let waiter):
                accepting = false
                drainDeadline = min(drainDeadline ?? .infinity, now + grace)
                drainWaiters.append(waiter)
                for connection in connections.values { connection.stopReading() }
            }
        }

        private func acceptPending(now: Double) {
            // A bounded batch per pass keeps a connection storm from starving the clients.
            for _ in 0..<64 {
                let fd = acceptClosingOnExec(server.listener)
                guard fd >= 0 else {
                    switch errno {
                    case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED:
                        break
                    default:
                        // Out of file descriptors and the like: the listener stays readable,
                        // so stop polling it for a moment instead of spinning.
                        logger.warning("cannot accept a connection: \(errnoText()); trying again shortly")
                        acceptPausedUntil = now + 0.1
                    }
                    return
                }
                admit(fd, now: now)
            }
        }

        private func admit(_ fd: Int32, now: Double) {
            UnixSocket.prepareAcceptedSocket(fd)
            // Only the user who owns the daemon (or root) may talk to it, whatever the file
            // mode says; checked before a byte is read. A peer the system cannot name is
            // not known to be that user, and is refused too.
            guard let peer = server.peerUID(fd) else {
                refused("whose uid the system does not tell", because: "notifyd serves uid \(ownUID) only", now: now)
                closeDescriptor(fd)
                return
            }
            if !TrustedUser.includes(peer, own: ownUID) {
                refused("from uid \(peer)", because: "notifyd serves uid \(ownUID) only", now: now)
                closeDescriptor(fd)
                return
            }
            let limit = server.clientLimit.load(ordering: .relaxed)
            if connections.count >= limit {
                refused("beyond the limit", because: "\(limit) connections are open already", now: now)
                let refusal = Reply.failure(nil, WireError(code: .tooManyConnections, message: "notifyd already serves \(limit) connections; try again once some have closed"))
                _ = refusal.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, sendFlags | Int32(MSG_DONTWAIT)) }
                closeDescriptor(fd)
                return
            }
            let number = nextNumber
            nextNumber += 1
            let runner = RequestRunner(connection: ConnectionHandle(number: number, server: server), handler: server.handler, inbox: server.inbox,
                                       tasks: server.requestsUnderWay)
            connections[number] = ClientConnection(fd: fd, number: number, runner: runner)
            logger.debug("connection \(number) opened")
        }

        private func refused(_ reason: String, because detail: String, now: Double) {
            if let line = refusals.refused(reason, because: detail, now: now) { logger.warning(line) }
        }

        private func serve(_ connection: ClientConnection, revents: Int16, scratch: UnsafeMutableRawBufferPointer, now: Double) {
            if revents & Int16(POLLOUT) != 0 || revents & Int16(POLLHUP | POLLERR) != 0 && connection.unsentBytes > 0 {
                guard flush(connection, now: now) else { return }
            }
            if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 && connection.wantsToRead(limits) {
                if connection.readAvailable(into: scratch) == .failed {
                    // A client that goes with replies unread resets the connection: its own
                    // business, said at debug level (a script in a loop would fill the journal).
                    let reset = errno == ECONNRESET
                    close(connection, why: reset ? nil : "read failed: \(errnoText())")
                    return
                }
            }
            pump(connection, now: now)
        }

        /// Starts every request the limits allow, writes what can be written, and closes
        /// the connection once everything owed has gone out.
        ///
        /// Replies made at once can reach the output's high-water mark with lines still in
        /// the buffer; when the write then takes all of it, nothing else would wake the
        /// loop for those lines (their bytes have all been read), so it goes round again
        /// for as long as a round takes lines.
        private func pump(_ connection: ClientConnection, now: Double) {
            var tookLines = true
            while tookLines {
                tookLines = false
                while let line = connection.nextLine(limits) {
                    tookLines = true
                    switch line {
                    case .request(let bytes):
                        if let reply = server.handler.immediateReply(to: bytes, afterRunningCommands: connection.commandsRunning > 0) {
                            connection.answer(reply)
                        } else {
                            connection.dispatch(bytes)
                        }
                    case .tooLong:
                        connection.refuseRest(with: Reply.failure(nil, WireError(code: .lineTooLong, message: "request line longer than \(limits.maximumLineLength) bytes; closing the connection")))
                    }
                }
                connection.startBatch()
                guard flush(connection, now: now) else { return }
            }
            if connection.isDone { close(connection, why: nil) }
        }

        /// Writes what the socket takes; false when the connection had to be closed.
        @discardableResult
        private func flush(_ connection: ClientConnection, now: Double) -> Bool {
            guard connection.unsentBytes > 0 else { return true }
            if connection.flush(now: now, limits: limits) == .failed {
                close(connection, why: nil)
                return false
            }
            return true
        }

        private func closeStalled(now: Double) {
            for connection in connections.values {
                guard let since = connection.stalledSince, now - since >= limits.drainTimeout else { continue }
                close(connection, why: "it read none of its \(connection.unsentBytes) bytes of replies for \(Int(limits.drainTimeout)) s")
            }
        }

        private func close(_ connection: ClientConnection, why: String?) {
            guard connections.removeValue(forKey: connection.number) != nil else { return }
            if connection.watching { server.watchers.subtract(1, ordering: .relaxed) }
            connection.close()
            if let why {
                logger.warning("closed connection \(connection.number): \(why)")
            } else {
                logger.debug("connection \(connection.number) closed")
            }
        }

        /// At shutdown: true once every connection is closed and the loop may end.
        private func finishDraining(now: Double) -> Bool {
            guard let deadline = drainDeadline else { return false }
            for connection in connections.values where connection.isDone || now >= deadline {
                close(connection, why: nil)
            }
            return connections.isEmpty
        }
    }
}
