#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// One line per `watch` event for a person: the local time, then what happened, as
/// `tailscale status` prints for people and `--json` for programs. An event this notifyctl
/// does not know is shown by its name and fields, never dropped.
enum WatchText {
    static func line(_ json: [UInt8]) -> String {
        guard (try? JSONShape.check(json)) != nil, let value = JSONValue(parsing: json) else {
            return PrintableText.line(String(decoding: json, as: UTF8.self))
        }
        return line(value)
    }

    static func line(_ value: JSONValue) -> String {
        guard case .object(let fields) = value, case .string(let event)? = fields["event"] else {
            return PrintableText.line(String(decoding: JSONTextWriter.line(value), as: UTF8.self))
        }
        let time = (fields["time"].flatMap { if case .string(let text) = $0 { WireDate.parse(text) } else { nil } }).map(localClock) ?? "--:--:--"
        return PrintableText.line("\(time)  \(describe(event, fields, value))")
    }

    private static func describe(_ event: String, _ fields: [String: JSONValue], _ value: JSONValue) -> String {
        let decoder = JSONValueDecoder()
        switch event {
        case EventName.registration:
            guard let registration = try? decoder.decode(RegistrationEvent.self, from: value).registration else { break }
            let id = registration.id.map { " (id \($0))" } ?? ""
            return "registration: \(StateText.words(registration.state))\(id)" + (registration.message.map { ": \($0)" } ?? "")
        case EventName.send:
            guard let delivery = try? decoder.decode(SendEvent.self, from: value).delivery else { break }
            let error = delivery.error.map { ": \($0.message)" } ?? ""
            return "send: \(delivery.id) to \(delivery.to): \(delivery.state.rawValue)\(error)"
        case EventName.network:
            guard let network = try? decoder.decode(NetworkEvent.self, from: value) else { break }
            let slept = network.slept.map { " after \(Int($0)) s asleep" } ?? ""
            return "network: \(network.change.rawValue.replacingUnderscores)\(slept)"
        case EventName.shutdown:
            return "notifyd stopped"
        default:
            break
        }
        let rest = fields.filter { $0.key != "event" && $0.key != "time" }.sorted { $0.key < $1.key }
        return event + (rest.isEmpty ? "" : ": " + rest.map { "\($0.key)=\(compact($0.value))" }.joined(separator: " "))
    }

    private static func compact(_ value: JSONValue) -> String {
        String(decoding: JSONTextWriter.line(value), as: UTF8.self)
    }

    /// HH:MM:SS in the local time zone.
    static func localClock(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return [parts.tm_hour, parts.tm_min, parts.tm_sec].map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: ":")
    }
}

private extension String {
    var replacingUnderscores: String { split(separator: "_").joined(separator: " ") }
}
