# fish completion for notifyctl(1), the client of notifyd(1).
# Installed as share/fish/vendor_completions.d/notifyctl.fish.
# Written by `notifyctl completion fish`, from the table notifyctl parses with.

set -l __notifyctl_commands login logout set-token set-tags register unregister send outbox status watch ping reload stop completion help
set -l __notifyctl_platforms apns fcmv1 fcm gcm wns

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
    for name in apns fcmv1 fcm gcm wns
        echo $prefix$name
    end
end

complete -c notifyctl -f

complete -c notifyctl -n __notifyctl_needs_command -l socket -r -F -d 'Notifyd\'s socket'
complete -c notifyctl -n __notifyctl_needs_command -l json -d 'Print results, and errors, as JSON'
complete -c notifyctl -n __notifyctl_needs_command -l version -d 'Print the version'
complete -c notifyctl -n __notifyctl_needs_command -s h -l help -d 'Print help'

complete -c notifyctl -n __notifyctl_needs_command -a login -d 'Log in to the backend (password prompted, or --password-stdin)'
complete -c notifyctl -n __notifyctl_needs_command -a logout -d 'Delete the registration, then forget the credentials'
complete -c notifyctl -n __notifyctl_needs_command -a set-token -d 'Set the device\'s push token and register it'
complete -c notifyctl -n __notifyctl_needs_command -a set-tags -d 'Set extra registration tags (none to clear) and re-register'
complete -c notifyctl -n __notifyctl_needs_command -a register -d 'Register now, even if the registration is fresh'
complete -c notifyctl -n __notifyctl_needs_command -a unregister -d 'Delete the registration at the backend, keep the credentials'
complete -c notifyctl -n __notifyctl_needs_command -a send -d 'Send a notification to a user (queued if the backend is down)'
complete -c notifyctl -n __notifyctl_needs_command -a outbox -d 'List, retry or cancel messages waiting to be sent'
complete -c notifyctl -n __notifyctl_needs_command -a status -d 'Show the registration, account, device and daemon'
complete -c notifyctl -n __notifyctl_needs_command -a watch -d 'Follow registration, send and network events as they happen'
complete -c notifyctl -n __notifyctl_needs_command -a ping -d 'Check that notifyd answers; print its version and build'
complete -c notifyctl -n __notifyctl_needs_command -a reload -d 'Read the configuration again (as SIGHUP does)'
complete -c notifyctl -n __notifyctl_needs_command -a stop -d 'Stop notifyd (as SIGTERM does)'
complete -c notifyctl -n __notifyctl_needs_command -a completion -d 'Print the shell completion script for bash, zsh or fish'
complete -c notifyctl -n __notifyctl_needs_command -a help -d 'Show help for notifyctl or a command'

# Every command takes --help, and --socket and --json after it too.
complete -c notifyctl -n 'not __notifyctl_needs_command' -l help -d 'Print the command\'s help'
complete -c notifyctl -n 'not __notifyctl_needs_command' -l socket -r -F -d 'Notifyd\'s socket'
complete -c notifyctl -n 'not __notifyctl_needs_command' -l json -d 'Print results, and errors, as JSON'

# login
complete -c notifyctl -n '__notifyctl_using login' -l backend -x -d 'The backend for this account'
complete -c notifyctl -n '__notifyctl_using login' -l password-stdin -d 'Read the password from standard input'
complete -c notifyctl -n '__notifyctl_using login' -l no-wait -d 'Return without waiting for the registration'
complete -c notifyctl -n '__notifyctl_using login' -l timeout -x -d 'Seconds to wait for the registration'

# logout
complete -c notifyctl -n '__notifyctl_using logout' -l force -d 'Forget the credentials even if the registration stays'
complete -c notifyctl -n '__notifyctl_using logout' -l forget-old-backends -d 'Also give up deleting registrations at old backends'

# set-token
complete -c notifyctl -n '__notifyctl_using set-token' -l platform -x -a "$__notifyctl_platforms" -d 'The token\'s push platform'
complete -c notifyctl -n '__notifyctl_using set-token' -l no-wait -d 'Return without waiting for the registration'
complete -c notifyctl -n '__notifyctl_using set-token' -l timeout -x -d 'Seconds to wait for the registration'

# set-tags
complete -c notifyctl -n '__notifyctl_using set-tags' -l no-wait -d 'Return without waiting for the registration'
complete -c notifyctl -n '__notifyctl_using set-tags' -l timeout -x -d 'Seconds to wait for the registration'

# register
complete -c notifyctl -n '__notifyctl_using register' -l no-wait -d 'Return without waiting for the registration'
complete -c notifyctl -n '__notifyctl_using register' -l timeout -x -d 'Seconds to wait for the registration'

# send
complete -c notifyctl -n '__notifyctl_using send' -l to -x -d 'The user to notify'
complete -c notifyctl -n '__notifyctl_using send' -l tag -x -d 'Send to devices with this tag (installations backend)'
complete -c notifyctl -n '__notifyctl_using send' -l action -x -d 'The notification\'s action (installations backend)'
complete -c notifyctl -n '__notifyctl_using send' -l silent -d 'A silent, background notification (installations backend)'
complete -c notifyctl -n '__notifyctl_using send' -l pns -x -a '(__notifyctl_pns_values)' -d 'Push platforms, comma-separated'
complete -c notifyctl -n '__notifyctl_using send' -l wait -d 'Wait for the backend\'s answer'
complete -c notifyctl -n '__notifyctl_using send' -l no-queue -d 'Fail instead of queueing for later'
complete -c notifyctl -n '__notifyctl_using send' -l timeout -x -d 'Seconds to wait'

# outbox
complete -c notifyctl -n '__notifyctl_using outbox' -l purge -d 'Forget the failed and expired messages'
complete -c notifyctl -n '__notifyctl_using outbox' -l limit -x -d 'List at most N messages (default 20)'
complete -c notifyctl -n '__notifyctl_using outbox' -l after -x -d 'List the messages after ID (the next page)'
complete -c notifyctl -n '__notifyctl_using outbox' -l all -d 'List every message, without the counts'
complete -c notifyctl -n '__notifyctl_using outbox' -a retry -d 'Try waiting messages now (or only ID)'
complete -c notifyctl -n '__notifyctl_using outbox' -a cancel -d 'Remove one message without sending it'

# stop
complete -c notifyctl -n '__notifyctl_using stop' -l timeout -x -d 'Seconds to wait for notifyd to stop'

# completion
complete -c notifyctl -n '__notifyctl_using completion' -a bash -d 'The bash script'
complete -c notifyctl -n '__notifyctl_using completion' -a zsh -d 'The zsh script'
complete -c notifyctl -n '__notifyctl_using completion' -a fish -d 'The fish script'

# help
complete -c notifyctl -n '__notifyctl_using help' -a "$__notifyctl_commands"
