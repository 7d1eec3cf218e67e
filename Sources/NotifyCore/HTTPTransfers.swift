import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The URLSession delegate behind `HTTPBackend`: it refuses redirects (a request carries
/// the password, and a redirect would hand it to whatever host the `Location` names) and
/// cuts a reply off at `limit` bytes. A reply that announces a longer `Content-Length` is
/// refused before its body is read. One without a length is cancelled once past `limit`,
/// but on Linux FoundationNetworking keeps reading until the cancellation reaches its work
/// queue, which a sender as fast as loopback keeps busy: measured, a 100 MB chunked reply
/// still raised the peak by about 110 MB. Only a client that can abort from libcurl's write
/// callback would bound that case.
final class HTTPTransfers: NSObject, URLSessionDataDelegate, Sendable {
    enum Outcome: Sendable {
        case response(HTTPURLResponse, Data)
        case tooLarge
        case failed(any Error)
    }

    private struct Transfer {
        var continuation: CheckedContinuation<Outcome, Never>
        var data = Data()
        var tooLarge = false
    }

    let limit: Int
    private let transfers = Mutex<[Int: Transfer]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Runs `request` on `session` (whose delegate this is); cancelling the calling task
    /// cancels the request.
    func perform(_ request: URLRequest, in session: URLSession) async -> Outcome {
        let task = session.dataTask(with: request)
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
            transfer.continuation.resume(returning: .failed(error))
        } else if let response = task.response as? HTTPURLResponse {
            transfer.continuation.resume(returning: .response(response, transfer.data))
        } else {
            transfer.continuation.resume(returning: .failed(URLError(.badServerResponse)))
        }
    }

    private func markTooLarge(_ task: URLSessionTask) {
        transfers.withLock { transfers in
            transfers[task.taskIdentifier]?.tooLarge = true
            transfers[task.taskIdentifier]?.data = Data()
        }
    }
}
