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

/// What a start needs of an outbox record to keep it without its text, read straight from
/// the record's bytes: its id, sequence, recipient, platform, times and account, and the
/// length of its text, which is counted, not decoded; for a failed or expired one also its
/// attempts and last error. A week offline leaves 100,000 records, and `outbox_expiry` (7
/// days) then expires them all; decoding each whole with `JSONDecoder`, text included, to
/// learn these was nearly all of a start's time, kept each failed one's text in memory
/// until a purge, and left the heap fragmented.
///
/// Only the plain shapes are read here: a record as `OutboxEntryRecord.write` makes it for
/// a message that waits its first turn, or for one that failed or expired, under the id its
/// sequence number gives. Anything else (a queued one with an error or retry time recorded,
/// a notification request's tags, a key it does not know or one written twice, a date in
/// another form or before 1970, a newer format) gives nil, and the record is decoded whole,
/// as before, which also reports a damaged one; damage inside a message's text is found
/// when the record is read back whole (at its turn, or to be listed).
struct OutboxRecordIndex: Equatable {
    var id: String
    var sequence: Int
    var to: String
    var platform: Platform
    var createdAt: Date
    var expiresAt: Date
    var account: AccountKey?
    /// The bytes of the message's text, as decoding it would give.
    var messageBytes: Int
    /// `queued` (waiting its first turn), or `failed` or `expired` (kept to be listed).
    var state = DeliveryState.queued
    var attempts = 0
    var lastError: WireError?

    /// The delivery it stands for, without its text.
    var delivery: Delivery {
        var delivery = Delivery(sequence: sequence, to: to, platform: platform, message: "", createdAt: createdAt, expiresAt: expiresAt, account: account)
        delivery.id = id
        delivery.state = state
        delivery.attempts = attempts
        delivery.lastError = lastError
        return delivery
    }

    /// Reads a record's object; nil when it is not of the plain shape (see above).
    static func read(_ bytes: UnsafeRawBufferPointer) -> OutboxRecordIndex? {
        var reader = Reader(bytes: bytes)
        return reader.record()
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func record() -> OutboxRecordIndex? {
            var id: String?, to: String?, platform: Platform?, state: String?
            var sequence: Int?, created: Date?, expires: Date?, messageBytes: Int?
            var account: AccountKey?
            var attempts = 0, lastError: WireError?
            var version = 1
            var seen: UInt16 = 0
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            skipSpace()
            if take(UInt8(ascii: "}")) { return nil }
            repeat {
                guard let key = key() else { return nil }
                // A key written twice is left to the decoder, which keeps the first.
                switch key {
                case "account": guard Self.once(0, &seen), let read = accountObject() else { return nil }; account = read
                case "attempts": guard Self.once(1, &seen), let read = number() else { return nil }; attempts = read
                case "created_at": guard Self.once(2, &seen), let read = plainString().flatMap(Self.date) else { return nil }; created = read
                case "expires_at": guard Self.once(3, &seen), let read = plainString().flatMap(Self.date) else { return nil }; expires = read
                case "id": guard Self.once(4, &seen), let read = plainString() else { return nil }; id = read
                case "last_error": guard Self.once(12, &seen), let read = problemObject() else { return nil }; lastError = read
                // Read back with the text at its turn.
                case "idempotency_key": guard Self.once(5, &seen), plainString() != nil else { return nil }
                case "message": guard Self.once(6, &seen), let read = stringLength() else { return nil }; messageBytes = read
                case "platform": guard Self.once(7, &seen), let read = plainString().flatMap(Platform.init(rawValue:)) else { return nil }; platform = read
                case "sequence": guard Self.once(8, &seen), let read = number() else { return nil }; sequence = read
                case "state": guard Self.once(9, &seen), let read = plainString() else { return nil }; state = read
                case "to": guard Self.once(10, &seen), let read = plainString() else { return nil }; to = read
                case "version": guard Self.once(11, &seen), let read = number() else { return nil }; version = read
                default: return nil
                }
                skipSpace()
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), (1...OutboxEntryRecord.currentVersion).contains(version),
                  let state = state.flatMap(Self.state(_:)),
                  // Waiting its first turn, or kept to be listed: nothing else is read here.
                  state == .queued ? attempts == 0 && lastError == nil : true,
                  let id, let sequence, (1...OutboxIDCounter.largestSequence).contains(sequence), let to, let platform,
                  let created, let expires, let messageBytes,
                  // An id of its own (edited by hand) is queued whole, its text with it.
                  id == Delivery.id(sequence: sequence, platform: platform) else { return nil }
            return OutboxRecordIndex(id: id, sequence: sequence, to: to, platform: platform, createdAt: created, expiresAt: expires,
                                     account: account, messageBytes: messageBytes, state: state, attempts: attempts, lastError: lastError)
        }

        /// The states read here, as the writer writes them.
        static func state(_ text: String) -> DeliveryState? {
            switch text {
            case DeliveryState.queued.rawValue: .queued
            case DeliveryState.failed.rawValue: .failed
            case DeliveryState.expired.rawValue: .expired
            default: nil
            }
        }

        /// A last error as the writer writes it: its code and message, nothing else.
        mutating func problemObject() -> WireError? {
            var code: String?, message: String?
            var seen: UInt16 = 0
            guard take(UInt8(ascii: "{")) else { return nil }
            repeat {
                guard let key = key() else { return nil }
                switch key {
                case "code": guard Self.once(0, &seen), let read = plainString() else { return nil }; code = read
                case "message": guard Self.once(1, &seen), let read = plainString() else { return nil }; message = read
                default: return nil
                }
                skipSpace()
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), let code, let message else { return nil }
            return WireError(code: ErrorCode(code), message: message)
        }

        mutating func accountObject() -> AccountKey? {
            var user: String?, backend: String?, api = BackendDialect.registrations
            var seen: UInt16 = 0
            guard take(UInt8(ascii: "{")) else { return nil }
            repeat {
                guard let key = key() else { return nil }
                switch key {
                case "api": guard Self.once(0, &seen), let read = plainString().flatMap(BackendDialect.init(rawValue:)) else { return nil }; api = read
                case "backend": guard Self.once(1, &seen) else { return nil }; backend = plainString()
                case "user": guard Self.once(2, &seen) else { return nil }; user = plainString()
                default: return nil
                }
                skipSpace()
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), let user, let backend else { return nil }
            return AccountKey(user: user, backend: backend, api: api)
        }

        /// A date as the writer writes it itself, from 1970 on (`WireDate.append`): an
        /// earlier one was written by the encoder, whose calendar is Julian before 1582,
        /// and is left to the decoder.
        static func date(_ text: String) -> Date? {
            WireDate.parse(text).flatMap { $0.timeIntervalSince1970 >= 0 ? $0 : nil }
        }

        /// True the first time `field` is seen; marks it seen.
        static func once(_ field: UInt16, _ seen: inout UInt16) -> Bool {
            defer { seen |= 1 << field }
            return seen & (1 << field) == 0
        }

        /// An object's next key, up to its value.
        mutating func key() -> String? {
            skipSpace()
            guard let key = plainString() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipSpace()
            return key
        }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { position += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        /// A string, its escapes decoded (the writer escapes `/`, so every URL has some).
        mutating func plainString() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            var decoded: [UInt8]?
            var ascii = true
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    if let decoded { return String(validating: decoded, as: UTF8.self) }
                    let text = UnsafeRawBufferPointer(rebasing: bytes[start..<(position - 1)])
                    // Names, ids and dates are ASCII nearly always, which needs no validating.
                    return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    if decoded == nil { decoded = Array(bytes[start..<(position - 1)]) }
                    guard position < bytes.count else { return nil }
                    let escaped = bytes[position]
                    position += 1
                    if let single = Self.singleEscapes[escaped] {
                        decoded?.append(single)
                    } else if escaped == UInt8(ascii: "u"), let unit = hexUnit(), let scalar = Unicode.Scalar(unit) {
                        // Names and ids hold no surrogate pairs; a message's text is only counted.
                        decoded?.append(contentsOf: String(Character(scalar)).utf8)
                    } else {
                        return nil
                    }
                default:
                    guard byte >= 0x20 else { return nil }
                    if byte >= 0x80 { ascii = false }
                    decoded?.append(byte)
                }
            }
            return nil
        }

        /// The UTF-8 length of a string once its escapes are decoded. The text between
        /// escapes is skipped with `memchr`, not looked at byte by byte: it is most of the
        /// outbox's bytes. Nor is it checked: a damaged text is found when the record is
        /// read back whole at its turn, and reported then.
        mutating func stringLength() -> Int? {
            guard take(UInt8(ascii: "\"")), let base = bytes.baseAddress else { return nil }
            var length = 0
            while position < bytes.count {
                guard let quote = memchr(base + position, Int32(UInt8(ascii: "\"")), bytes.count - position) else { return nil }
                let end = base.distance(to: UnsafeRawPointer(quote))
                guard let backslash = memchr(base + position, Int32(UInt8(ascii: "\\")), end - position) else {
                    length += end - position
                    position = end + 1
                    return length
                }
                let escape = base.distance(to: UnsafeRawPointer(backslash))
                length += escape - position
                position = escape + 1
                guard position < bytes.count else { return nil }
                let escaped = bytes[position]
                position += 1
                guard escaped == UInt8(ascii: "u") else {
                    guard Self.singleEscapes[escaped] != nil else { return nil }
                    length += 1
                    continue
                }
                guard let unit = hexUnit() else { return nil }
                switch unit {
                case 0..<0x80: length += 1
                case 0x80..<0x800: length += 2
                case 0xD800..<0xDC00:
                    // A high surrogate is one character with the low one that must follow.
                    guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hexUnit(), (0xDC00..<0xE000).contains(low) else { return nil }
                    length += 4
                case 0xDC00..<0xE000: return nil
                default: length += 3
                }
            }
            return nil
        }

        /// What each one-letter escape stands for.
        static let singleEscapes: [UInt8: UInt8] = [UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F,
                                                    UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A,
                                                    UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09]

        mutating func hexUnit() -> Int? {
            guard position + 4 <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<4 {
                guard let digit = Self.hexDigit(bytes[position]) else { return nil }
                value = value * 16 + digit
                position += 1
            }
            return value
        }

        static func hexDigit(_ byte: UInt8) -> Int? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
            default: nil
            }
        }

        /// A non-negative integer of at most 18 digits.
        mutating func number() -> Int? {
            let start = position
            var value = 0
            while let byte = peek, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                guard position - start < 18 else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                position += 1
            }
            return position > start ? value : nil
        }
    }
}
