#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Encodes a value into a `JSONValue` as `WireCoding.encoder()` would into text: a `nil`
/// given to `encodeIfPresent` leaves its key out, and a date is its `.iso8601` string.
/// `JSONTextWriter.line(_:)` then writes it as the encoder writes the same value.
///
/// What notifyctl encodes with: Foundation's `JSONEncoder` and `JSONDecoder` bring `Data`
/// and a good part of Foundation into a program that links them, and the loader relocates
/// all of it at every start (a quarter of a millisecond of every notifyctl command).
public struct JSONValueEncoder {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let slot = EncodingSlot()
        try EncodingNode(slot: slot, codingPath: []).encodeValue(value)
        return slot.value
    }
}

/// Where one value goes while the containers that make it up are still being filled.
private final class EncodingSlot {
    enum Content {
        case empty
        case value(JSONValue)
        case object([String: EncodingSlot])
        case array([EncodingSlot])
    }

    var content = Content.empty

    var value: JSONValue {
        switch content {
        case .empty:
            // As the encoder: a value that encoded nothing is an empty object.
            return .object([:])
        case .value(let value):
            return value
        case .object(let members):
            return .object(members.mapValues(\.value))
        case .array(let elements):
            return .array(elements.map(\.value))
        }
    }

    var members: [String: EncodingSlot] {
        get { if case .object(let members) = content { members } else { [:] } }
        set { content = .object(newValue) }
    }

    var elements: [EncodingSlot] {
        get { if case .array(let elements) = content { elements } else { [] } }
        set { content = .array(newValue) }
    }
}

private struct EncodingNode: Encoder, SingleValueEncodingContainer {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        // A second container on the same value adds to the first (as `Request` does).
        if case .object = slot.content {} else { slot.content = .object([:]) }
        return KeyedEncodingContainer(KeyedNode<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = slot.content {} else { slot.content = .array([]) }
        return UnkeyedNode(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { slot.content = .value(.null) }
    func encode(_ value: Bool) throws { slot.content = .value(.bool(value)) }
    func encode(_ value: String) throws { slot.content = .value(.string(value)) }
    func encode(_ value: Double) throws { slot.content = .value(try number(value)) }
    func encode(_ value: Float) throws { slot.content = .value(try number(Double(value))) }
    func encode(_ value: Int) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: Int8) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: Int16) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: Int32) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: Int64) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: UInt) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: UInt8) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: UInt16) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: UInt32) throws { slot.content = .value(.number(Double(value))) }
    func encode(_ value: UInt64) throws { slot.content = .value(.number(Double(value))) }
    func encode<T: Encodable>(_ value: T) throws { try encodeValue(value) }

    func encodeValue<T: Encodable>(_ value: T) throws {
        if let date = value as? Date {
            var bytes: [UInt8] = []
            guard WireDate.append(date, to: &bytes) else {
                throw EncodingError.invalidValue(date, .init(codingPath: codingPath, debugDescription: "a date before 1970 or after 9999"))
            }
            slot.content = .value(.string(String(decoding: bytes, as: UTF8.self)))
        } else if let json = value as? JSONValue {
            slot.content = .value(json)
        } else {
            try value.encode(to: self)
        }
    }

    private func number(_ value: Double) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "Unable to encode \(value) directly in JSON."))
        }
        return .number(value)
    }
}

private struct KeyedNode<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]

    private func child(_ key: Key) -> EncodingNode {
        let child = EncodingSlot()
        slot.members[key.stringValue] = child
        return EncodingNode(slot: child, codingPath: codingPath + [key])
    }

    mutating func encodeNil(forKey key: Key) throws { try child(key).encodeNil() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try child(key).encode(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try child(key).encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        child(key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        child(key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let child = EncodingSlot()
        slot.members["super"] = child
        return EncodingNode(slot: child, codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { child(key) }
}

private struct UnkeyedNode: UnkeyedEncodingContainer {
    let slot: EncodingSlot
    let codingPath: [any CodingKey]
    var count: Int { slot.elements.count }

    private func next() -> EncodingNode {
        let child = EncodingSlot()
        let index = slot.elements.count
        slot.elements.append(child)
        return EncodingNode(slot: child, codingPath: codingPath + [IndexKey(index)])
    }

    mutating func encodeNil() throws { try next().encodeNil() }
    mutating func encode(_ value: Bool) throws { try next().encode(value) }
    mutating func encode(_ value: String) throws { try next().encode(value) }
    mutating func encode(_ value: Double) throws { try next().encode(value) }
    mutating func encode(_ value: Int) throws { try next().encode(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try next().encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }
    mutating func superEncoder() -> any Encoder { next() }
}

/// An array element's place in a coding path.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue ?? 0)" }

    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}
