/// Reading one request off a connection: the head, `Expect: 100-continue`, and a
/// body framed by `Content-Length` or `Transfer-Encoding: chunked`.
extension HTTPConnection {
    enum ReadOutcome {
        case request(HTTPRequest)
        /// The peer closed (or the server is stopping) between requests.
        case closed
        /// Answer with the rejection, then close.
        case rejected(HTTPRejection)
    }

    func readRequest() -> ReadOutcome {
        let headEnd: Int
        switch readHead() {
        case .success(let end): headEnd = end
        case .failure(.closedCleanly): return .closed
        case .failure(.rejected(let rejection)): return .rejected(rejection)
        }
        let head: HTTPHeadParser.Head
        switch HTTPHeadParser.parse(buffer[0..<headEnd]) {
        case .success(let parsed): head = parsed
        case .failure(let rejection): return .rejected(rejection)
        }
        var request = HTTPRequest(
            method: head.method, target: head.target, minorVersion: head.minorVersion,
            headers: head.headers, body: []
        )
        let bodyStart = headEnd + 4
        let framing: BodyFraming
        switch bodyFraming(of: request) {
        case .success(let found): framing = found
        case .failure(let rejection): return .rejected(rejection)
        }
        if let rejection = answerExpectation(of: request, framing: framing, bodyStart: bodyStart) {
            return .rejected(rejection)
        }
        let consumed: Int
        switch framing {
        case .none:
            consumed = bodyStart
        case .length(let length):
            guard fill(upTo: bodyStart + length) else {
                return .rejected(HTTPRejection(400, "the connection ended inside the body"))
            }
            request.body = Array(buffer[bodyStart..<(bodyStart + length)])
            consumed = bodyStart + length
        case .chunked:
            switch readChunkedBody(from: bodyStart) {
            case .success(let (body, end)):
                request.body = body
                consumed = end
            case .failure(let rejection):
                return .rejected(rejection)
            }
        }
        buffer.removeFirst(consumed)
        return .request(request)
    }

    private enum HeadFailure: Error {
        case closedCleanly
        case rejected(HTTPRejection)
    }

    /// Index of the CRLFCRLF that ends the head, reading more as needed.
    private func readHead() -> Result<Int, HeadFailure> {
        var scanned = 0
        while true {
            // Clients may send stray CRLFs between requests (RFC 9112 §2.2).
            while buffer.count >= 2, buffer[0] == 13, buffer[1] == 10 {
                buffer.removeFirst(2)
                scanned = 0
            }
            if buffer.count >= 4 {
                var index = max(0, scanned - 3)
                while index + 3 < buffer.count {
                    if buffer[index] == 13, buffer[index + 1] == 10,
                       buffer[index + 2] == 13, buffer[index + 3] == 10 {
                        guard index <= limits.maxHeadBytes else { break }
                        return .success(index)
                    }
                    index += 1
                }
                scanned = buffer.count
            }
            // A TLS handshake record (0x16) where a request line should start: a client
            // told https:// for this plain server. Told at once, as other HTTP servers
            // answer garbage, instead of waiting for a head that never comes.
            if buffer.first == 0x16 {
                return .failure(.rejected(HTTPRejection(400, "this server speaks plain HTTP, not TLS: use http:// in the URL")))
            }
            if buffer.count > limits.maxHeadBytes {
                return .failure(.rejected(HTTPRejection(431, "the request head exceeds \(limits.maxHeadBytes) bytes")))
            }
            let wasEmpty = buffer.isEmpty
            switch receive() {
            case .data:
                continue
            case .closed, .stopped:
                if wasEmpty { return .failure(.closedCleanly) }
                return .failure(.rejected(HTTPRejection(400, "the connection ended inside the request head")))
            case .timedOut:
                if wasEmpty { return .failure(.closedCleanly) }
                return .failure(.rejected(HTTPRejection(408, "the request head did not arrive in time")))
            }
        }
    }

    enum BodyFraming {
        case none
        case length(Int)
        case chunked
    }

    private func bodyFraming(of request: HTTPRequest) -> Result<BodyFraming, HTTPRejection> {
        let codings = request.headerTokens("Transfer-Encoding")
        let lengths = request.headerValues("Content-Length")
        if !codings.isEmpty {
            // Both framings at once is the classic request-smuggling ambiguity.
            guard lengths.isEmpty else {
                return .failure(HTTPRejection(400, "Content-Length and Transfer-Encoding together"))
            }
            guard codings == ["chunked"] else {
                return .failure(HTTPRejection(501, "only the chunked transfer coding is supported"))
            }
            return .success(.chunked)
        }
        let values = Set(lengths.flatMap { $0.split(separator: ",").map { $0.trimmingSpaces() } })
        guard let text = values.first else { return .success(.none) }
        guard values.count == 1, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            return .failure(HTTPRejection(400, "invalid Content-Length"))
        }
        guard text.count <= 12, let length = Int(text), length <= limits.maxBodyBytes else {
            return .failure(HTTPRejection(413, "the body exceeds \(limits.maxBodyBytes) bytes"))
        }
        return .success(length == 0 ? .none : .length(length))
    }

    /// Sends `100 Continue` when the client waits for it before sending its body.
    private func answerExpectation(of request: HTTPRequest, framing: BodyFraming, bodyStart: Int) -> HTTPRejection? {
        let expectations = request.headerTokens("Expect")
        guard !expectations.isEmpty else { return nil }
        guard expectations == ["100-continue"] else {
            return HTTPRejection(417, "only Expect: 100-continue is supported")
        }
        if case .none = framing { return nil }
        guard request.minorVersion >= 1, buffer.count <= bodyStart else { return nil }
        _ = sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        return nil
    }

    /// Reads until the buffer holds `count` bytes; false when the peer goes away.
    private func fill(upTo count: Int) -> Bool {
        while buffer.count < count {
            guard case .data = receive() else { return false }
        }
        return true
    }

    /// Index just past the next CRLF at or after `start`, reading more as needed.
    private func lineEnd(from start: Int, maxLength: Int) -> Result<Int, HTTPRejection> {
        var index = start
        while true {
            while index + 1 < buffer.count {
                if buffer[index] == 13 && buffer[index + 1] == 10 { return .success(index) }
                index += 1
            }
            if index - start > maxLength {
                return .failure(HTTPRejection(400, "chunk line too long"))
            }
            guard case .data = receive() else {
                return .failure(HTTPRejection(400, "the connection ended inside a chunked body"))
            }
        }
    }

    private func readChunkedBody(from start: Int) -> Result<([UInt8], Int), HTTPRejection> {
        var body: [UInt8] = []
        var position = start
        while true {
            let end: Int
            switch lineEnd(from: position, maxLength: 4096) {
            case .success(let found): end = found
            case .failure(let rejection): return .failure(rejection)
            }
            let line = String(decoding: buffer[position..<end], as: UTF8.self)
            // Chunk extensions after ';' carry nothing this server needs.
            let sizeText = (line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                .trimmingSpaces()
            guard !sizeText.isEmpty, sizeText.count <= 8, sizeText.allSatisfy(\.isHexDigit),
                  let size = Int(sizeText, radix: 16) else {
                return .failure(HTTPRejection(400, "invalid chunk size '\(sizeText)'"))
            }
            position = end + 2
            if size == 0 {
                return readTrailers(from: position).map { (body, $0) }
            }
            guard body.count + size <= limits.maxBodyBytes else {
                return .failure(HTTPRejection(413, "the body exceeds \(limits.maxBodyBytes) bytes"))
            }
            guard fill(upTo: position + size + 2) else {
                return .failure(HTTPRejection(400, "the connection ended inside a chunk"))
            }
            guard buffer[position + size] == 13, buffer[position + size + 1] == 10 else {
                return .failure(HTTPRejection(400, "chunk data not followed by CRLF"))
            }
            body.append(contentsOf: buffer[position..<(position + size)])
            position += size + 2
        }
    }

    /// Skips trailer fields up to the empty line; returns the index after it.
    private func readTrailers(from start: Int) -> Result<Int, HTTPRejection> {
        var position = start
        var total = 0
        while true {
            let end: Int
            switch lineEnd(from: position, maxLength: limits.maxHeadBytes) {
            case .success(let found): end = found
            case .failure(let rejection): return .failure(rejection)
            }
            if end == position { return .success(end + 2) }
            total += end - position + 2
            guard total <= limits.maxHeadBytes else {
                return .failure(HTTPRejection(431, "chunked trailers too large"))
            }
            position = end + 2
        }
    }
}
