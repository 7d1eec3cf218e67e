#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// A send's reply read from its `JSONValue` (see `JSONValue(parsing:)`), as its `Decodable`
// conformance reads it: keys it does not know ignored, `null` an absent option. Each
// initialiser is nil for anything it does not read the same way (a field of the wrong
// type, a date not in the wire's form), which `JSONValueDecoder` then reads or words the error for.

extension SendResult {
    public init?(json: JSONValue) {
        guard case .array(let elements) = json["deliveries"] else { return nil }
        var deliveries: [DeliveryStatus] = []
        deliveries.reserveCapacity(elements.count)
        for element in elements {
            guard let delivery = DeliveryStatus(json: element) else { return nil }
            deliveries.append(delivery)
        }
        self.init(deliveries: deliveries)
    }
}

extension DeliveryStatus {
    public init?(json: JSONValue) {
        guard case .object(let members) = json,
              case .string(let id)? = members["id"], case .string(let to)? = members["to"],
              case .string(let pns)? = members["pns"], case .string(let state)? = members["state"],
              case .number(let attempts)? = members["attempts"], let attempts = Int(exactly: attempts),
              case .string(let created)? = members["created_at"], let createdAt = WireDate.parse(created) else { return nil }
        var status = DeliveryStatus(id: id, to: to, pns: pns, state: DeliveryState(state), attempts: attempts, createdAt: createdAt)
        switch members["next_attempt_at"] {
        case nil, .null?: break
        case .string(let text)?: guard let date = WireDate.parse(text) else { return nil }; status.nextAttemptAt = date
        default: return nil
        }
        switch members["expires_at"] {
        case nil, .null?: break
        case .string(let text)?: guard let date = WireDate.parse(text) else { return nil }; status.expiresAt = date
        default: return nil
        }
        switch members["error"] {
        case nil, .null?: break
        case let error?: guard let error = WireError(json: error) else { return nil }; status.error = error
        }
        switch members["preview"] {
        case nil, .null?: break
        case .string(let preview)?: status.preview = preview
        default: return nil
        }
        self = status
    }
}

extension WireError {
    public init?(json: JSONValue) {
        guard case .string(let code)? = json["code"], case .string(let message)? = json["message"] else { return nil }
        self.init(code: ErrorCode(code), message: message)
    }
}

extension IncomingLineHeader {
    /// The header of a line read into `json`; nil where the decoder would refuse it.
    public init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        switch members["ok"] {
        case nil, .null?: ok = nil
        case .bool(let flag)?: ok = flag
        default: return nil
        }
        switch members["event"] {
        case nil, .null?: event = nil
        case .string(let name)?: event = name
        default: return nil
        }
        // The decoder reads an id of `null` as no id.
        id = members["id"].flatMap { $0 == .null ? nil : $0 }
    }
}
