#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyCoding
import NotifyProtocol

/// Decodes a request line and runs its command.
struct CommandRouter: RequestHandler {
    let registrar: Registrar
    let outbox: Outbox
    let recovery: BackendRecovery
    let retiredRegistrations: RetiredRegistrations
    let hub: EventHub
    let info: DaemonInfo
    let control: DaemonControl
    let settings: SettingsStore

    /// Encoded once: it never changes while notifyd runs.
    let pingResult: [UInt8]
    /// The tests' daemons: each `status` also checks that the parts it was made from are
    /// those their owners' state gives, and logs an error if not (`StatusCheck`).
    let statusCheck: StatusCheck?
    let lastStatusEncoded = LastStatusEncoded()

    init(registrar: Registrar, outbox: Outbox, recovery: BackendRecovery, retired: RetiredRegistrations, hub: EventHub, info: DaemonInfo,
         control: DaemonControl, settings: SettingsStore, verifyingStatusWith verifier: Logger? = nil) {
        self.registrar = registrar
        self.outbox = outbox
        self.recovery = recovery
        self.retiredRegistrations = retired
        self.hub = hub
        self.info = info
        self.control = control
        self.settings = settings
        let result = PingResult(version: NotifydVersion.current, protocol: ProtocolVersion.current, pid: info.pid, build: NotifydVersion.build)
        pingResult = Reply.encodedResult(result) ?? Array("{}".utf8)
        statusCheck = verifier.map { StatusCheck(logger: $0) }
    }

    var sendPlatforms: [Platform] { settings[\.sendPlatforms] }

    /// Every command, with its handler (see `CommandRegistry`).
    static let registry: CommandRegistry = {
        var registry = CommandRegistry()
        registry.register(PingCommand.self, aliases: ["hello"], immediateResult: { router, _ in router.pingResult }) { router, _, id, _ in
            .now(Reply.success(id, encodedResult: router.pingResult))
        }
        // Made from the parts on the loop; not ahead of an earlier command still running.
        registry.register(StatusCommand.self, immediateResult: { router, afterRunningCommands in
            afterRunningCommands || router.statusCheck != nil ? nil : router.encodedStatus
        }) { router, _, id, _ in
            guard let encoded = router.encodedStatus else { return .now(Reply.unencodable(id)) }
            await router.statusCheck?.check(router)
            return .now(Reply.success(id, encodedResult: encoded))
        }
        registry.register(LoginCommand.self) { router, command, id, _ throws(CoreError) in
            let pending = try await router.registrar.login(user: command.user, password: command.password, backend: command.backend)
            let registrar = router.registrar
            let seconds = command.waitSeconds
            return .later {
                do throws(CoreError) {
                    return Reply.success(id, try await registrar.loginOutcome(pending, timeout: seconds))
                } catch {
                    return Reply.failure(id, error)
                }
            }
        }
        registry.register(LogoutCommand.self) { router, command, id, _ throws(CoreError) in
            .now(Reply.success(id, try await router.registrar.logout(force: command.force ?? false, forgetOldBackends: command.forgetOldBackends ?? false)))
        }
        registry.register(SetTokenCommand.self) { router, command, id, _ throws(CoreError) in
            let (generation, platform) = try await router.registrar.setToken(command.token, platform: command.platform)
            return router.waiting(id, generation, command.waitSeconds) { $0.tokenPlatform = platform }
        }
        registry.register(SetTagsCommand.self) { router, command, id, _ throws(CoreError) in
            router.waiting(id, try await router.registrar.setTags(command.tags), command.waitSeconds)
        }
        registry.register(RegisterCommand.self) { router, command, id, _ throws(CoreError) in
            router.waiting(id, try await router.registrar.forceRegister(), command.waitSeconds)
        }
        registry.register(UnregisterCommand.self) { router, _, id, _ throws(CoreError) in
            .now(Reply.success(id, try await router.registrar.unregister()))
        }
        registry.register(WatchCommand.self) { router, _, id, connection in
            router.hub.subscribe(connection)
            return .now(Reply.success(id, WatchResult(registration: await router.registrar.registrationStatus)))
        }
        // A send that queues hands the message to the outbox and returns, so the sends of
        // one read share one write; one with `queue: false` waits for the backend in its handling.
        registry.register(SendCommand.self, plainly: SendCommand.init(plainLine:), joinsBatch: { $0.queue != false }) { router, command, id, _ throws(CoreError) in
            try await router.send(id, command)
        }
        registry.register(OutboxCommand.self) { router, command, id, _ throws(CoreError) in
            if let limit = command.limit, limit < 1 { throw .invalidArgument("limit is \(limit); a page holds at least 1 message") }
            let after = try command.after.map { (given: String) throws(CoreError) in try Outbox.pageCursor(given) }
            let purged = command.purge == true ? await router.outbox.purge() : nil
            guard let limit = command.limit else { return .now(Reply.success(id, OutboxResult(deliveries: await router.outbox.list(), purged: purged))) }
            var page = await router.outbox.page(limit: limit, after: after)
            page.purged = purged
            return .now(Reply.success(id, page))
        }
        registry.register(OutboxRetryCommand.self) { router, command, id, _ throws(CoreError) in
            .now(Reply.success(id, OutboxRetryResult(retried: try await router.outbox.retry(command.delivery))))
        }
        registry.register(OutboxCancelCommand.self) { router, command, id, _ throws(CoreError) in
            .now(Reply.success(id, OutboxCancelResult(delivery: try await router.outbox.cancel(command.delivery))))
        }
        registry.register(ReloadCommand.self) { router, _, id, _ in
            .now(Reply.success(id, await router.control.reload()))
        }
        registry.register(StopCommand.self) { router, _, id, _ in
            router.control.requestStop()
            return .now(Reply.success(id, StopResult(pid: router.info.pid)))
        }
        return registry
    }()

    /// A request line read: answered already (a line that is not a request of a known
    /// command with valid parameters), or a command to run.
    enum Request: Sendable {
        case answered([UInt8])
        case command(RequestID?, CommandRegistry.Command)

        var joinsBatch: Bool {
            if case .command(_, let command) = self { command.joinsBatch } else { false }
        }
    }

    /// The commands answered on the socket loop with no hop to the concurrency pool (`ping`
    /// and `hello`, and `status` while no earlier command on the connection is still
    /// running): what scripts and health checks send most, and the loop's own measure.
    func immediateReply(to line: [UInt8], afterRunningCommands: Bool) -> [UInt8]? {
        guard let shape = try? JSONShape.check(line), let cmd = shape.cmdRange else { return nil }
        // An "id" key written with escapes is not where the shape looks: the decoder finds it.
        if shape.idRange == nil && line.contains(UInt8(ascii: "\\")) { return nil }
        let name = line[cmd]
        guard let entry = Self.registry.immediate.first(where: { name.elementsEqual($0.quotedName) })?.entry,
              let result = entry.immediateResult?(self, afterRunningCommands) else { return nil }
        return Reply.success(shape.idRange.map { RequestID(json: line[$0]) }, encodedResult: result)
    }

    func read(_ line: [UInt8]) -> Request {
        Self.read(line)
    }

    /// Reads the request and its command's parameters; needs nothing of a running daemon.
    static func read(_ line: [UInt8]) -> Request {
        let shape: JSONShape.Shape
        do {
            shape = try JSONShape.check(line)
        } catch {
            return .answered(Reply.failure(nil, WireError(code: .malformedRequest, message: "not valid JSON (\(error)): each request is one JSON object on one line, like {\"cmd\":\"ping\"}")))
        }
        // A command written plainly, the `send` of a burst, is read without the decoder.
        if let cmd = shape.cmdRange, let entry = registry.plain.first(where: { line[cmd].elementsEqual($0.quotedName) })?.entry,
           let command = entry.readPlainly?(line) {
            return .command(RequestID(line: line, shape: shape, decoded: nil), command)
        }
        let data = Data(line)
        let decoder = WireCoding.decoder()
        guard let header = try? decoder.decode(RequestHeader.self, from: data) else {
            return .answered(Reply.failure(nil, WireError(code: .malformedRequest, message: "not a JSON object: each request is one JSON object on one line, like {\"cmd\":\"ping\"}")))
        }
        let id = RequestID(line: line, shape: shape, decoded: header.id)
        guard let name = header.cmd else {
            let problem = header.cmdIsNotAString ? "\"cmd\" must be a string, like {\"cmd\":\"ping\"}" : "the request has no \"cmd\""
            return .answered(Reply.failure(id, WireError(code: .malformedRequest, message: problem)))
        }
        guard let entry = registry[name] else {
            return .answered(Reply.failure(id, WireError(code: .unknownCommand, message: "unknown command '\(name)'; known commands: \(registry.names.joined(separator: ", "))")))
        }
        do throws(CoreError) {
            return .command(id, try entry.read(CommandRegistry.Parameters(data: data, decoder: decoder, name: name)))
        } catch {
            return .answered(Reply.failure(id, error))
        }
    }

    func joinsBatch(_ request: Request) -> Bool {
        request.joinsBatch
    }

    func handle(_ request: Request, from connection: ConnectionHandle) async -> Reply {
        switch request {
        case .answered(let reply):
            return .now(reply)
        case .command(let id, let command):
            do throws(CoreError) {
                return try await command.run(self, id, connection)
            } catch {
                return .now(Reply.failure(id, error))
            }
        }
    }

    /// The change is made; the reply waits (bounded) for the backend's answer to it.
    fileprivate func waiting(_ id: RequestID?, _ generation: Int, _ seconds: Double?,
                         adding extra: @escaping @Sendable (inout RegistrationOutcome) -> Void = { _ in }) -> Reply {
        let registrar = self.registrar
        return .later {
            var outcome = await registrar.waitForOutcome(generation: generation, timeout: seconds)
            extra(&outcome)
            return Reply.success(id, outcome)
        }
    }
}

/// Facts about this daemon that `status` and `ping` report, fixed while it runs.
struct DaemonInfo: Sendable {
    var pid: Int32
    var socketPath: String
    var stateDirectory: String
    var startedAt: Date
}
