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
}
