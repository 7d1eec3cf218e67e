#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files that hold a password (`credentials.json`, `retired-registrations.json`) are
/// for their user alone. One found readable by others (a restore or a copy that lost its
/// mode) is made 0600 again before it is read: unlike ssh with a private key, notifyd cannot
/// ask for the secret again, and refusing would only stop it; but the secret may have been
/// read meanwhile, so each caller warns that it be changed.
enum PrivateFile {
    /// The mode `path` had (as `chmod` writes it) when group or others could read it and it
    /// is 0600 now; nil when it was private already, or is not a regular file. Throws when
    /// it cannot be made private: then it is not used.
    static func makePrivate(_ path: String) throws -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0 else { return nil }
        let mode = String(info.st_mode & 0o777, radix: 8)
        guard chmod(path, 0o600) == 0 else { throw FileContents.Problem.system(errno) }
        return mode
    }
}
