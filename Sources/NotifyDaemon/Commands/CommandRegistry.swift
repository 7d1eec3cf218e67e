#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol

/// The commands notifyd answers: each command type (`NotifyCommand`) registered once with
/// its handler, and looked up by its wire name (or an alias).
///
/// Registering a type decides, in one place, how its parameters are read (decoded, not at
/// all for a `ParameterlessCommand`, or plainly for the command of a burst), whether the
/// socket loop may answer it at once, and whether a request of it joins a batch.
struct CommandRegistry: Sendable {
    /// A command read from its line, ready to run.
    struct Command: Sendable {
        /// Running it only hands work over, at once: see `RequestHandler.joinsBatch`.
        let joinsBatch: Bool
        let run: @Sendable (CommandRouter, RequestID?, ConnectionHandle) async throws(CoreError) -> Reply
    }

    /// What a command's parameters are read from: the line, which passed `JSONShape`, and
    /// the decoder that read its header.
    struct Parameters {
        let data: Data
        let decoder: JSONDecoder
        /// The name the request gave, for the error about its parameters.
        let name: String
    }

    struct Entry: Sendable {
        let name: String
        /// The command's parameters read and bound to its handler; throws what the request
        /// is answered with instead.
        let read: @Sendable (Parameters) throws(CoreError) -> Command
        /// The command read without the decoder from a line written plainly; nil when
        /// the line is not (see `PlainSendLine.swift`), or for a command that has no such reading.
        let readPlainly: (@Sendable ([UInt8]) -> Command?)?
        /// The encoded result of a reply the socket loop makes at once, with no hop to the
        /// concurrency pool; nil leaves the request to the handler. Its argument: earlier
        /// requests on the connection are still running.
        let immediateResult: (@Sendable (CommandRouter, Bool) -> [UInt8]?)?
    }

    private var entries: [String: Entry] = [:]
    /// Every name a request may give, in the order registered (aliases after their
    /// command's name): what the reply to an unknown one lists.
    private(set) var names: [String] = []
    /// The entries the socket loop or the plain reader look up by the bytes of the request's
    /// `"cmd"` value, quotes included: there are a few, and comparing bytes costs less
    /// than making a string of them.
    private(set) var immediate: [(quotedName: [UInt8], entry: Entry)] = []
    private(set) var plain: [(quotedName: [UInt8], entry: Entry)] = []

    subscript(name: String) -> Entry? { entries[name] }

    /// Registers `type` under its name and `aliases`, with `handler` to run it. A
    /// `ParameterlessCommand`'s line is not decoded beyond its header (whatever else it
    /// holds is ignored, as unknown fields are); any other's parameters are decoded, or
    /// read with `plainly` where that reads the line. `joinsBatch` is asked of the command
    /// read, never of the line's bytes.
    mutating func register<C: NotifyCommand>(
        _ type: C.Type, aliases: [String] = [],
        plainly: (@Sendable ([UInt8]) -> C?)? = nil,
        joinsBatch: @escaping @Sendable (C) -> Bool = { _ in false },
        immediateResult: (@Sendable (CommandRouter, Bool) -> [UInt8]?)? = nil,
        handler: @escaping @Sendable (CommandRouter, C, RequestID?, ConnectionHandle) async throws(CoreError) -> Reply
    ) {
        @Sendable func bind(_ command: C) -> Command {
            Command(joinsBatch: joinsBatch(command)) { router, id, connection throws(CoreError) in
                try await handler(router, command, id, connection)
            }
        }
        let read: @Sendable (Parameters) throws(CoreError) -> Command
        if let parameterless = C.self as? any ParameterlessCommand.Type, let command = parameterless.init() as? C {
            read = { _ in bind(command) }
        } else {
            read = { parameters throws(CoreError) in
                do {
                    return bind(try parameters.decoder.decode(C.self, from: parameters.data))
                } catch {
                    throw .invalidArgument(DecodingErrorText.describe(error, command: parameters.name))
                }
            }
        }
        var readPlainly: (@Sendable ([UInt8]) -> Command?)?
        if let plainly {
            readPlainly = { line in plainly(line).map(bind) }
        }
        let entry = Entry(name: C.name, read: read, readPlainly: readPlainly, immediateResult: immediateResult)
        for name in [C.name] + aliases {
            precondition(entries[name] == nil, "the command \(name) is registered twice")
            entries[name] = entry
            names.append(name)
            let quoted = Array("\"\(name)\"".utf8)
            if immediateResult != nil { immediate.append((quoted, entry)) }
            if plainly != nil { plain.append((quoted, entry)) }
        }
    }
}
