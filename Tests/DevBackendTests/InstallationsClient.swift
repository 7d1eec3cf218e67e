import DevBackend
import Foundation

/// The key the installations tests' backends are started with.
let testAPIKey = "k3y-for-tests-only"

/// A started backend serving the installations dialect; tests must stop it (with `defer`).
func startInstallationsBackend(
    key: String = testAPIKey, androidName: DevBackend.InstallationsAndroidName = .fcmv1, escapesText: Bool = false
) throws -> DevBackendServer {
    try startBackend(DevBackend.Options(
        escapesText: escapesText, quiet: true, api: .installations, apiKey: key, installationsAndroidName: androidName
    ))
}

/// The backend service's three calls, as its client makes them: the key in the `apikey`
/// header, no Basic authentication.
extension BackendClient {
    func installationRequest(
        _ method: String, _ path: String, key: String? = testAPIKey, body: Data? = nil,
        contentType: String? = "application/json", headers: [String: String] = [:]
    ) async throws -> Reply {
        var headers = headers
        if let key { headers["apikey"] = key }
        return try await request(method, path, authorization: nil, body: body, contentType: contentType, headers: headers)
    }

    func putInstallation(
        id: String, platform: String = "apns", pushChannel: String = "T0KEN", tags: [String] = [], key: String? = testAPIKey
    ) async throws -> Reply {
        let fields: [String: Any] = ["installationId": id, "platform": platform, "pushChannel": pushChannel, "tags": tags]
        let body = try JSONSerialization.data(withJSONObject: fields)
        return try await installationRequest("PUT", "/api/notifications/installations", key: key, body: body)
    }

    func putInstallation(json: String, key: String? = testAPIKey) async throws -> Reply {
        try await installationRequest("PUT", "/api/notifications/installations", key: key, body: Data(json.utf8))
    }

    func deleteInstallation(_ id: String, key: String? = testAPIKey) async throws -> Reply {
        try await installationRequest("DELETE", "/api/notifications/installations/" + percentEncoded(id), key: key)
    }

    func notify(
        text: String? = nil, action: String? = nil, tags: [String]? = nil, silent: Bool? = nil,
        key: String? = testAPIKey, idempotencyKey: String? = nil
    ) async throws -> Reply {
        var fields: [String: Any] = [:]
        if let text { fields["text"] = text }
        if let action { fields["action"] = action }
        if let tags { fields["tags"] = tags }
        if let silent { fields["silent"] = silent }
        let body = try JSONSerialization.data(withJSONObject: fields)
        return try await installationRequest(
            "POST", "/api/notifications/requests", key: key, body: body,
            headers: idempotencyKey.map { ["Idempotency-Key": $0] } ?? [:]
        )
    }

    func notify(json: String, key: String? = testAPIKey) async throws -> Reply {
        try await installationRequest("POST", "/api/notifications/requests", key: key, body: Data(json.utf8))
    }
}
