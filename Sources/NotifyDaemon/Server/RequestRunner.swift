import NotifySystem
import Synchronization

/// Runs one connection's requests in arrival order, so commands change state in that
/// order, and hands their replies back to the event loop.
///
/// Work moves between the loop thread and the concurrency pool in batches: the loop
/// adds every line it read in one pass, one task runs them all, and the replies that are
/// ready at once go back in one message. Handing over each line and each reply on its
/// own cost two thread wake-ups per request, most of the time a pipelined ping took.
final class RequestRunner: Sendable {
    struct Request: Sendable {
        let sequence: UInt64
        let line: [UInt8]
    }

    private struct Queue {
        var waiting: [Request] = []
        var running = false
    }

    /// How many requests one connection runs before it lets other work have the thread.
    static let requestsBetweenYields = 64

    private let queue = Mutex(Queue())
    private let connection: ConnectionHandle
    private let handler: any RequestHandler
    private let inbox: LoopInbox
    /// The server's: its stop waits for them.
    private let tasks: TrackedTasks

    init(connection: ConnectionHandle, handler: any RequestHandler, inbox: LoopInbox, tasks: TrackedTasks) {
        self.connection = connection
        self.handler = handler
        self.inbox = inbox
        self.tasks = tasks
    }

    /// Called by the loop with the lines of one pass; starts a task unless one is running.
    func add(_ requests: [Request]) {
        guard !requests.isEmpty else { return }
        let start = queue.withLock { queue in
            queue.waiting.append(contentsOf: requests)
            defer { queue.running = true }
            return !queue.running
        }
        if start && !tasks.start({ await self.run() }) {
            queue.withLock { $0 = Queue() }
        }
    }

    private func startWaiting(_ waiting: inout [(UInt64, @Sendable () async -> [UInt8])]) {
        let (inbox, number) = (inbox, connection.number)
        for (sequence, produce) in waiting {
            tasks.start { inbox.post(.replies(connection: number, [(sequence, await produce())])) }
        }
        waiting = []
    }

    private func run() async {
        while true {
            let batch = queue.withLock { queue in
                defer { queue.waiting = [] }
                if queue.waiting.isEmpty { queue.running = false }
                return queue.waiting
            }
            guard !batch.isEmpty else { return }
            await run(batch, with: handler)
            await Task.yield()
        }
    }

    /// Runs one batch, with the handler's own type at hand for what it reads.
    private func run<Handler: RequestHandler>(_ batch: [Request], with handler: Handler) async {
        var ready: [(UInt64, [UInt8])] = []
        var waiting: [(UInt64, @Sendable () async -> [UInt8])] = []
        for (index, request) in batch.enumerated() {
            // Most requests are answered without suspending (a ping, a bad line), so a
            // client that pipelines without pause would otherwise keep one of the
            // pool's few threads for as long as it writes, and every other client's
            // work and every actor would wait: give the thread up now and then.
            if index > 0 && index.isMultiple(of: Self.requestsBetweenYields) { await Task.yield() }
            let read = handler.read(request.line)
            // The waits overlap one another and the requests after them; those of a
            // run of sends start once the run is handled, so that they share one write.
            if !waiting.isEmpty && !handler.joinsBatch(read) { startWaiting(&waiting) }
            switch await handler.handle(read, from: connection) {
            case .now(let bytes):
                ready.append((request.sequence, bytes))
            case .later(let produce):
                waiting.append((request.sequence, produce))
            }
        }
        startWaiting(&waiting)
        inbox.post(.replies(connection: connection.number, ready))
    }
}
