#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySystem

/// Sends notifications through the backend and keeps what it could not send yet.
///
/// Every accepted message is on disk before the sender hears so, and leaves the disk only
/// once the backend answered 200: delivery is at least once (a crash between the 200 and
/// the removal sends it again after restart), in order per recipient and platform, and
/// nothing is dropped silently (expired and failed entries stay listed until purged).
/// Each message is sent as the account that queued it, or held until that account logs in
/// again: never in another account's name.
public actor Outbox: Service {
    // What is not private here is shared with the extensions: Outbox+Commit.swift (a send
    // written and queued), Outbox+Commands.swift (`outbox` and `send --no-queue`),
    // Outbox+Senders.swift (the senders waiting for their answer), Outbox+Attempt.swift (one
    // request to the backend), Outbox+Lanes.swift (a recipient's requests in a row) and
    // Outbox+Outcomes.swift (an attempt's outcome written and told). Each part of the state
    // below is a value of its own that keeps its invariants; the extensions go through it.
    /// Read where each setting is used; `settingsChanged` takes up a reload.
    let settings: SettingsStore
    let store: OutboxStore
    /// The group commit's batches, one after another.
    let commitWriter = FileWriter(name: "notifyd-commit")
    /// Every other change to the outbox's files, in the order the actor makes them. Apart
    /// from the batches: a message sent is removed at once, not after a batch of later
    /// sends is written (a delivery's own changes all come after its batch is on disk).
    let writer = FileWriter(name: "notifyd-outbox")
    let backend: any BackendAPI
    /// The backend's lanes, where it keeps them (`Outbox+Lanes.swift`).
    let backendLanes: (any BackendLanes)?
    let clock: any WakeClock
    let logger: Logger
    let accounts: AccountKeeper
    let onEvent: @Sendable (DeliveryStatus) -> Void
    /// Called when an attempt (or an expiry) ends and nothing is under way, waiting or being
    /// written any more: the end of a burst, which the socket may not have seen (its
    /// senders had their answer).
    let onEmptied: @Sendable () -> Void
    /// Told of each delivery, of whether deliveries wait on a backend that failed, and
    /// since when they found no route to it; judges failures the network may explain.
    let recovery: BackendRecovery?
    /// The platform names backends refused registrations under: a 500 to a send under one
    /// of them is that name, not an outage (`UnknownPlatforms`).
    let unknownPlatforms: UnknownPlatforms

    /// Each change publishes the counts `status` shows (`countsShown`).
    var queue: OutboxQueue {
        didSet { countsShown.publish(queue.counts) }
    }
    /// What `status` shows of the queue, read without a hop onto the outbox (`StatusPart`).
    nonisolated let countsShown: StatusPart<OutboxCounts>
    /// New sends gathering into batches, and the batch being written (Outbox+Commit.swift).
    var commits = GroupCommit()
    /// The attempts under way where the transport keeps no lanes (`pump`): shutdown waits for them.
    var attempts: [String: Task<Void, Never>] = [:]
    /// Each key's lane while it has deliveries in flight, where the transport keeps lanes
    /// (Outbox+Lanes.swift).
    var lanes = OutboxLanes()
    /// The backend's answers to lane requests, on their way from the HTTP thread.
    let answers = LaneAnswers()
    /// Attempts' outcomes on their way to their senders: being written, kept until the
    /// sender asks, or dropped (Outbox+Outcomes.swift).
    var outcomes = PendingOutcomes()
    /// The senders waiting for their answer, and the timer for their deadlines
    /// (Outbox+Senders.swift).
    var waiters = SenderWaiters()
    /// The one timer for retries and expiries.
    private var wake = WakeTimer<Date>()
    /// Set by shutdown: no send is accepted and no attempt starts after it.
    var stopped = false

    public init(settings: SettingsStore, stateDirectory: String, backend: any BackendAPI, clock: any WakeClock = SystemWakeClock(),
                logger: Logger, accounts: AccountKeeper, recovery: BackendRecovery? = nil, unknownPlatforms: UnknownPlatforms = UnknownPlatforms(),
                onEvent: @escaping @Sendable (DeliveryStatus) -> Void = { _ in },
                onEmptied: @escaping @Sendable () -> Void = {}, fileSystem: FileSystemCalls = .system) {
        self.settings = settings
        self.store = OutboxStore(stateDirectory: stateDirectory, calls: fileSystem)
        self.backend = backend
        self.backendLanes = backend.lanes
        self.clock = clock
        self.logger = logger
        self.accounts = accounts
        self.onEvent = onEvent
        self.onEmptied = onEmptied
        self.recovery = recovery
        self.unknownPlatforms = unknownPlatforms
        let queue = OutboxQueue(backoff: settings[\.retry], concurrency: settings[\.maxConnections], seed: UInt64.random(in: 0...UInt64.max))
        self.queue = queue
        self.countsShown = StatusPart(queue.counts)
        settings.subscribe { [weak self] in await self?.settingsChanged() }
    }

    /// Loads what a previous run left and starts sending it. A message whose turn is not
    /// near stays on disk: in memory it is an index entry (`DeferredDeliveries`), and its
    /// record is read back when it moves up (`promote`).
    public func start() async {
        let store = self.store
        do {
            // In a scope of its own: the loaded entries are gone before the first pass reads
            // records back whole, which would otherwise land in the holes they leave.
            let (loaded, highestSequence) = await writer.value { (store.loadEntries(), store.highestSequence()) }
            let (entries, warnings) = loaded
            for warning in warnings { logger.warning(warning) }
            commits.continueSequence(after: max(highestSequence, queueLoaded(entries)))
        }
        let waiting = queue.queuedCount
        if waiting > 0 { logger.notice("outbox: \(waiting == 1 ? "1 message" : "\(waiting) messages") waiting from an earlier run") }
        pump()
    }

    /// Queues what a start found on disk; returns the highest sequence among it.
    private func queueLoaded(_ entries: [OutboxStore.LoadedEntry]) -> Int {
        let account = accounts.currentKey
        queue.setAccount(account)
        let expiredBefore = entries.map(store.expiredBefore)
        let dead = zip(entries, expiredBefore).count { $0.state != .queued || $1 }
        queue.reserveDeferred(entries.count - dead)
        queue.reserveDead(dead)
        var highest = 0
        for (entry, expiredBefore) in zip(entries, expiredBefore) {
            var delivery = entry.delivery
            highest = max(highest, delivery.sequence)
            if expiredBefore {
                // Its record stays queued where it is; the mark says it expired (`recordExpired`).
                delivery.markExpired()
                queue.add(delivery, stored: entry.stored)
                continue
            }
            // Entries from before accounts were recorded belong to the login they were queued under.
            // Only a queued one: a failed or expired one is never sent, and may come without its text.
            let adopted = delivery.account == nil && account != nil && delivery.state == .queued
            if adopted { delivery.account = account }
            if let stored = entry.stored, delivery.message.isEmpty && DeferredDeliveries.fits(delivery) {
                // Written with the account once it is read back and changes.
                queue.addDeferred(delivery, stored: stored, bytes: entry.bytes)
            } else {
                if adopted { persist(delivery) }
                queue.add(delivery)
            }
        }
        return highest
    }

    /// Bounds the active part of the queue (`OutboxQueue.activeLimit`, `keyLimit`): for
    /// tests, which reach the deferred part with a few messages.
    public func setActiveLimits(_ total: Int, perKey: Int) {
        queue.setActiveLimits(total, perKey: perKey)
    }

    /// Moves the deferred deliveries whose turn has come into the active part, each read
    /// back from disk whole; one that cannot be read is kept as failed, and its file moved
    /// aside, as a start does with a file it cannot read.
    func promote() {
        let due = queue.takePromotions()
        guard !due.isEmpty else { return }
        let account = accounts.currentKey
        for (index, stored) in due {
            switch store.read(index.id, at: stored) {
            case .success(var delivery):
                delivery.senderWaiting = index.senderWaiting
                if delivery.account == nil { delivery.account = index.account ?? account }
                queue.promoted(delivery, stored: stored)
            case .failure(let problem):
                logger.warning(problem.warning)
                queue.unreadable(index, reason: problem.reason)
                if let failed = queue.delivery(index.id) { report(failed) }
            }
        }
    }

    /// After a login or logout: the new account's deliveries go out (also those held for
    /// refused credentials); the others are held.
    public func accountChanged() async {
        let account = accounts.currentKey
        let changed = account != queue.account
        guard queue.paused || changed else { return }
        queue.resume()
        queue.setAccount(account)
        let held = queue.counts.held
        logger.notice("outbox: credentials changed\(account.map { ", sending as \($0.user)" } ?? "")\(held == 0 ? "" : held == 1 ? "; 1 message of another account held" : "; \(held) messages of another account held")")
        pump()
    }

    /// A reload replaced the settings: a shorter `retry_min` or `retry_max` shortens the
    /// waits already scheduled, `max_connections` bounds the attempts started from now on,
    /// and a new `backend` (that of a login naming none) is a change of account, as after
    /// a login: the messages queued for the old one are held.
    private func settingsChanged() async {
        if queue.changeSettings(backoff: settings[\.retry], concurrency: settings[\.maxConnections]) {
            logger.info("outbox: the new retry_min or retry_max shortened the waits already scheduled")
        }
        if accounts.currentKey != queue.account {
            await accountChanged()
        } else {
            pump()
        }
    }

    /// Stops starting attempts; waits briefly for those under way (an attempt cut short
    /// stays queued and is sent after the next start).
    public func shutdown() async {
        stopped = true
        // What was collected is written before the senders hear anything, so finish that,
        // and start it for sends whose senders have not asked yet.
        startCommit()
        while let commit = commits.write { await commit.value }
        wake.cancel()
        let running = Array(attempts.values)
        // The attempts under way are cancelled at the deadline, and the lanes no longer waited for.
        await ShutdownDeadline.bound {
            for attempt in running { await attempt.value }
            await self.waitForLanes()
        } atDeadline: {
            for attempt in running { attempt.cancel() }
            await self.stopWaitingForLanes()
        }
        waiters.timer.cancel()
        release(waiters.all)
        // What the attempts handed to the writer is on disk before notifyd exits.
        await writer.drain()
    }

    // MARK: Sending

    /// `fcmv1`, `fcm` and `gcm` are one platform at the backend: one send, not three.
    func distinctAtTheBackend(_ platforms: [Platform]) -> [Platform] {
        var names = Set<String>()
        let androidName = settings[\.androidName]
        return platforms.filter { names.insert($0.backendName(android: androidName)).inserted }
    }

    /// Refuses, before anything is sent or kept, a message one of whose payloads cannot
    /// fit once the backend wraps it: Android's in the template of `android_name`.
    func checkSize(_ message: String, sender: String, platforms: [Platform]) throws(CoreError) {
        let androidName = settings[\.androidName]
        for platform in platforms {
            try NotificationText.checkSize(message, sender: sender, for: platform.atBackend(android: androidName))
        }
    }

    /// Starts what may start, arms the timer and answers the waiters that have their
    /// answer: only those of `changed` (and of what expired) when the caller knows that
    /// nothing else changed, or all of them (the default, always right). `onlyRemoved`:
    /// the caller knows that since the last pass deliveries only left the queue, which
    /// makes no retry or expiry come sooner, so the timer stays as it is armed (one that
    /// fires early finds nothing to do and arms the next) and the queue is not searched
    /// for its next time, once per message of a burst.
    func pump(changed: [String]? = nil, onlyRemoved: Bool = false) {
        guard !stopped else { return }
        let now = clock.now()
        let expired = queue.expireKeepingPlaces(now: now, beingWritten: outcomes.beingWritten)
        if !expired.isEmpty { recordExpired(expired, now: now) }
        // After a week offline, messages expire second by second for as long as they were
        // queued: each one moved up would be read whole to expire in the active part, and
        // one tried there waits whole for the writer. Held while expiries are written whole,
        // they expire as the small entries they are, and move up once those are written.
        if !outcomes.expiryBeingWritten { promote() }
        let keepsLanes = backendLanes != nil
        let ready = queue.takeReady(now: now, depth: keepsLanes ? Self.laneDepth : 1, unchained: keepsLanes ? lanes.brokenKeys : [],
                                    requestsPerConnection: backend.requestsPerConnection, beingWritten: outcomes.beingWritten)
        for delivery in ready {
            if let backendLanes {
                handToLane(delivery, backendLanes)
                continue
            }
            // One task per attempt where the transport keeps no lanes (URLSession, on macOS;
            // a test's scripted backend): kept in `attempts`, which shutdown waits for.
            attempts[delivery.id] = Task {
                let result = await self.attempt(delivery)
                await self.finished(delivery.id, result)
            }
        }
        if !onlyRemoved { scheduleWake() }
        // Those of the expired deliveries hear once the expiry is written (`recordExpired`).
        releaseSettledWaiters(among: changed)
        recovery?.setWaiting(.outbox, queue.waitsOnBackend)
        recovery?.setOffline(.outbox, since: queue.offlineSince)
    }

    /// Writes the deliveries that expired at `now`, then tells their senders. Those tried
    /// are written whole, with their attempts and last error; those never tried have their
    /// records left as they were queued: one mark says they expired (`OutboxExpiryMark`),
    /// however many they are, unless the clock is behind the mark (then they are written
    /// whole as well).
    private func recordExpired(_ expired: OutboxQueue.Expired, now: Date) {
        logExpired(expired)
        let ids = expired.ids
        for id in ids { outcomes.writing(id) }
        // Handed over now, in order with the other changes (a cancel's removal after it);
        // awaited below. A job per part, not one per message: 100,000 may expire at once.
        let (store, logger) = (self.store, self.logger)
        let whole = expired.whole.map(persisting)
        if !whole.isEmpty {
            writer.enqueue { for write in whole { write() } }
            // Promotion waits for these, which wait for the writer whole: what moved up
            // meanwhile could expire in the active part and wait whole as well. A task from
            // the writer's thread: the end of these is the outbox's to act on.
            outcomes.expiryWriteStarted()
            writer.enqueue { Task { await self.wholeExpiriesWritten() } }
        }
        if !expired.inPlace.isEmpty {
            let (inPlace, beingTried) = (expired.inPlace, expired.beingTried)
            // On the writer's thread, after the changes handed over before it: a record the
            // mark cannot cover is read back there.
            writer.enqueue {
                for problem in store.recordExpiry(of: inPlace, at: now, beingTried: beingTried) { logger.error(problem) }
            }
        }
        // After the writes, without holding up this pass: the senders hear of an expiry
        // only once it is on disk (`outcomes.beingWritten` keeps them waiting meanwhile).
        Task {
            await writer.drain()
            for delivery in expired.whole {
                outcomes.written(delivery.id)
                if queue.stillHolds(delivery) { report(delivery) }
            }
            for gone in expired.inPlace {
                let id = gone.id
                outcomes.written(id)
                // As `dead` keeps it, unless a cancel or purge took it meanwhile.
                guard var delivery = queue.delivery(id) else { continue }
                delivery.senderWaiting = gone.senderWaiting
                report(delivery)
            }
            pump(changed: ids)
            releaseIfEmptied()
        }
    }

    /// The expiries written whole handed over before are written: what waits behind may
    /// move up again.
    private func wholeExpiriesWritten() {
        outcomes.expiryWriteDone()
        pump()
    }

    /// Each expiry in the log, up to a few; the rest in one line: after a week offline,
    /// everything queued may expire at once.
    private func logExpired(_ expired: OutboxQueue.Expired) {
        let shown = 10
        for delivery in expired.whole.prefix(shown) {
            logger.warning("outbox: message \(delivery.id) to \(delivery.to) expired undelivered after \(delivery.attempts == 1 ? "1 attempt" : "\(delivery.attempts) attempts")")
        }
        for gone in expired.inPlace.prefix(max(0, shown - expired.whole.count)) {
            logger.warning("outbox: message \(gone.id) expired undelivered")
        }
        if expired.count > shown {
            logger.warning("outbox: \(expired.count - shown) more messages expired undelivered; `notifyctl outbox` lists them")
        }
    }

    /// The backend at `backend` answered another request: deliveries waiting on it after
    /// a failure go out now.
    public func backendWorks(_ backend: String) {
        guard queue.backendWorks(backend) else { return }
        logger.info("outbox: \(BackendText.withoutUserInfo(backend)) answered; retrying what waited on it")
        pump()
    }

    /// The network changed or the machine woke: deliveries waiting on the network, or on
    /// their own backoff after a failure, go now; the timer is set again, since a wall
    /// clock that was set makes the one armed wrong.
    public func networkChanged(_ change: NetworkChange) {
        if queue.networkMayBeBack() { logger.info("outbox: the network changed; retrying what waited on it") }
        if change == .clockSet { wake.cancel() }
        pump()
    }

    // MARK: The retry timer

    /// Arms the timer for the next retry or expiry, only when that is sooner than the time
    /// it is armed for: a cancelled sleep keeps its system timer, and the memory behind it,
    /// until its time comes (a week for an expiry), so re-arming on every pass would pile
    /// up one per send. A timer that fires early finds nothing to do and arms the next.
    private func scheduleWake() {
        guard let date = queue.nextWake(now: clock.now(), beingWritten: outcomes.beingWritten) else { return }
        wake.arm(at: date, on: clock, soonerOnly: true) { await self.wakeFired(at: $0) }
    }

    private func wakeFired(at date: Date) {
        wake.fired(at: date)
        pump()
    }
}
