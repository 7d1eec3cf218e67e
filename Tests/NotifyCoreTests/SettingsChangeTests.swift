import Foundation
import NotifyProtocol
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// Each part of NotifyCore after the settings in its `SettingsStore` were replaced, as a
/// reload does: what it does next follows the new value.
@Suite struct SettingsChangeTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }
    static let tenSeconds = Backoff(initial: 10, multiplier: 4, maximum: 1000)
    static let oneSecond = Backoff(initial: 1, multiplier: 4, maximum: 1000)
    static let hundredSeconds = Backoff(initial: 100, multiplier: 4, maximum: 1000)

    // MARK: The registration machine

    @Test func aShorterBackoffShortensTheRegistrationsWaitALongerOneWaitsForTheNextFailure() throws {
        let policy = RegistrationPolicy(refreshInterval: 3600, backoff: Self.tenSeconds, debounce: 0)
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: policy)
        _ = machine.update(RegistrationMachineTests.complete(), now: Self.start)
        _ = machine.stepFinished(.failed(.transient(retryAfter: nil, reason: "down")), now: Self.start)
        let scheduled = try #require(machine.retryAt)

        var longer = policy
        longer.backoff = Self.hundredSeconds
        #expect(RegistrationMachineTests.performed(machine.changePolicy(longer, now: Self.at(0.1))).isEmpty)
        #expect(machine.retryAt == scheduled, "a longer backoff applies from the next failure")

        var shorter = policy
        shorter.backoff = Self.oneSecond
        let actions = machine.changePolicy(shorter, now: Self.at(0.1))
        let sooner = try #require(machine.retryAt)
        // The same draw of jitter, for a first step of 1 s instead of 10 s.
        #expect(abs(sooner.timeIntervalSince(Self.start) - scheduled.timeIntervalSince(Self.start) / 10) < 1e-6)
        #expect(RegistrationMachineTests.wake(actions) == sooner)
        #expect(!RegistrationMachineTests.performed(machine.wake(now: sooner)).isEmpty, "tried again then")
    }

    /// A wait for the network, which the monitor ends, is bounded by the backoff's ceiling
    /// (30 min, or `retry_max` when longer): a shorter retry_max shortens it down to 30 min.
    @Test func aShorterRetryMaxShortensARegistrationsWaitForTheNetwork() throws {
        let policy = RegistrationPolicy(refreshInterval: 3600, backoff: Self.patient, debounce: 0)
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: policy)
        _ = machine.update(RegistrationMachineTests.complete(), now: Self.start)
        _ = machine.stepFinished(.failed(.offline(reason: "no route")), now: Self.start)
        #expect(machine.retryAt == Self.at(4000))

        var shorter = policy
        shorter.backoff.maximum = 2000
        #expect(RegistrationMachineTests.wake(machine.changePolicy(shorter, now: Self.at(1))) == Self.at(2000))
        #expect(machine.retryAt == Self.at(2000))
        shorter.backoff.maximum = 60
        #expect(RegistrationMachineTests.wake(machine.changePolicy(shorter, now: Self.at(2))) == Self.at(1800))
    }

    /// A `retry_max` above 30 min, and so the cap of a `Retry-After`.
    static let patient = Backoff(initial: 10, multiplier: 4, maximum: 4000)
    static let capNote = "the backend asked to wait 9000 s, capped at the larger of retry_max and 30 min"

    /// `status` names the cap that cut the backend's `Retry-After` short: after a reload,
    /// the one the wait now ends at, which is never below 30 min.
    @Test func aShorterRetryMaxIsTheCapTheRegistrationsStatusNames() throws {
        let policy = RegistrationPolicy(refreshInterval: 3600, backoff: Self.patient, debounce: 0)
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: policy)
        _ = machine.update(RegistrationMachineTests.complete(), now: Self.start)
        _ = machine.stepFinished(.failed(.transient(retryAfter: 9000, reason: "HTTP 503 from the backend")), now: Self.start)
        #expect(machine.lastReason == "HTTP 503 from the backend; \(Self.capNote) (4000 s)")

        var longer = policy
        longer.backoff.maximum = 5000
        _ = machine.changePolicy(longer, now: Self.at(1))
        #expect(machine.lastReason?.hasSuffix("(4000 s)") == true, "the wait still ends at the old cap")

        var shorter = policy
        shorter.backoff.maximum = 2000
        _ = machine.changePolicy(shorter, now: Self.at(1))
        #expect(machine.retryAt == Self.at(2000))
        #expect(machine.lastReason == "HTTP 503 from the backend; \(Self.capNote) (2000 s)")

        shorter.backoff.maximum = 60
        _ = machine.changePolicy(shorter, now: Self.at(2))
        #expect(machine.retryAt == Self.at(1800), "a Retry-After is honoured up to 30 min whatever retry_max")
        #expect(machine.lastReason == "HTTP 503 from the backend; \(Self.capNote) (1800 s)")
    }

    @Test func aNewRefreshIntervalReArmsTheRefresh() {
        var machine = RegistrationMachineTests.registered()
        let actions = machine.changePolicy(RegistrationPolicy(refreshInterval: 60, backoff: Self.tenSeconds, debounce: 0), now: Self.at(10))
        #expect(RegistrationMachineTests.wake(actions) == Self.at(60))
        #expect(machine.status.nextAttemptAt == Self.at(60))
        let overdue = machine.changePolicy(RegistrationPolicy(refreshInterval: 5, backoff: Self.tenSeconds, debounce: 0), now: Self.at(10))
        #expect(!RegistrationMachineTests.performed(overdue).isEmpty, "a refresh already due goes now")
    }

    // MARK: The outbox queue

    @Test func aShorterBackoffShortensTheWaitOfQueuedMessagesALongerOneWaitsForTheNextFailure() throws {
        let first = OutboxQueueTests.delivery(1)
        var queue = OutboxQueueTests.queue([first], backoff: Self.tenSeconds)
        _ = queue.takeReady(now: Self.start)
        queue.finished(first.id, .transient(retryAfter: nil, error: OutboxQueueTests.unavailable), now: Self.start)
        let scheduled = try #require(queue.delivery(first.id)?.nextAttemptAt)

        let lengthened = queue.changeSettings(backoff: Self.hundredSeconds, concurrency: 4)
        #expect(!lengthened)
        #expect(queue.delivery(first.id)?.nextAttemptAt == scheduled)

        let shortened = queue.changeSettings(backoff: Self.oneSecond, concurrency: 4)
        #expect(shortened)
        let sooner = try #require(queue.delivery(first.id)?.nextAttemptAt)
        #expect(abs(sooner.timeIntervalSince(Self.start) - scheduled.timeIntervalSince(Self.start) / 10) < 1e-6)
        #expect(queue.nextWake(now: Self.start) == sooner)
        #expect(OutboxQueueTests.ids(queue.takeReady(now: sooner)) == [first.id])
    }

    @Test func aShorterRetryMaxShortensAQueuedMessagesWaitForTheNetwork() throws {
        let first = OutboxQueueTests.delivery(1)
        var queue = OutboxQueueTests.queue([first], backoff: Self.patient)
        _ = queue.takeReady(now: Self.start)
        queue.finished(first.id, .offline(OutboxQueueTests.unavailable), now: Self.start)
        #expect(queue.delivery(first.id)?.nextAttemptAt == Self.at(4000))

        var shorter = Self.patient
        shorter.maximum = 60
        let shortened = queue.changeSettings(backoff: shorter, concurrency: 4)
        #expect(shortened)
        #expect(queue.delivery(first.id)?.nextAttemptAt == Self.at(1800))
    }

    @Test func aShorterRetryMaxIsTheCapAQueuedMessagesErrorNames() throws {
        let first = OutboxQueueTests.delivery(1)
        var queue = OutboxQueueTests.queue([first], backoff: Self.patient)
        _ = queue.takeReady(now: Self.start)
        queue.finished(first.id, .transient(retryAfter: 9000, error: OutboxQueueTests.unavailable), now: Self.start)
        let before = try #require(queue.delivery(first.id)?.lastError?.message)
        #expect(before.hasSuffix(" (\(Self.capNote) (4000 s))"))

        var longer = Self.patient
        longer.maximum = 5000
        _ = queue.changeSettings(backoff: longer, concurrency: 4)
        #expect(queue.delivery(first.id)?.lastError?.message == before, "the wait still ends at the old cap")

        var shorter = Self.patient
        shorter.maximum = 60
        let shortened = queue.changeSettings(backoff: shorter, concurrency: 4)
        #expect(shortened)
        #expect(queue.delivery(first.id)?.nextAttemptAt == Self.at(1800), "a Retry-After is honoured up to 30 min whatever retry_max")
        #expect(queue.delivery(first.id)?.lastError?.message == before.replacingOccurrences(of: "(4000 s)", with: "(1800 s)"))
    }

    @Test func anotherConcurrencyBoundsWhatStartsNext() {
        let deliveries = (1...6).map { OutboxQueueTests.delivery($0, to: "user\($0)") }
        var queue = OutboxQueueTests.queue(deliveries, concurrency: 1)
        #expect(queue.takeReady(now: Self.start).count == 1)
        _ = queue.changeSettings(backoff: Self.tenSeconds, concurrency: 4)
        #expect(queue.takeReady(now: Self.start).count == 3, "four under way in all")
    }

    // MARK: The HTTP client

    @Test func eachRequestTakesTheTimeoutInEffectWhenItIsMade() async throws {
        let server = try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil {
                usleep(1_000_000)
                connection.write(HTTPTransportTests.okReply)
            }
        }
        defer { server.stop() }
        let settings = SettingsStore(.init(requestTimeout: 30))
        let transport = HTTPTransportTests.transport(settings)
        defer { transport.invalidate() }
        guard case .response(200, _, _, _) = await transport.perform(HTTPTransportTests.post(server)) else {
            Issue.record("a second is within 30 s")
            return
        }
        await settings.publish(.init(requestTimeout: 0.2))
        let outcome = await transport.perform(HTTPTransportTests.post(server))
        guard case .failed(let failure) = outcome else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
        #expect(failure.kind == .timedOut)
    }

    #if !canImport(Darwin)
    @Test func thePoolTakesTheNewMaxConnections() async throws {
        let server = try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil {
                usleep(20_000)
                connection.write(HTTPTransportTests.okReply)
            }
        }
        defer { server.stop() }
        let settings = SettingsStore(.init(maxConnections: 1))
        let transport = HTTPTransportTests.transport(settings)
        defer { transport.invalidate() }
        func burst() async -> Int {
            let request = HTTPTransportTests.post(server)
            return await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        if case .response(200, _, _, _) = await transport.perform(request) { return true }
                        return false
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        #expect(await burst() == 8)
        #expect(server.counts.mostOpen == 1)

        await settings.publish(.init(maxConnections: 4))
        #expect(await burst() == 8)
        #expect(server.counts.mostOpen >= 2, "more side by side once the pool may hold them")
        #expect(server.counts.mostOpen <= 4)
    }

    /// A smaller pool closes the idle connections it no longer holds: the clients' share of
    /// the open-file limit counts on them being gone.
    @Test func aSmallerPoolClosesItsSpareIdleConnections() async throws {
        let server = try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil {
                usleep(20_000)
                connection.write(HTTPTransportTests.okReply)
            }
        }
        defer { server.stop() }
        let settings = SettingsStore(.init(maxConnections: 4))
        let transport = HTTPTransportTests.transport(settings)
        defer { transport.invalidate() }
        let request = HTTPTransportTests.post(server)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { _ = await transport.perform(request) } }
        }
        #expect(server.counts.open >= 2, "kept alive after the burst")

        await settings.publish(.init(maxConnections: 1))
        #expect(await eventually { server.counts.open <= 1 }, "\(server.counts)")
        if case .response(200, _, _, _) = await transport.perform(request) {} else { Issue.record("the smaller pool still sends") }
    }
    #endif

    /// 0.0.0.0 is not among the loopback names plain http may go to, yet a connection to
    /// it reaches this machine: a backend on "another machine" that the test can run.
    @Test func allowInsecureHTTPAppliesToTheNextRequest() async throws {
        let server = try ScriptedHTTPServer { connection in
            while connection.readRequest() != nil { connection.write(HTTPTransportTests.okReply) }
        }
        defer { server.stop() }
        let account = BackendAccount(baseURL: URL(string: "http://0.0.0.0:\(server.port)")!, user: "alice", password: "alice")
        let settings = SettingsStore(.init(requestTimeout: 10))
        let backend = HTTPBackend(settings: settings)
        guard case .failure(.transport(let refused)) = await backend.checkCredentials(account: account) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(refused.contains("refusing plain http"))
        #expect(server.counts.requests == 0)

        await settings.publish(.init(allowInsecureHTTP: true, requestTimeout: 10))
        guard case .success = await backend.checkCredentials(account: account) else {
            Issue.record("expected the request to be made and answered")
            return
        }
        #expect(server.counts.requests == 1)
    }

    // MARK: The password

    @Test func aNewPasswordCommandIsRunForTheNextRequest() async throws {
        let settings = SettingsStore(.init(passwordSource: .command("echo first")))
        let passwords = PasswordProvider(settings: settings)
        #expect(try await passwords.password(stored: "") == "first")
        await settings.publish(.init(passwordSource: .command("echo second")))
        #expect(try await passwords.password(stored: "") == "second", "not the first command's, kept in memory")
        await settings.publish(.init(passwordSource: .stored))
        #expect(try await passwords.password(stored: "saved") == "saved")
    }

    /// Taken away and given back, the command is run again for the next request, as for
    /// any new one: not answered from what it printed before (the password may have
    /// changed meanwhile, which is why it was taken away).
    @Test func aPasswordCommandGivenBackIsRunAgain() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        // Prints how many times it ran.
        let command = PasswordSource.command("echo run >> \(directory.file("runs")); wc -l < \(directory.file("runs"))")
        let backend = "http://127.0.0.1:1"
        let settings = SettingsStore(.init(backend: backend, passwordSource: command))
        let keeper = AccountKeeper(stateDirectory: directory.path, settings: settings)
        try await keeper.commit(Credentials(user: "alice", password: "saved", backend: nil))
        let key = AccountKey(user: "alice", backend: backend)
        #expect(try await keeper.backendAccount(for: key).password.trimmingSpaces() == "1")

        await settings.publish(.init(backend: backend))
        #expect(try await keeper.backendAccount(for: key).password == "saved")
        await settings.publish(.init(backend: backend, passwordSource: command))
        #expect(try await keeper.backendAccount(for: key).password.trimmingSpaces() == "2")
    }
}
