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

    local commands="login logout set-token set-tags register unregister send outbox status watch ping reload stop completion help"
    local platforms="apns fcmv1 fcm gcm wns"

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
        --socket)
            COMPREPLY=($(compgen -f -- "$cur"))
            compopt -o filenames 2>/dev/null
            return
            ;;
        --backend)
            # nothing to offer: the value is the user's own
            return
            ;;
        --timeout)
            # nothing to offer: the value is the user's own
            return
            ;;
        --platform)
            COMPREPLY=($(compgen -W "$platforms" -- "$cur"))
            return
            ;;
        --to)
            # nothing to offer: the value is the user's own
            return
            ;;
        --tag)
            # nothing to offer: the value is the user's own
            return
            ;;
        --action)
            # nothing to offer: the value is the user's own
            return
            ;;
        --pns)
            # A comma-separated list: complete the last item.
            local done_part="" last=$cur
            if [[ $cur == *,* ]]; then
                done_part=${cur%,*},
                last=${cur##*,}
            fi
            COMPREPLY=($(compgen -P "$done_part" -W "$platforms" -- "$last"))
            compopt -o nospace 2>/dev/null
            return
            ;;
        --limit)
            # nothing to offer: the value is the user's own
            return
            ;;
        --after)
            # nothing to offer: the value is the user's own
            return
            ;;
    esac

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--socket --json --version --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    local options=""
    case $command in
        login) options="--backend --password-stdin --no-wait --timeout" ;;
        logout) options="--force --forget-old-backends" ;;
        set-token) options="--platform --no-wait --timeout" ;;
        set-tags) options="--no-wait --timeout" ;;
        register) options="--no-wait --timeout" ;;
        send) options="--to --tag --action --silent --pns --wait --no-queue --timeout" ;;
        outbox)
            if ((cword == command_index + 1)) && [[ $cur != -* ]]; then
                COMPREPLY=($(compgen -W "retry cancel" -- "$cur"))
                return
            fi
            options="--purge --limit --after --all"
            ;;
        stop) options="--timeout" ;;
        completion)
            if ((cword == command_index + 1)) && [[ $cur != -* ]]; then
                COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur"))
                return
            fi
            options=""
            ;;
        help)
            if ((cword == command_index + 1)); then
                COMPREPLY=($(compgen -W "$commands" -- "$cur"))
            fi
            return
            ;;
    esac
    if [[ $cur == -* ]]; then
        # --socket and --json work after the command too.
        COMPREPLY=($(compgen -W "$options --socket --json --help" -- "$cur"))
    fi
}

complete -F _notifyctl notifyctl
