import Foundation
import Testing
import NotifyTestSupport

/// The shell completions in contrib/completions: each loads in its shell without a
/// message, and offers the commands and options that the built notifyctl's --help names.
@Suite struct ContribCompletionTests {
    static let globalOptions: Set<String> = ["--socket", "--json", "--version", "--help"]
    /// What every command offers after its name as well: its options and these.
    static func offeredAfter(_ options: Set<String>) -> Set<String> {
        options.subtracting(globalOptions).union(["--socket", "--json"])
    }

    /// A shell's environment that keeps it away from the user's own configuration and
    /// history (fish writes its universal variables under $XDG_CONFIG_HOME).
    static func isolatedEnvironment(_ scratch: ContribScratch) throws -> [String: String] {
        [
            "HOME": try scratch.sub("home"),
            "XDG_CONFIG_HOME": try scratch.sub("home/.config"),
            "XDG_DATA_HOME": try scratch.sub("home/.local/share"),
            "XDG_CACHE_HOME": try scratch.sub("home/.cache"),
            "ZDOTDIR": try scratch.sub("home"),
            "TERM": "dumb",
        ]
    }

    static func words(_ output: String) -> Set<String> {
        Set(output.split(whereSeparator: \.isNewline).map { String($0.split(separator: "\t").first ?? "") })
    }

    // MARK: bash

    /// The bash completion function's answer for a command line (completing its last word).
    static func bashComplete(_ line: [String], scratch: ContribScratch) async throws -> Set<String> {
        let bash = try ContribTool.bash.require()
        let script = """
            source "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            _notifyctl
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try await runCaptured(bash, ["--norc", "--noprofile", "-c", script, "bash", Contrib.path("completions/notifyctl.bash")] + line,
                                   environment: try isolatedEnvironment(scratch))
        #expect(result.status == 0 && result.error.isEmpty, "bash completion for \(line): \(result.error)")
        return words(result.output)
    }

    @Test(.enabled(if: ContribTool.bash.shouldRun, "needs bash (Debian package bash)"))
    func bashCompletionLoads() async throws {
        let bash = try ContribTool.bash.require()
        try await withContribScratch("bash") { scratch in
            let result = try await runCaptured(bash, ["--norc", "--noprofile", "-c", "source \"$1\"; complete -p notifyctl", "bash", Contrib.path("completions/notifyctl.bash")],
                                       environment: try Self.isolatedEnvironment(scratch))
            #expect(result.status == 0)
            #expect(result.error.isEmpty, "bash: \(result.error)")
            #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "complete -F _notifyctl notifyctl")
        }
    }

    @Test(.enabled(if: ContribTool.bash.shouldRun, "needs bash (Debian package bash)"))
    func bashCompletesCommandsOptionsPlatformsAndFiles() async throws {
        try await withContribScratch("bash") { scratch in
            #expect(try await Self.bashComplete(["notifyctl", "se"], scratch: scratch) == ["set-token", "set-tags", "send"])
            #expect(try await Self.bashComplete(["notifyctl", "set-token", "--platform", ""], scratch: scratch) == ["apns", "fcmv1", "fcm", "gcm", "wns"])
            #expect(try await Self.bashComplete(["notifyctl", "send", "--pns", "apns,f"], scratch: scratch) == ["apns,fcmv1", "apns,fcm"])
            _ = try scratch.write("sockets/notifyd.sock", "")
            #expect(try await Self.bashComplete(["notifyctl", "--socket", scratch.path + "/sockets/no"], scratch: scratch) == [scratch.path + "/sockets/notifyd.sock"])
            // After --socket's value comes the command again.
            #expect(try await Self.bashComplete(["notifyctl", "--socket", "/x", "pi"], scratch: scratch) == ["ping"])

            let all = try await Self.bashComplete(["notifyctl", ""], scratch: scratch)
            for (command, options) in try await ContribHelp.notifyctlCommands() {
                #expect(all.contains(command), "bash does not complete the command \(command)")
                let offered = try await Self.bashComplete(["notifyctl", command, "--"], scratch: scratch)
                for option in Self.offeredAfter(options) {
                    #expect(offered.contains(option), "bash does not complete \(command) \(option)")
                }
            }
            let globals = try await Self.bashComplete(["notifyctl", "--"], scratch: scratch)
            for option in try await ContribHelp.notifyctlGlobalOptions() {
                #expect(globals.contains(option), "bash does not complete \(option)")
            }
        }
    }

    // MARK: zsh

    /// Drives an interactive zsh in a pseudo-terminal (zsh/zpty), types the line and a
    /// Tab, and prints every match the completion system offered.
    static let zshCapture = """
        # zsh -f capture.zsh FPATH_DIR DUMP_FILE 'LINE'
        zmodload zsh/zpty
        zpty z zsh -f -i
        zpty -w z "PROMPT='<p>'; unsetopt zle_bracketed_paste 2>/dev/null; fpath=(${(q)1} \\$fpath); autoload -Uz compinit; compinit -u -d ${(q)2}"
        zpty -w z 'compadd () { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return $?; fi; typeset -a __hits; builtin compadd -A __hits "$@"; local h; for h in $__hits; do print -r -- "<hit>$h</hit>"; done; builtin compadd "$@"; }'
        zpty -w z "bindkey '^I' complete-word; zstyle ':completion:*' list-prompt ''; zstyle ':completion:*' menu no"
        zpty -w z 'print -r -- "<""ready>"'
        local out
        # Wait for the prompt: typed before zle has the terminal in raw mode, the line
        # would go through the kernel's line editing (where ^U erases it).
        zpty -r z out '*<ready>*<p>*'
        zpty -n -w z "$3"$'\\t'
        zpty -n -w z $'\\x15'
        zpty -w z 'print -r -- "<""done>"'
        zpty -r z out '*<done>*'
        zpty -d z
        print -rl -- ${${(M)${(f)${out//<\\/hit>/$'\\n'}}:#*<hit>*}##*<hit>}
        """

    static func zshComplete(_ line: String, scratch: ContribScratch) async throws -> Set<String> {
        let zsh = try ContribTool.zsh.require()
        let functions = try scratch.sub("zfunc")
        let target = functions + "/_notifyctl"
        if !FileManager.default.fileExists(atPath: target) {
            try FileManager.default.copyItem(atPath: Contrib.path("completions/_notifyctl"), toPath: target)
        }
        let capture = try scratch.write("capture.zsh", zshCapture)
        let result = try await runCaptured(zsh, ["-f", capture, functions, scratch.path + "/zcompdump", line], environment: try isolatedEnvironment(scratch))
        #expect(result.status == 0 && result.error.isEmpty, "zsh completion of '\(line)': \(result.error)")
        return words(result.output)
    }

    @Test(.enabled(if: ContribTool.zsh.shouldRun, "needs zsh (Debian package zsh)"))
    func zshCompletionLoadsFromFpathAndBySourcing() async throws {
        let zsh = try ContribTool.zsh.require()
        try await withContribScratch("zsh") { scratch in
            let functions = try scratch.sub("zfunc")
            try FileManager.default.copyItem(atPath: Contrib.path("completions/_notifyctl"), toPath: functions + "/_notifyctl")
            // As installed: a directory on $fpath, found by compinit.
            let fromFpath = try await runCaptured(zsh, ["-f", "-c", """
                fpath=("$1" $fpath); autoload -Uz compinit && compinit -u -d "$2" && autoload +X _notifyctl && print -r -- $_comps[notifyctl]
                """, "zsh", functions, scratch.path + "/dump1"], environment: try Self.isolatedEnvironment(scratch))
            #expect(fromFpath.status == 0)
            #expect(fromFpath.error.isEmpty, "zsh: \(fromFpath.error)")
            #expect(fromFpath.output.trimmingCharacters(in: .whitespacesAndNewlines) == "_notifyctl")
            // Sourced from a .zshrc after compinit.
            let sourced = try await runCaptured(zsh, ["-f", "-c", """
                autoload -Uz compinit && compinit -u -d "$2" && source "$1" && print -r -- $_comps[notifyctl]
                """, "zsh", Contrib.path("completions/_notifyctl"), scratch.path + "/dump2"], environment: try Self.isolatedEnvironment(scratch))
            #expect(sourced.status == 0)
            #expect(sourced.error.isEmpty, "zsh: \(sourced.error)")
            #expect(sourced.output.trimmingCharacters(in: .whitespacesAndNewlines) == "_notifyctl")
        }
    }

    @Test(.enabled(if: ContribTool.zsh.shouldRun, "needs zsh (Debian package zsh)"))
    func zshCompletesCommandsOptionsPlatformsAndFiles() async throws {
        try await withContribScratch("zsh") { scratch in
            #expect(try await Self.zshComplete("notifyctl se", scratch: scratch) == ["set-token", "set-tags", "send"])
            #expect(try await Self.zshComplete("notifyctl set-token --platform ", scratch: scratch) == ["apns", "fcmv1", "fcm", "gcm", "wns"])
            _ = try scratch.write("sockets/notifyd.sock", "")
            #expect(try await Self.zshComplete("notifyctl --socket \(scratch.path)/sockets/no", scratch: scratch).contains("notifyd.sock"))

            let all = try await Self.zshComplete("notifyctl ", scratch: scratch)
            for (command, options) in try await ContribHelp.notifyctlCommands() {
                #expect(all.contains(command), "zsh does not complete the command \(command)")
                let offered = try await Self.zshComplete("notifyctl \(command) --", scratch: scratch)
                for option in Self.offeredAfter(options) {
                    #expect(offered.contains(option), "zsh does not complete \(command) \(option)")
                }
            }
        }
    }

    // MARK: fish

    static func fishComplete(_ line: String, scratch: ContribScratch) async throws -> Set<String> {
        let fish = try ContribTool.fish.require()
        let result = try await runCaptured(fish, ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", Contrib.path("completions/notifyctl.fish"), line],
                                   environment: try isolatedEnvironment(scratch))
        #expect(result.status == 0 && result.error.isEmpty, "fish completion of '\(line)': \(result.error)")
        return words(result.output)
    }

    @Test(.enabled(if: ContribTool.fish.shouldRun, "needs fish (Debian package fish)"))
    func fishCompletionLoadsAndCompletesTheSCommands() async throws {
        try await withContribScratch("fish") { scratch in
            let offered = try await Self.fishComplete("notifyctl se", scratch: scratch)
            #expect(offered == ["set-token", "set-tags", "send"])
        }
    }

    @Test(.enabled(if: ContribTool.fish.shouldRun, "needs fish (Debian package fish)"))
    func fishCompletesCommandsOptionsPlatformsAndFiles() async throws {
        try await withContribScratch("fish") { scratch in
            #expect(try await Self.fishComplete("notifyctl set-token --platform ", scratch: scratch) == ["apns", "fcmv1", "fcm", "gcm", "wns"])
            #expect(try await Self.fishComplete("notifyctl send --pns apns,", scratch: scratch).isSuperset(of: ["apns,fcmv1", "apns,fcm"]))
            _ = try scratch.write("sockets/notifyd.sock", "")
            #expect(try await Self.fishComplete("notifyctl --socket \(scratch.path)/sockets/no", scratch: scratch) == [scratch.path + "/sockets/notifyd.sock"])
            #expect(try await Self.fishComplete("notifyctl --socket /x pi", scratch: scratch) == ["ping"])

            let all = try await Self.fishComplete("notifyctl ", scratch: scratch)
            for (command, options) in try await ContribHelp.notifyctlCommands() {
                #expect(all.contains(command), "fish does not complete the command \(command)")
                let offered = try await Self.fishComplete("notifyctl \(command) --", scratch: scratch)
                for option in Self.offeredAfter(options) {
                    #expect(offered.contains(option), "fish does not complete \(command) \(option)")
                }
            }
            let globals = try await Self.fishComplete("notifyctl --", scratch: scratch)
            for option in try await ContribHelp.notifyctlGlobalOptions() {
                #expect(globals.contains(option), "fish does not complete \(option)")
            }
        }
    }

    // MARK: one table

    /// The three files are what `notifyctl completion SHELL` writes from the table the
    /// parser uses: an option added to a command cannot be missing from a shell.
    @Test(arguments: [("bash", "completions/notifyctl.bash"), ("zsh", "completions/_notifyctl"), ("fish", "completions/notifyctl.fish")])
    func eachFileIsWhatNotifyctlGeneratesFromItsTable(shell: String, file: String) async throws {
        let generated = try await run(BuiltProducts.path("notifyctl"), ["completion", shell])
        #expect(generated.status == 0, "\(generated.error)")
        let installed = try String(contentsOfFile: Contrib.path(file), encoding: .utf8)
        #expect(generated.output == installed, "contrib/\(file) differs from `notifyctl completion \(shell)`: regenerate it")
    }
}
