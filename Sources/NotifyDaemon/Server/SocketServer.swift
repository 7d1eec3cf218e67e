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

/// Serves every connection from one thread blocked in poll(), as ssh-agent does: the
/// listening socket, every client socket and the inbox through which commands hand
/// back their replies. Sockets are non-blocking, so no client can stall another, and
/// threads do not grow with clients. Commands run in the actors they always ran in;
/// each connection's requests run in order (see `RequestRunner`).
final class SocketServer: Sendable {
    // What is not private here is shared with its loop (SocketServer+EventLoop.swift).
    let listener: Int32
    let handler: any RequestHandler
    let logger: Logger
    let limits: ServerLimits
    let inbox: LoopInbox
    /// Requests being handled and replies being produced, which `finishRequests` ends.
    let requestsUnderWay = TrackedTasks()
    let watchers = Atomic<Int>(0)
    let whenQuiet: @Sendable () -> Void
    /// Whether the loop will call `whenQuiet` anyway, after activity it has seen.
    let quietPending = Atomic<Bool>(false)
    private let openFiles: Int
    /// Clients served at once: `limits.maximumConnections`, or fewer under the open-file
    /// limit, after what the daemon keeps for itself (`keepForTheDaemon`).
    let clientLimit = Atomic<Int>(1)
    /// Who is at the other end of an accepted socket, or nil when the system will not say.
    let peerUID: @Sendable (Int32) -> UInt32?
    /// Handed to the loop at `start`, whose thread alone uses it from then on.
    private let network: Mutex<NetworkMonitor?>

    /// `whenQuiet` runs on the loop's thread once activity has stopped for
    /// `limits.quietPeriod`; an idle loop never calls it. `peerUID` is the system's answer
    /// except in tests, which play peers that no unprivileged process can be.
    init(listener: Int32, handler: any RequestHandler, limits: ServerLimits, logger: Logger,
         network: sending NetworkMonitor? = nil, whenQuiet: @escaping @Sendable () -> Void = {},
         peerUID: @escaping @Sendable (Int32) -> UInt32? = { UnixSocket.peerUID($0) }) throws {
        self.listener = listener
        self.handler = handler
        self.logger = logger
        self.whenQuiet = whenQuiet
        self.peerUID = peerUID
        do {
            self.inbox = try LoopInbox()
        } catch {
            // Its owner from here on, even when there is no loop to hand it to.
            network?.close()
            throw error
        }
        self.network = Mutex(network)
        self.openFiles = OpenFileLimit.raise()
        self.limits = limits
        keepForTheDaemon(limits.descriptorsForTheDaemon)
        // poll() says when to accept; accept() itself must never block.
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
    }

    /// Sizes the clients' share of the open-file limit for `kept` descriptors of the
    /// daemon's own: at start, and when a reload changes `max_connections`. Connections
    /// open beyond a smaller share stay open; the next is refused.
    func keepForTheDaemon(_ kept: Int) {
        let share = OpenFileLimit.clientShare(of: openFiles, wanted: limits.maximumConnections, keeping: kept)
        if share < min(limits.maximumConnections, OpenFileLimit.fewClients) {
            logger.warning("the open-file limit of \(openFiles) leaves room for \(share) client connection(s) at once "
                           + "(notifyd keeps \(kept) descriptors for its backend connections and files); "
                           + "raise it (LimitNOFILE= in the service, or ulimit -n) to let more clients in")
        }
        clientLimit.store(share, ordering: .relaxed)
    }

    func start() {
        let loop = EventLoop(server: self, network: network.withLock { $0.take() })
        NativeThread.start(name: "notifyd-sockets") {
            loop.run()
            loop.end()
        }
    }

    /// Stops accepting; the listening fd is left to its owner.
    func stopAccepting() async {
        await askLoop { .stopAccepting($0) }
    }

    /// Reads no more requests, writes the replies already owed (for at most `grace`
    /// seconds), then closes every connection and ends the loop.
    func closeConnections() async {
        await askLoop { [grace = limits.shutdownGrace] in .drain(grace: grace, $0) }
    }

    /// Hands the loop `message`, which carries a waiter the loop resumes once it has done
    /// what the message asks; at once if the loop has ended.
    private func askLoop(_ message: (CheckedContinuation<Void, Never>) -> LoopInbox.Message) async {
        // A continuation: the bridge back from the loop's thread, resumed once, by it or here.
        await withCheckedContinuation { waiter in
            if !inbox.post(message(waiter)) { waiter.resume() }
        }
    }

    /// After `closeConnections`: waits for the requests still being handled, those that
    /// wait on something that will not come for at most the shutdown grace, then cancelled.
    func finishRequests() async {
        let cancelled = await requestsUnderWay.stopAndWait(cancellingAfter: limits.shutdownGrace)
        if cancelled > 0 { logger.info("\(cancelled) request(s) still waiting were cancelled at the stop") }
    }

    var hasWatchers: Bool { watchers.load(ordering: .relaxed) > 0 }

    /// Sends an encoded event line to every watcher.
    func broadcast(_ line: [UInt8]) {
        inbox.post(.event(line))
    }

    /// Counts as activity, so the loop goes quiet (and calls `whenQuiet`) after it too;
    /// costs nothing when a call is due anyway, as after the sends of a socket client.
    func noteActivity() {
        guard !quietPending.load(ordering: .relaxed) else { return }
        inbox.post(.activity)
    }

    func watch(_ connection: ConnectionHandle) {
        inbox.post(.watch(connection: connection.number))
    }
}
