#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NotifyCoding
import NotifyProtocol

/// Everything notifyd keeps about the device between runs, except the credentials. On disk
/// it is a `StateRecord`.
public struct DeviceState: Equatable, Sendable {
    public static let currentVersion = 1

    public var version = DeviceState.currentVersion
    public var token: String?
    public var platform: Platform = .apns
    public var tags: [String] = []
    /// False after `unregister`, until `register` or a change.
    public var enabled = true
    public var registration = RegistrationRecord()

    public init() {}
}

/// Reads and writes `state.json` in the state directory. A file that cannot be read is
/// moved aside (never silently dropped) and the daemon starts fresh; one written by a
/// newer notifyd is left alone, and notifyd does not start (`refuseNewerFormat`).
public struct StateStore: Sendable {
    public let path: String
    /// Far more than a state file holds (a token, some tags, two registrations): a larger
    /// file is not one notifyd wrote, and is not read.
    public static let largestFile = FileContents.mebibyte
    private let calls: FileSystemCalls

    public init(directory: String, calls: FileSystemCalls = .system) {
        path = FilePath.join(directory, "state.json")
        self.calls = calls
    }

    /// The saved state, and a warning to log when the file was unreadable and moved aside.
    public func load(now: Date = Date()) -> (DeviceState, warning: String?) {
        switch StateFile.read(path, limit: Self.largestFile, supported: DeviceState.currentVersion, as: StateRecord.self, { try $0.state() }) {
        case .value(let state):
            return (state, nil)
        case .missing:
            return (DeviceState(), nil)
        case .newer(let newer):
            // Kept for the notifyd that wrote it: a daemon checks `refuseNewerFormat` before it
            // starts, so nothing replaces it.
            return (DeviceState(), "state file \(path) was not read: \(newer)")
        case .damaged(let reason):
            let moved = StateFile.moveAside(path, to: path + ".corrupt-" + String(Int(now.timeIntervalSince1970)))
            return (DeviceState(), "state file \(path) could not be read (\(reason)); \(moved) and starting with a fresh state")
        }
    }

    public func save(_ state: DeviceState) throws(CoreError) {
        try StateFile.write(StateRecord(state), to: path, using: calls, naming: "the state")
    }

    /// Throws when the file was written by a newer notifyd, which a start must not overwrite.
    public func refuseNewerFormat() throws(CoreError) {
        try DiskFormat.refuseNewer(path, supported: DeviceState.currentVersion, limit: Self.largestFile)
    }
}

extension JSONEncoder {
    /// Files on disk: readable by a person who opens them, dates as ISO 8601.
    static var state: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    static var state: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Decodes a file of ours; a damaged one must not crash the decoder (see `JSONShape`).
    static func decodeStateFile<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try WireCoding.decodeChecked(type, from: data, decoder: .state)
    }
}
