#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyCore
import NotifyProtocol
import NotifySystem

/// `notifyctl reload`, SIGHUP and `systemctl --user reload notifyd`: the configuration is
/// read again and every setting but `state_dir` takes effect, or, when anything is wrong
/// with it, nothing changes and every problem is named.
extension Daemon {
    /// One reload at a time, in the order they came: a second one waits for the first,
    /// then reads the files again.
    public func reload() async -> ReloadResult {
        await reloads.begin()
        defer { reloads.end() }
        return await reloadNow()
    }

    private func reloadNow() async -> ReloadResult {
        guard let source = configuration.settingsSource else {
            return ReloadResult(config: "", applied: [], restartNeeded: [], problems: ["this notifyd was not started from a configuration"])
        }
        // Reading the file and opening the log block: not on the concurrency pool. The log
        // file is opened before anything changes, so that one that cannot be opened is a
        // problem like the others; under the same name too, for logrotate.
        let logFile = configuration.logFile
        let (read, opened) = await NativeThread.run(name: "notifyd-reload") {
            let read = source.read()
            return (read, logFile.map { file in Result { () throws(LogFile.Problem) in try file.prepare(read.0.runtime.logFile) } })
        }
        let settings = read.0
        var problems = read.1
        if case .failure(let problem) = opened {
            problems.append(SettingProblem(origin: settings.origins["log_file"] ?? "settings", key: "log_file", message: problem.description))
        }
        guard problems.isEmpty else {
            if case .success(let unused) = opened { logFile?.discard(unused) }
            logger.warning("reload: configuration unchanged: " + problems.map(\.description).joined(separator: "; "))
            return ReloadResult(config: settings.configPath, applied: [], restartNeeded: [], problems: problems.map(\.description))
        }
        if case .success(let file) = opened { logFile?.use(file) }
        for warning in settings.warnings { logger.warning("reload: " + warning) }
        let current = self.settings.text
        let (applied, restartNeeded) = settings.changes(from: current)
        // What cannot be applied stays as it was at start, to be compared with at the next reload.
        var inEffect = settings.values
        for key in restartNeeded { inEffect[key] = current[key] }
        control.restartNeeded = restartNeeded
        await self.settings.publish(settings.runtime, text: inEffect)
        logger.notice("reloaded \(settings.configPath) (settings generation \(self.settings.generation)): " + (applied.isEmpty ? "nothing changed" : "applied " + applied.joined(separator: ", "))
                      + (restartNeeded.isEmpty ? "" : "; takes effect after a restart: " + restartNeeded.joined(separator: ", ")))
        let now = Date()
        let before = settingsRead.withLock { read in
            defer { read = (now, false) }
            return read
        }
        var result = ReloadResult(config: settings.configPath, applied: applied, restartNeeded: restartNeeded, problems: [],
                                  restartCommand: configuration.restartCommand)
        result.warnings = settings.warnings.isEmpty ? nil : settings.warnings
        if applied.isEmpty && restartNeeded.isEmpty {
            result.unchangedSince = before.atStart ? "start" : "reload"
            result.readAt = before.at
            result.set = SettingKey.all.map(\.name).filter { settings.origins[$0] != nil }
        }
        return result
    }
}
