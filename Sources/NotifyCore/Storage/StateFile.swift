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
import NotifyProtocol

/// A file of notifyd's state holding one JSON record with a format `version`
/// (`DiskFormat`): `state.json`, `credentials.json`, `outbox-ids` and the rest. Each store
/// reads and writes its file the same way; what it does with one it cannot use (moves it
/// aside, keeps it for a person to recover, starts without it) is its own.
enum StateFile {
    /// What reading a file found.
    enum Reading<Value> {
        case value(Value)
        case missing
        /// Written by a newer notifyd: left for it. A start refuses it first (`DiskFormat.refuseNewer`).
        case newer(DiskFormat.NewerFormat)
        /// Damaged, or not a file notifyd wrote: why, in words for a warning (`reason`).
        case damaged(String)
    }

    /// Reads the record at `path` (`limit` bytes at most, of a format up to `supported`),
    /// and makes the store's value of it: a value that `value` refuses makes the file damaged.
    static func read<Record: Decodable, Value>(_ path: String, limit: Int, supported: Int, as record: Record.Type,
                                              _ value: (Record) throws -> Value) -> Reading<Value> {
        do {
            let data = try FileContents.load(path, limit: limit)
            _ = try DiskFormat.checkVersion(of: data, supported: supported)
            return .value(try value(JSONDecoder.decodeStateFile(record, from: data)))
        } catch FileContents.Problem.missing {
            return .missing
        } catch let newer as DiskFormat.NewerFormat {
            return .newer(newer)
        } catch {
            return .damaged(reason(error))
        }
    }

    /// `read` for a file that holds a password (`credentials.json`,
    /// `retired-registrations.json`): one others could read is made 0600 first
    /// (`PrivateFile`), and the mode it had is given back for the store to say so, since
    /// the password may have been read meanwhile. One that cannot be made private is not
    /// read: it counts as damaged.
    static func readPrivate<Record: Decodable, Value>(_ path: String, limit: Int, supported: Int, as record: Record.Type,
                                                     _ value: (Record) throws -> Value) -> (Reading<Value>, exposedMode: String?) {
        let mode: String?
        do {
            mode = try PrivateFile.makePrivate(path)
        } catch {
            return (.damaged(reason(error)), nil)
        }
        return (read(path, limit: limit, supported: supported, as: record, value), mode)
    }

    /// Writes `record` whole in place of the file, fsynced before it returns (`AtomicFile`).
    /// `what` names it in the error when it cannot be encoded; the encoder's own words are
    /// left out, since they may quote a value, and some records hold a password.
    static func write<Record: Encodable>(_ record: Record, to path: String, using calls: FileSystemCalls, naming what: String) throws(CoreError) {
        let data: Data
        do {
            data = try JSONEncoder.state.encode(record)
        } catch {
            throw .storage("cannot encode \(what)")
        }
        try AtomicFile.write(data, to: path, using: calls)
    }

    /// Moves a file that cannot be used to `aside`, where a person can look at it and no
    /// start reads it again; says which happened, for the store's warning.
    static func moveAside(_ path: String, to aside: String) -> String {
        rename(path, aside) == 0 ? "moved it to \(aside)" : "could not move it aside to \(aside): \(String(cString: strerror(errno)))"
    }

    /// Why a file could not be used, in words for a warning.
    static func reason(_ error: any Error) -> String {
        switch error {
        case FileContents.Problem.tooLarge: "\(error)"
        case let problem as FileContents.Problem: "it cannot be read: \(problem)"
        case let problem as JSONShape.Problem: "not valid JSON: \(problem)"
        case DecodingError.dataCorrupted: "not valid JSON"
        case is DecodingError: "unexpected content"
        default: "\(error)"
        }
    }
}
