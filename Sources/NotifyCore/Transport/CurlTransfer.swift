#if !canImport(Darwin)
import CCurl
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

// What crosses between Swift and libcurl for one transfer: its request's strings going
// in, its outcome coming out.

extension HTTPOutcome {
    /// What a finished transfer of `CurlLoop` came to.
    init(finished transfer: UnsafeMutableRawPointer) {
        if ncurl_transfer_too_large(transfer) != 0 {
            self = .tooLarge
            return
        }
        var status = 0
        let code = ncurl_transfer_result(transfer, &status)
        guard code == NCURL_OK else {
            let words = String(cString: ncurl_transfer_error_text(transfer))
            let kind = HTTPFailure.Kind(curlCode: code, systemError: ncurl_transfer_os_errno(transfer), words: words)
            self = .failed(HTTPFailure(kind: kind, detail: words.isEmpty ? "libcurl error \(code)" : words))
            return
        }
        var length = 0
        let body = ncurl_transfer_body(transfer, &length).map { Data(bytes: $0, count: length) } ?? Data()
        self = .response(status: status, location: ncurl_transfer_location(transfer).map { String(cString: $0) },
                         retryAfter: ncurl_transfer_retry_after(transfer).map { String(cString: $0) }, body: body)
    }
}

extension HTTPFailure.Kind {
    /// libcurl reports every failed connect as `CURLE_COULDNT_CONNECT`; the system's error
    /// behind it tells a machine without a route to the backend from a backend that is down.
    /// A timeout is `CURLE_OPERATION_TIMEDOUT` whenever it struck. One before a connection
    /// was made is told from one waiting for an answer by its words ("Connection timed out
    /// after …", "Resolving timed out after …", as libcurl has worded them since 7.x) or, when
    /// the connect attempt's own deadline was checked first, by the `ETIMEDOUT` libcurl puts
    /// behind it ("Failed to connect to … after 512 ms: Timeout was reached"). Which check
    /// comes first depends on when libcurl's loop wakes: late on a loaded machine.
    init(curlCode code: Int32, systemError: Int32, words: String = "") {
        self = switch code {
        case Int32(NCURL_OPERATION_TIMEDOUT) where words.hasPrefix("Connection timed out") || words.hasPrefix("Resolving timed out") || systemError == ETIMEDOUT:
            .connectTimedOut
        case Int32(NCURL_OPERATION_TIMEDOUT): .timedOut
        case Int32(NCURL_COULDNT_CONNECT) where systemError == ENETUNREACH || systemError == ENETDOWN: .noRoute
        case Int32(NCURL_COULDNT_CONNECT): .connectionRefused
        case Int32(NCURL_COULDNT_RESOLVE_HOST), Int32(NCURL_COULDNT_RESOLVE_PROXY): .hostNotFound
        case Int32(NCURL_GOT_NOTHING), Int32(NCURL_SEND_ERROR), Int32(NCURL_RECV_ERROR): .connectionLost
        case Int32(NCURL_PEER_FAILED_VERIFICATION): .untrustedCertificate
        case Int32(NCURL_SSL_CONNECT_ERROR): .tlsFailed
        default: .other
        }
    }
}

extension Array where Element == String {
    /// Runs `body` with the strings as C strings, alive for the call.
    func withCStrings<R>(_ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies = map { strdup($0) }
        defer { copies.forEach { free($0) } }
        return body(copies.map { UnsafePointer($0) })
    }
}
#endif
