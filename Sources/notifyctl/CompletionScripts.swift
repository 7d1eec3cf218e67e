/// The bash, zsh and fish completions of notifyctl, written from the table the parser
/// uses (`Subcommands.all`, each command's `options` and `operand`, `CommandOption.global`):
/// `notifyctl completion SHELL` prints them, and contrib/completions holds what it prints.
enum CompletionScripts {
    static let shells = ["bash", "zsh", "fish"]

    static func script(for shell: String) -> String? {
        switch shell {
        case "bash": bash()
        case "zsh": zsh()
        case "fish": fish()
        default: nil
        }
    }

    /// The commands and `help`, with their summaries.
    private static var commands: [(name: String, summary: String, options: [CommandOption], operand: CommandOperand)] {
        Subcommands.all.map { ($0.name, $0.summary, $0.options, $0.operand) }
            + [("help", "show help for notifyctl or a command", [], .command)]
    }

    private static let platformSummaries = [
        "apns": "Apple Push Notification service", "fcmv1": "Firebase Cloud Messaging (Android)",
        "fcm": "Android, for backends that predate FCM v1", "gcm": "Android, for the oldest backends",
        "wns": "Windows Push Notification Services",
    ]

    /// Every option that takes a value, once, with what completes it.
    private static var valued: [CommandOption] {
        var seen = Set<String>()
        return (CommandOption.global + commands.flatMap(\.options)).filter { $0.value != nil && seen.insert($0.name).inserted }
    }

    // MARK: bash

    static func bash() -> String {
        let names = commands.map(\.name).joined(separator: " ")
        var valueCases = ""
        for option in valued {
            let body: String
            switch option.values {
            case .platform: body = #"COMPREPLY=($(compgen -W "$platforms" -- "$cur"))"#
            case .platforms:
                body = """
                    # A comma-separated list: complete the last item.
                                local done_part="" last=$cur
                                if [[ $cur == *,* ]]; then
                                    done_part=${cur%,*},
                                    last=${cur##*,}
                                fi
                                COMPREPLY=($(compgen -P "$done_part" -W "$platforms" -- "$last"))
                                compopt -o nospace 2>/dev/null
                    """
            case .files: body = "COMPREPLY=($(compgen -f -- \"$cur\"))\n            compopt -o filenames 2>/dev/null"
            case .none: body = "# nothing to offer: the value is the user's own"
            }
            valueCases += "        \(option.name))\n            \(body)\n            return\n            ;;\n"
        }
        var commandCases = ""
        for command in commands {
            let options = command.options.map(\.name).joined(separator: " ")
            switch command.operand {
            case .actions(let actions):
                commandCases += """
                            \(command.name))
                                if ((cword == command_index + 1)) && [[ $cur != -* ]]; then
                                    COMPREPLY=($(compgen -W "\(actions.map(\.name).joined(separator: " "))" -- "$cur"))
                                    return
                                fi
                                options="\(options)"
                                ;;

                    """
            case .command:
                commandCases += """
                            \(command.name))
                                if ((cword == command_index + 1)); then
                                    COMPREPLY=($(compgen -W "$commands" -- "$cur"))
                                fi
                                return
                                ;;

                    """
            case .none, .user:
                if !options.isEmpty { commandCases += "        \(command.name)) options=\"\(options)\" ;;\n" }
            }
        }
        let globals = CommandOption.global.map(\.name).joined(separator: " ")
        return """
            # bash completion for notifyctl(1), the client of notifyd(1).
            # Installed as share/bash-completion/completions/notifyctl; or source it from ~/.bashrc.
            # Written by `notifyctl completion bash`, from the table notifyctl parses with.

            _notifyctl() {
                local cur prev words cword
                if declare -F _init_completion >/dev/null 2>&1; then
                    _init_completion || return
                else
                    # Without the bash-completion package: plain words.
                    cur=${COMP_WORDS[COMP_CWORD]}
                    prev=${COMP_WORDS[COMP_CWORD-1]}
                    words=("${COMP_WORDS[@]}")
                    cword=$COMP_CWORD
                fi

                local commands="\(names)"
                local platforms="\(CommandOption.platformNames.joined(separator: " "))"

                # The command is the first word after the global options (and --socket's value).
                local i command="" command_index=0
                for ((i = 1; i < cword; i++)); do
                    case ${words[i]} in
                        --socket) ((i++)) ;;
                        -*) ;;
                        *) command=${words[i]}; command_index=$i; break ;;
                    esac
                done

                case $prev in
            \(valueCases)    esac

                if [[ -z $command ]]; then
                    if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W "\(globals) --version --help" -- "$cur"))
                    else
                        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
                    fi
                    return
                fi

                local options=""
                case $command in
            \(commandCases)    esac
                if [[ $cur == -* ]]; then
                    # --socket and --json work after the command too.
                    COMPREPLY=($(compgen -W "$options \(globals) --help" -- "$cur"))
                fi
            }

            complete -F _notifyctl notifyctl

            """
    }

    // MARK: zsh

    static func zsh() -> String {
        let platforms = CommandOption.platformNames.map { "    '\($0):\(platformSummaries[$0] ?? $0)'" }.joined(separator: "\n")
        let commandList = commands.map { "    \(zshQuoted($0.name + ":" + escaped($0.summary, ":", with: "\\:")))" }.joined(separator: "\n")
        var cases = ""
        for command in commands {
            var specs = (command.options + CommandOption.global).map(zshSpec)
            switch command.operand {
            case .user: specs.append("'1:user:_users'")
            case .actions(let actions): specs.append("'1:action:(\(actions.map(\.name).joined(separator: " ")))'")
            case .command: specs.append("'1:command:_notifyctl_commands'")
            case .none: break
            }
            if case .command = command.operand {} else { specs.append("'(- *)--help[print help]'") }
            cases += "    \(command.name))\n      _arguments \\\n        " + specs.joined(separator: " \\\n        ") + " && ret=0\n      ;;\n"
        }
        let globals = CommandOption.global.map(zshSpec).joined(separator: " \\\n    ")
        return """
            #compdef notifyctl
            # zsh completion for notifyctl(1), the client of notifyd(1).
            # Installed as share/zsh/site-functions/_notifyctl (a directory in $fpath).
            # Written by `notifyctl completion zsh`, from the table notifyctl parses with.

            _notifyctl_platforms() {
              local -a platforms
              platforms=(
            \(platforms)
              )
              _describe -t platforms 'platform' platforms
            }

            _notifyctl_pns() {
              _values -s , 'push platforms' \(CommandOption.platformNames.joined(separator: " "))
            }

            _notifyctl_commands() {
              local -a commands
              commands=(
            \(commandList)
              )
              _describe -t commands 'notifyctl command' commands
            }

            _notifyctl() {
              local curcontext=$curcontext state line ret=1
              typeset -A opt_args

              _arguments -C \\
                \(globals) \\
                '(- *)--version[print the version]' \\
                '(- *)'{-h,--help}'[print help]' \\
                '1:command:_notifyctl_commands' \\
                '*::argument:->argument' && ret=0

              [[ $state == argument ]] || return ret

              curcontext=${curcontext%:*:*}:notifyctl-$words[1]:
              case $words[1] in
            \(cases)  esac
              return ret
            }

            # Autoloaded from $fpath, this file is the function body: complete. Sourced from a
            # .zshrc after compinit, it only registers the function.
            if [[ $funcstack[1] == _notifyctl ]]; then
              _notifyctl "$@"
            else
              compdef _notifyctl notifyctl
            fi

            """
    }

    private static func zshSpec(_ option: CommandOption) -> String {
        let summary = escaped(escaped(option.summary, "]", with: "\\]"), ":", with: "\\:")
        guard let value = option.value else { return zshQuoted("\(option.name)[\(summary)]") }
        let action = switch option.values {
        case .platform: ":platform:_notifyctl_platforms"
        case .platforms: ":push platforms:_notifyctl_pns"
        case .files: ":\(value.lowercased()):_files"
        case .none: ":\(value.lowercased())"
        }
        return zshQuoted("\(option.name)=[\(summary)]\(action)")
    }

    /// `text` with each `character` written as `replacement`. The standard library's
    /// `replacing` would link _StringProcessing and its regex parser into notifyctl, whose
    /// relocations every start pays (`NotifyctlLinkTests`).
    private static func escaped(_ text: String, _ character: Character, with replacement: String) -> String {
        text.split(separator: character, omittingEmptySubsequences: false).joined(separator: replacement)
    }

    private static func zshQuoted(_ text: String) -> String {
        "'" + escaped(text, "'", with: "'\\''") + "'"
    }

    // MARK: fish

    static func fish() -> String {
        var lines: [String] = []
        for option in CommandOption.global {
            lines.append("complete -c notifyctl -n __notifyctl_needs_command \(fishOption(option))")
        }
        lines.append("complete -c notifyctl -n __notifyctl_needs_command -l version -d 'Print the version'")
        lines.append("complete -c notifyctl -n __notifyctl_needs_command -s h -l help -d 'Print help'")
        lines.append("")
        for command in commands {
            lines.append("complete -c notifyctl -n __notifyctl_needs_command -a \(command.name) -d \(fishQuoted(sentence(command.summary)))")
        }
        lines.append("")
        lines.append("# Every command takes --help, and --socket and --json after it too.")
        lines.append("complete -c notifyctl -n 'not __notifyctl_needs_command' -l help -d 'Print the command\\'s help'")
        for option in CommandOption.global {
            lines.append("complete -c notifyctl -n 'not __notifyctl_needs_command' \(fishOption(option))")
        }
        for command in commands {
            let condition = fishQuoted("__notifyctl_using \(command.name)")
            var own = command.options.map { "complete -c notifyctl -n \(condition) \(fishOption($0))" }
            switch command.operand {
            case .actions(let actions):
                own += actions.map { "complete -c notifyctl -n \(condition) -a \($0.name) -d \(fishQuoted(sentence($0.summary)))" }
            case .command:
                own.append("complete -c notifyctl -n \(condition) -a \"$__notifyctl_commands\"")
            case .none, .user: break
            }
            if !own.isEmpty { lines += ["", "# \(command.name)"] + own }
        }
        return """
            # fish completion for notifyctl(1), the client of notifyd(1).
            # Installed as share/fish/vendor_completions.d/notifyctl.fish.
            # Written by `notifyctl completion fish`, from the table notifyctl parses with.

            set -l __notifyctl_commands \(commands.map(\.name).joined(separator: " "))
            set -l __notifyctl_platforms \(CommandOption.platformNames.joined(separator: " "))

            # The command word: the first argument that is neither an option nor --socket's value.
            function __notifyctl_command
                set -l words (commandline -opc)
                set -e words[1]
                while set -q words[1]
                    switch $words[1]
                        case --socket
                            set -e words[1]
                        case '-*'
                        case '*'
                            echo $words[1]
                            return 0
                    end
                    set -e words[1]
                end
                return 1
            end

            function __notifyctl_needs_command
                not __notifyctl_command >/dev/null
            end

            function __notifyctl_using
                set -l command (__notifyctl_command)
                and test "$command" = "$argv[1]"
            end

            # The --pns value is a comma-separated list: offer each platform after what is typed.
            function __notifyctl_pns_values
                set -l current (commandline -ct)
                set -l prefix (string match -r '^(?:--pns=)?(.*,)?' -- $current)[2]
                for name in \(CommandOption.platformNames.joined(separator: " "))
                    echo $prefix$name
                end
            end

            complete -c notifyctl -f

            \(lines.joined(separator: "\n"))

            """
    }

    private static func fishOption(_ option: CommandOption) -> String {
        let value = switch option.values {
        case _ where option.value == nil: ""
        case .platform: " -x -a \"$__notifyctl_platforms\""
        case .platforms: " -x -a '(__notifyctl_pns_values)'"
        case .files: " -r -F"
        case .none: " -x"
        }
        return "-l \(option.name.dropFirst(2))\(value) -d \(fishQuoted(sentence(option.summary)))"
    }

    private static func fishQuoted(_ text: String) -> String {
        "'" + escaped(escaped(text, "\\", with: "\\\\"), "'", with: "\\'") + "'"
    }

    /// "the user to notify" as fish shows descriptions: "The user to notify".
    private static func sentence(_ text: String) -> String {
        text.prefix(1).uppercased() + text.dropFirst()
    }
}

enum Completion: Subcommand {
    static let name = "completion"
    static let summary = "print the shell completion script for bash, zsh or fish"
    static let help = """
        usage: notifyctl completion SHELL

        Prints notifyctl's completion script for SHELL: bash, zsh or fish. install.sh and
        the Debian package install them already; this is for other places, e.g.
        `notifyctl completion zsh > ~/.zfunc/_notifyctl`.
        """
    static let operand = CommandOperand.actions(CompletionScripts.shells.map { ($0, "the \($0) script") })

    static func run(_ arguments: [String], _ context: Context) throws(CommandFailure) -> ExitCode {
        let parsed = try parse(arguments, positionals: 1...1)
        guard let script = CompletionScripts.script(for: parsed.positionals[0]) else {
            throw usageError("no shell '\(parsed.positionals[0])'; one of \(CompletionScripts.shells.joined(separator: ", "))")
        }
        Terminal.out(String(script.dropLast()))
        return .done
    }
}
