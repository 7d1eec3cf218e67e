import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Checks a payload the way the hub and the phone would: parse it, and read back
/// the text the user would see.
enum PayloadValidator {
    enum Verdict: Equatable {
        case valid(displayedText: String)
        /// The hub rejects the payload; the reason is for the console line.
        case invalid(reason: String)
    }

    static func check(_ payload: String, service: NotificationService) -> Verdict {
        let size = payload.utf8.count
        guard size <= service.payloadLimit else {
            return .invalid(reason: "\(size) bytes, over the \(service.payloadLimit)-byte limit")
        }
        let text: String?
        let expected: String
        switch service {
        case .apns:
            text = jsonString(in: payload, at: ["aps", "alert"])
            expected = "JSON with a string aps.alert"
        case .android:
            text = jsonString(in: payload, at: ["data", "message"])
            expected = "JSON with a string data.message"
        case .fcmV1:
            text = jsonString(in: payload, at: ["message", "data", "message"])
            expected = "JSON with a string message.data.message"
        case .wns:
            text = ToastTextReader.text(of: payload)
            expected = "well-formed XML with a <text> element"
        }
        guard let text else { return .invalid(reason: "not \(expected)") }
        return .valid(displayedText: text)
    }

    /// The string at the end of `path` in a JSON object, or nil if the payload is not
    /// such a JSON document.
    private static func jsonString(in payload: String, at path: [String]) -> String? {
        guard var value = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) else { return nil }
        for key in path {
            guard let object = value as? [String: Any], let next = object[key] else { return nil }
            value = next
        }
        return value as? String
    }
}

/// Reads the text of the first `<text>` element of a WNS toast with XMLParser, so
/// entities are resolved exactly as the toast renderer would.
///
/// One instance per parse, used on one thread only.
private final class ToastTextReader: NSObject, XMLParserDelegate {
    private var depthInText = 0
    private var collected = ""
    private var found = false
    private var finished = false

    static func text(of payload: String) -> String? {
        let parser = XMLParser(data: Data(payload.utf8))
        let reader = ToastTextReader()
        parser.delegate = reader
        parser.shouldResolveExternalEntities = false
        guard parser.parse(), reader.found else { return nil }
        return reader.collected
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        if depthInText > 0 {
            depthInText += 1
        } else if elementName == "text" && !finished {
            depthInText = 1
            found = true
        }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        guard depthInText > 0 else { return }
        depthInText -= 1
        if depthInText == 0 { finished = true }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if depthInText > 0 { collected += string }
    }

    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
        if depthInText > 0 { collected += String(decoding: CDATABlock, as: UTF8.self) }
    }
}
