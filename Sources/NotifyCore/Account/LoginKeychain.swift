#if canImport(Security)
import Foundation
import Security

/// macOS: the password in the user's login keychain, a generic password item with service
/// "notifyd" and the login's id as account, through the Security framework (no child
/// process, nothing on a command line). Like the Secret Service on Linux, it never asks to
/// unlock: a locked keychain is reported, and waited out.
enum LoginKeychain {
    static func store(_ password: String, in item: SecretServiceKeyring.Item, label: String) -> Result<Void, SecretServiceKeyring.Failure> {
        _ = SecItemDelete(query(item) as CFDictionary)
        var attributes = query(item)
        attributes[kSecAttrLabel as String] = label
        attributes[kSecValueData as String] = Data(password.utf8)
        return check(SecItemAdd(attributes as CFDictionary, nil)).map { _ in () }
    }

    static func lookup(_ item: SecretServiceKeyring.Item) -> Result<String, SecretServiceKeyring.Failure> {
        var search = query(item)
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var found: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &found)
        return check(status).flatMap { _ in
            guard let data = found as? Data else { return .failure(.missing) }
            return .success(String(decoding: data, as: UTF8.self))
        }
    }

    static func clear(_ item: SecretServiceKeyring.Item) -> Result<Void, SecretServiceKeyring.Failure> {
        let status = SecItemDelete(query(item) as CFDictionary)
        return status == errSecItemNotFound ? .success(()) : check(status).map { _ in () }
    }

    private static func query(_ item: SecretServiceKeyring.Item) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "notifyd",
         kSecAttrAccount as String: item.user + " " + item.id,
         // Never a prompt from a background agent: a locked keychain fails instead.
         kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]
    }

    private static func check(_ status: OSStatus) -> Result<Void, SecretServiceKeyring.Failure> {
        switch status {
        case errSecSuccess: .success(())
        case errSecItemNotFound: .failure(.missing)
        case errSecInteractionNotAllowed, errSecAuthFailed: .failure(.locked)
        case errSecNotAvailable, errSecNoSuchKeychain: .failure(.unavailable("no login keychain (OSStatus \(status))"))
        default: .failure(.failed("the login keychain answered OSStatus \(status)"))
        }
    }
}
#endif
