#if canImport(Darwin)
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// HTTP through URLSession, on macOS (Linux uses `CurlTransport`). Its delegate refuses
/// redirects (a request carries the password, and a redirect would hand it to whatever
/// host the `Location` names) and cuts a reply off at `limit` bytes: a longer
/// `Content-Length` is refused before the body is read, a body without one once past it.
final class URLSessionTransport: NSObject, HTTPTransport, URLSessionDataDelegate, Sendable {
    private struct Transfer {
        var continuation: CheckedContinuation<HTTPOutcome, Never>
        var data = Data()
        var tooLarge = false
    }

    private let limit: Int
    private let settings: SettingsStore
    private let transfers = Mutex<[Int: Transfer]>([:])
    private nonisolated(unsafe) var session: URLSession!

    /// A session is configured once: its pool is sized for `max_connections` at start,
    /// and its bound on a whole request for twice the `request_timeout` at start (a reload's
    /// `request_timeout` applies to each request's wait for the backend). A reload's
    /// `max_connections` bounds the requests the outbox makes at once.
    init(settings: SettingsStore, replyLimit: Int) {
        limit = replyLimit
        self.settings = settings
        super.init()
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForResource = settings[\.requestTimeout] * 2
        configuration.httpMaximumConnectionsPerHost = settings[\.maxConnections]
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.urlCredentialStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    func networkChanged() {
        // "Ensures that future requests occur on a new TCP connection."
        session.flush {}
    }

    func invalidate() {
        session.invalidateAndCancel()
    }

    func perform(_ request: HTTPRequest) async -> HTTPOutcome {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        // `request_timeout` as it is now: a reload changes it for the next request.
        urlRequest.timeoutInterval = settings[\.requestTimeout]
        for line in request.headers {
            guard let colon = line.firstIndex(of: ":") else { continue }
            urlRequest.setValue(line[line.index(after: colon)...].trimmingSpaces(), forHTTPHeaderField: String(line[..<colon]))
        }
        urlRequest.httpBody = request.body
        let task = session.dataTask(with: urlRequest)
        // A continuation: URLSession's delegate, on its own queue, resumes it once the
        // transfer ends (see `Transfer`).
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfers.withLock { $0[task.taskIdentifier] = Transfer(continuation: continuation) }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        // nil: the 3xx itself becomes the reply, and the caller reports where it pointed.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if response.expectedContentLength > Int64(limit) {
            markTooLarge(dataTask)
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflow = transfers.withLock { transfers -> Bool in
            guard var transfer = transfers[dataTask.taskIdentifier], !transfer.tooLarge else { return false }
            if transfer.data.count + data.count > limit {
                transfer.tooLarge = true
                transfer.data = Data()
                transfers[dataTask.taskIdentifier] = transfer
                return true
            }
            transfer.data.append(data)
            transfers[dataTask.taskIdentifier] = transfer
            return false
        }
        if overflow { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if transfer.tooLarge {
            transfer.continuation.resume(returning: .tooLarge)
        } else if let error {
            transfer.continuation.resume(returning: .failed(Self.failure(error)))
        } else if let response = task.response as? HTTPURLResponse {
            transfer.continuation.resume(returning: .response(
                status: response.statusCode, location: response.value(forHTTPHeaderField: "Location"),
                retryAfter: response.value(forHTTPHeaderField: "Retry-After"), body: transfer.data))
        } else {
            transfer.continuation.resume(returning: .failed(HTTPFailure(kind: .other, detail: "the backend's answer was not HTTP")))
        }
    }

    private func markTooLarge(_ task: URLSessionTask) {
        transfers.withLock { transfers in
            transfers[task.taskIdentifier]?.tooLarge = true
            transfers[task.taskIdentifier]?.data = Data()
        }
    }

    private static func failure(_ error: any Error) -> HTTPFailure {
        guard let urlError = error as? URLError else { return HTTPFailure(kind: .other, detail: "\(error)") }
        let detail = urlError.localizedDescription
        switch urlError.code {
        case .timedOut: return HTTPFailure(kind: .timedOut, detail: detail)
        case .cannotConnectToHost: return HTTPFailure(kind: .connectionRefused, detail: detail)
        case .cannotFindHost, .dnsLookupFailed: return HTTPFailure(kind: .hostNotFound, detail: detail)
        case .notConnectedToInternet: return HTTPFailure(kind: .noRoute, detail: detail)
        case .networkConnectionLost: return HTTPFailure(kind: .connectionLost, detail: detail)
        case .cancelled: return HTTPFailure(kind: .cancelled, detail: detail)
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot: return HTTPFailure(kind: .untrustedCertificate, detail: detail)
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateNotYetValid: return HTTPFailure(kind: .tlsFailed, detail: detail)
        default: return HTTPFailure(kind: .other, detail: detail)
        }
    }
}
#endif
