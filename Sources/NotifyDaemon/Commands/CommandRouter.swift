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
    let statusCopy: StatusCopy

    init(registrar: Registrar, outbox: Outbox, recovery: BackendRecovery, retired: RetiredRegistrations, hub: EventHub, info: DaemonInfo,
         control: DaemonControl, settings: SettingsStore) {
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
        statusCopy = StatusCopy(changes: registrar.statusChanges)
    }

    var sendPlatforms: [Platform] { settings[\.sendPlatforms] }

    static let commands = ["ping", "hello", "status", "login", "logout", "set-token", "set-tags", "register", "unregister", "watch", "send",
                           "outbox", "outbox-retry", "outbox-cancel", "reload", "stop"]

    /// `ping` (and `hello`), and `status` while nothing it reports changed and no earlier
    /// command on the connection is still running, answered on the socket loop with no hop
    /// to the concurrency pool: what scripts and health checks send most, and the loop's
    /// own measure.
    func immediateReply(to line: [UInt8], afterRunningCommands: Bool) -> [UInt8]? {
        guard let shape = try? JSONShape.check(line), let cmd = shape.cmdRange else { return nil }
        // An "id" key written with escapes is not where the shape looks: the decoder finds it.
        if shape.idRange == nil && line.contains(UInt8(ascii: "\\")) { return nil }
        let name = line[cmd]
        let result: [UInt8]
        if name.elementsEqual(#""ping""#.utf8) || name.elementsEqual(#""hello""#.utf8) {
            result = pingResult
        } else if name.elementsEqual(#""status""#.utf8), !afterRunningCommands, let copy = statusCopy.current {
            result = copy
        } else {
            return nil
        }
        return Reply.success(shape.idRange.map { RequestID(json: line[$0]) }, encodedResult: result)
    }

    /// A `send` that queues: its handling hands the message to the outbox and returns.
    /// (One that names `queue`, which may be `false`, waits for the backend in its handling.)
    func joinsBatch(_ line: [UInt8]) -> Bool {
        Self.joinsBatch(line)
    }

    static func joinsBatch(_ line: [UInt8]) -> Bool {
        guard let shape = try? JSONShape.check(line), let cmd = shape.cmdRange, line[cmd].elementsEqual(#""send""#.utf8) else { return false }
        let queueKey = Array(#""queue""#.utf8)
        return !line.indices.contains { line[$0] == queueKey[0] && line[$0...].starts(with: queueKey) }
    }

    func handle(_ line: [UInt8], from connection: ConnectionHandle) async -> Reply {
        let shape: JSONShape.Shape
        do {
            shape = try JSONShape.check(line)
        } catch {
            return .now(Reply.failure(nil, WireError(code: .malformedRequest, message: "not valid JSON (\(error)): each request is one JSON object on one line, like {\"cmd\":\"ping\"}")))
        }
        // A `send` written plainly, the command of a burst, is read without the decoder.
        if let cmd = shape.cmdRange, line[cmd].elementsEqual(#""send""#.utf8), let command = SendCommand(plainLine: line) {
            let id = RequestID(line: line, shape: shape, decoded: nil)
            do throws(CoreError) {
                return try await send(id, command)
            } catch {
                return .now(Reply.failure(id, error))
            }
        }
        let data = Data(line)
        let decoder = WireCoding.decoder()
        guard let header = try? decoder.decode(RequestHeader.self, from: data) else {
            return .now(Reply.failure(nil, WireError(code: .malformedRequest, message: "not a JSON object: each request is one JSON object on one line, like {\"cmd\":\"ping\"}")))
        }
        let id = RequestID(line: line, shape: shape, decoded: header.id)
        guard let name = header.cmd else {
            let problem = header.cmdIsNotAString ? "\"cmd\" must be a string, like {\"cmd\":\"ping\"}" : "the request has no \"cmd\""
            return .now(Reply.failure(id, WireError(code: .malformedRequest, message: problem)))
        }

        func decode<C: NotifyCommand>(_ type: C.Type) throws(CoreError) -> C {
            do {
                return try decoder.decode(C.self, from: data)
            } catch {
                throw .invalidArgument(DecodingErrorText.describe(error, command: name))
            }
        }

        do {
            switch name {
            case PingCommand.name, "hello":
                return .now(Reply.success(id, encodedResult: pingResult))
            case StatusCommand.name:
                let madeAt = statusCopy.changesNow
                guard let encoded = Reply.encodedResult(await status()) else { return .now(Reply.unencodable(id)) }
                statusCopy.keep(encoded, madeAt: madeAt)
                return .now(Reply.success(id, encodedResult: encoded))
            case LoginCommand.name:
                let command = try decode(LoginCommand.self)
                let pending = try await registrar.login(user: command.user, password: command.password, backend: command.backend)
                let registrar = self.registrar
                let seconds = command.waitSeconds
                return .later {
                    do throws(CoreError) {
                        return Reply.success(id, try await registrar.loginOutcome(pending, timeout: seconds))
                    } catch {
                        return Reply.failure(id, error)
                    }
                }
            case SetTokenCommand.name:
                let command = try decode(SetTokenCommand.self)
                let (generation, platform) = try await registrar.setToken(command.token, platform: command.platform)
                return waiting(id, generation, command.waitSeconds) { $0.tokenPlatform = platform }
            case SetTagsCommand.name:
                let command = try decode(SetTagsCommand.self)
                return waiting(id, try await registrar.setTags(command.tags), command.waitSeconds)
            case RegisterCommand.name:
                let command = try decode(RegisterCommand.self)
                return waiting(id, try await registrar.forceRegister(), command.waitSeconds)
            case UnregisterCommand.name:
                return .now(Reply.success(id, try await registrar.unregister()))
            case LogoutCommand.name:
                let command = try decode(LogoutCommand.self)
                return .now(Reply.success(id, try await registrar.logout(force: command.force ?? false, forgetOldBackends: command.forgetOldBackends ?? false)))
            case SendCommand.name:
                return try await send(id, try decode(SendCommand.self))
            case OutboxCommand.name:
                let command = try decode(OutboxCommand.self)
                let purged = command.purge == true ? await outbox.purge() : nil
                guard let limit = command.limit else { return .now(Reply.success(id, OutboxResult(deliveries: await outbox.list(), purged: purged))) }
                var page = await outbox.page(limit: limit, after: command.after)
                page.purged = purged
                return .now(Reply.success(id, page))
            case OutboxRetryCommand.name:
                let command = try decode(OutboxRetryCommand.self)
                return .now(Reply.success(id, OutboxRetryResult(retried: try await outbox.retry(command.delivery))))
            case OutboxCancelCommand.name:
                let command = try decode(OutboxCancelCommand.self)
                return .now(Reply.success(id, OutboxCancelResult(delivery: try await outbox.cancel(command.delivery))))
            case ReloadCommand.name:
                return .now(Reply.success(id, await control.reload()))
            case StopCommand.name:
                control.requestStop()
                return .now(Reply.success(id, StopResult(pid: info.pid)))
            case WatchCommand.name:
                hub.subscribe(connection)
                return .now(Reply.success(id, WatchResult(registration: await registrar.registrationStatus)))
            default:
                return .now(Reply.failure(id, WireError(code: .unknownCommand, message: "unknown command '\(name)'; known commands: \(Self.commands.joined(separator: ", "))")))
            }
        } catch {
            return .now(Reply.failure(id, error))
        }
    }

    /// The change is made; the reply waits (bounded) for the backend's answer to it.
    private func waiting(_ id: RequestID?, _ generation: Int, _ seconds: Double?,
                         adding extra: @escaping @Sendable (inout RegistrationOutcome) -> Void = { _ in }) -> Reply {
        let registrar = self.registrar
        return .later {
            var outcome = await registrar.waitForOutcome(generation: generation, timeout: seconds)
            extra(&outcome)
            return Reply.success(id, outcome)
        }
    }

    private func status() async -> StatusResult {
        let snapshot = await registrar.snapshot()
        let retired = await retiredRegistrations.summary.map { old in
            var old = old
            old.unreachableSince = recovery.unreachableSince(old.backend)
            return old
        }
        let source = settings[\.passwordSource]
        let passwordSource = source.name
        let restartNeeded = control.restartNeeded
        return StatusResult(
            daemon: .init(version: NotifydVersion.current, protocol: ProtocolVersion.current, pid: info.pid, socket: info.socketPath,
                          stateDirectory: info.stateDirectory, startedAt: info.startedAt, passwordSource: passwordSource,
                          restartNeeded: restartNeeded.isEmpty ? nil : restartNeeded),
            backend: snapshot.backend,
            account: snapshot.user.map {
                StatusResult.Account(user: $0, passwordSource: snapshot.passwordInKeyring && source == .stored ? "keyring" : passwordSource,
                                     passwordProblem: snapshot.passwordProblem)
            },
            device: .init(token: snapshot.device.token, platform: snapshot.device.platform, tags: snapshot.device.tags),
            registration: snapshot.registration, outbox: await outbox.summary(), network: recovery.networkStatus(of: snapshot.backend),
            retiredRegistrations: retired.isEmpty ? nil : retired,
            loginElsewhere: snapshot.strandedLogin.map { StatusResult.LoginElsewhere(user: $0.user, origin: $0.origin ?? "?") },
            backendAPI: settings[\.backendAPI])
    }
}

/// Facts about this daemon that `status` and `ping` report, fixed while it runs.
struct DaemonInfo: Sendable {
    var pid: Int32
    var socketPath: String
    var stateDirectory: String
    var startedAt: Date
}
