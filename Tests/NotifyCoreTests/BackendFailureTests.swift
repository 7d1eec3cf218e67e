import Foundation
import Testing
@testable import NotifyCore

/// How each answer of the tutorial backend is interpreted, route by route.
struct BackendFailureTests {
    private static let allRoutes: [BackendFailure.Route] = [.create, .upsert, .delete, .send]
    private static let idRoutes: [BackendFailure.Route] = [.upsert, .delete]
    private static let otherRoutes: [BackendFailure.Route] = [.create, .send]

    private func classify(_ status: Int, retryAfter: Double? = nil, body: String = "", _ route: BackendFailure.Route) -> BackendFailure {
        BackendFailure.classify(.status(status, retryAfter: retryAfter, body: body), route: route)
    }

    @Test(arguments: allRoutes)
    func unauthorizedOn401(route: BackendFailure.Route) {
        #expect(classify(401, route) == .unauthorized(status: 401))
        #expect(classify(401, retryAfter: 30, route) == .unauthorized(status: 401))
    }

    @Test(arguments: allRoutes)
    func forbiddenWithoutRetryAfterIsACredentialFailure(route: BackendFailure.Route) {
        #expect(classify(403, body: "Forbidden", route) == .unauthorized(status: 403))
    }

    @Test(arguments: allRoutes)
    func forbiddenWithRetryAfterIsThrottling(route: BackendFailure.Route) {
        guard case .transient(let retryAfter, let reason) = classify(403, retryAfter: 120, route) else {
            Issue.record("403 with Retry-After was not transient")
            return
        }
        #expect(retryAfter == 120)
        #expect(reason.contains("403"))
        #expect(reason.contains("120"))
    }

    /// A Retry-After that is there but unreadable (`RetryAfter.parse` makes it 0) still
    /// says throttling: the credentials are not what was refused.
    @Test(arguments: allRoutes)
    func forbiddenWithAnUnreadableRetryAfterIsThrottlingToo(route: BackendFailure.Route) {
        let retryAfter = RetryAfter.parse("Sunday, 29-Nov-26 13:58:18 GMT soon")
        guard case .transient(_, let reason) = classify(403, retryAfter: retryAfter, route) else {
            Issue.record("403 with an unreadable Retry-After was not transient")
            return
        }
        #expect(reason == "the backend asked to slow down (HTTP 403 with Retry-After)")
    }

    @Test(arguments: idRoutes, [404, 410])
    func missingIdOnUpsertOrDeleteIsGone(route: BackendFailure.Route, status: Int) {
        #expect(classify(status, route) == .gone(status: status))
    }

    @Test(arguments: otherRoutes, [404, 410])
    func notFoundOnCreateOrSendIsRejected(route: BackendFailure.Route, status: Int) {
        #expect(classify(status, body: "Not Found", route) == .rejected(status: status, detail: "Not Found"))
    }

    @Test(arguments: idRoutes)
    func serverErrorOnUpsertOrDeleteMeansTheIdIsGone(route: BackendFailure.Route) {
        #expect(classify(500, body: "An error has occurred.", route) == .gone(status: 500))
    }

    @Test(arguments: otherRoutes)
    func serverErrorOnCreateOrSendIsTransient(route: BackendFailure.Route) {
        #expect(classify(500, route) == .transient(retryAfter: nil, reason: "the backend failed (HTTP 500)"))
        #expect(classify(500, retryAfter: 9, route) == .transient(retryAfter: 9, reason: "the backend failed (HTTP 500)"))
    }

    /// Each worded for what the backend said: it was reached, and asked for time or failed.
    static let retryable: [(Int, String)] = [
        (408, "the backend gave up waiting for the request (HTTP 408)"),
        (429, "the backend asked to slow down (HTTP 429)"),
        (502, "the gateway in front of the backend could not get an answer from it (HTTP 502)"),
        (503, "the backend is unavailable for now (HTTP 503)"),
        (504, "the gateway in front of the backend could not get an answer from it (HTTP 504)"),
    ]

    @Test(arguments: allRoutes, retryable)
    func retryableStatusesAreTransientAndKeepRetryAfter(route: BackendFailure.Route, status: (Int, String)) {
        #expect(classify(status.0, route) == .transient(retryAfter: nil, reason: status.1))
        #expect(classify(status.0, retryAfter: 42, route) == .transient(retryAfter: 42, reason: status.1))
        #expect(!status.1.contains("could not be reached"))
    }

    @Test(arguments: allRoutes, [400, 405, 409, 413, 415, 422])
    func otherClientErrorsAreRejectedWithTheBody(route: BackendFailure.Route, status: Int) {
        #expect(classify(status, body: "The request is invalid.", route) == .rejected(status: status, detail: "The request is invalid."))
    }

    @Test func rejectionDetailIsOneTrimmedLine() {
        let body = "  {\"Message\":\"The request is invalid.\",\r\n\"ModelState\":{\"tags\":[\"bad\"]}}\n\n"
        #expect(classify(400, body: body, .upsert)
            == .rejected(status: 400, detail: #"{"Message":"The request is invalid.", "ModelState":{"tags":["bad"]}}"#))
    }

    @Test func rejectionDetailIsCutAfterTwoHundredCharacters() throws {
        let body = String(repeating: "x", count: 500)
        guard case .rejected(_, let detail) = classify(400, body: body, .create) else {
            Issue.record("400 was not rejected")
            return
        }
        #expect(detail == String(repeating: "x", count: 200) + "…")
    }

    @Test func shortBodyIsNotCut() {
        let body = String(repeating: "y", count: 200)
        #expect(classify(400, body: body, .send) == .rejected(status: 400, detail: body))
    }

    @Test(arguments: allRoutes)
    func transportErrorsAreTransient(route: BackendFailure.Route) {
        #expect(BackendFailure.classify(.transport("connection refused"), route: route)
            == .transient(retryAfter: nil, reason: "the request to the backend failed: connection refused"))
        #expect(BackendFailure.classify(.transport("the request timed out"), route: route)
            == .transient(retryAfter: nil, reason: "the request to the backend failed: the request timed out"))
    }

    @Test(arguments: allRoutes)
    func unexpectedSuccessBodyIsTransient(route: BackendFailure.Route) {
        #expect(BackendFailure.classify(.invalidResponse("an empty body"), route: route)
            == .transient(retryAfter: nil, reason: "an empty body"))
    }

    /// The Retry-After value comes from the network (`RetryAfter.parse` passes any
    /// non-negative number through, e.g. `Retry-After: 99999999999999999999`), and the
    /// 403 throttling message converts it with `Int(_:)`, which traps above `Int.max`.
    /// A daemon must not crash on what a backend or proxy sends.
    @Test func hugeRetryAfterOnForbiddenDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            let failure = BackendFailure.classify(.status(403, retryAfter: 1e20, body: ""), route: .upsert)
            guard case .transient(let retryAfter, _) = failure, retryAfter == 1e20 else { exit(1) }
        }
    }

    @Test func hugeRetryAfterIsWhatTheHeaderParserProduces() {
        // The value reaching classify in the test above is a real parser output.
        #expect(RetryAfter.parse("99999999999999999999") == 1e20)
    }
}
