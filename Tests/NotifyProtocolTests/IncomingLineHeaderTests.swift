import NotifyCoding
import Foundation
import NotifyProtocol
import Testing

/// A client reading daemon lines tells replies (`ok`) from events (`event`).
struct IncomingLineHeaderTests {
    @Test func replyHasOkAndNoEvent() throws {
        let line = try WireCoding.line(Response(id: .number(3), result: EmptyResult()))
        let header = try WireCoding.decoder().decode(IncomingLineHeader.self, from: line)
        #expect(header.ok == true)
        #expect(header.event == nil)
        #expect(header.id == .number(3))
    }

    @Test func errorReplyHasOkFalse() throws {
        let line = try WireCoding.line(Response<EmptyResult>(id: .string("q"), error: WireError(code: .timeout, message: "t")))
        let header = try WireCoding.decoder().decode(IncomingLineHeader.self, from: line)
        #expect(header.ok == false)
        #expect(header.event == nil)
        #expect(header.id == .string("q"))
    }

    @Test func eventHasANameAndNoOk() throws {
        let event = RegistrationEvent(time: try WireText.date("2026-02-03T04:05:06Z"), registration: RegistrationStatus(state: .retrying, failures: 1))
        let header = try WireCoding.decoder().decode(IncomingLineHeader.self, from: WireCoding.line(event))
        #expect(header.event == EventName.registration)
        #expect(header.event == "registration")
        #expect(header.ok == nil)
        #expect(header.id == nil)
    }

    @Test func eventDecodesInFull() throws {
        let text = #"{"event":"registration","time":"2026-02-03T04:05:06Z","registration":{"state":"registered","failures":0,"id":"r"},"future":1}"#
        let event = try WireText.decode(RegistrationEvent.self, text)
        #expect(event.event == "registration")
        #expect(event.time == (try WireText.date("2026-02-03T04:05:06Z")))
        #expect(event.registration.state == .registered)
        #expect(event.registration.id == "r")
    }

    /// A header read from the line's `JSONValue` is the decoder's, and a line whose header
    /// the decoder refuses is left to it: every one-byte change of a reply and of an event.
    @Test func aHeaderReadWithoutTheDecoderIsTheDecoders() {
        func fields(_ header: IncomingLineHeader) -> String { "\(String(describing: header.id)) \(String(describing: header.ok)) \(String(describing: header.event))" }
        let bases = [#"{"id":7,"ok":true,"result":{"a":1}}"#, #"{"event":"send","time":"t","id":null,"ok":null}"#, #"{"id":"q","ok":false,"error":{}}"#]
        var read = 0
        for base in bases.map({ Array($0.utf8) }) {
            var lines = [base]
            for index in base.indices {
                for byte in [UInt8(ascii: "0"), UInt8(ascii: "\""), UInt8(ascii: "n"), UInt8(ascii: "t"), UInt8(ascii: "["), UInt8(ascii: "}")] where byte != base[index] {
                    var line = base
                    line[index] = byte
                    lines.append(line)
                }
            }
            for line in lines where (try? JSONShape.check(line)) != nil {
                guard let json = JSONValue(parsing: line), let header = IncomingLineHeader(json: json) else { continue }
                read += 1
                let decoded = try? WireCoding.decoder().decode(IncomingLineHeader.self, from: Data(line))
                #expect(decoded.map(fields) == fields(header), "\(String(decoding: line, as: UTF8.self))")
            }
        }
        #expect(read > 30, "only \(read) lines read without the decoder: the comparison would test little")
    }
}
