#!/bin/sh
# Ask notifyd for its version with nothing but socat: one JSON line out, one back.
#
#   socat-ping.sh [SOCKET]
#
# The socket is found the way notifyd finds it: the argument, else $NOTIFYD_SOCKET,
# else $XDG_RUNTIME_DIR/notifyd/notifyd.sock, else $TMPDIR (or /tmp)/notifyd-UID/notifyd.sock.
# Any other command works the same way, e.g. '{"id":1,"cmd":"status"}'.
set -eu

if [ $# -gt 0 ] && [ -n "$1" ]; then
    SOCKET=$1
elif [ -n "${NOTIFYD_SOCKET:-}" ]; then
    SOCKET=$NOTIFYD_SOCKET
else
    case ${XDG_RUNTIME_DIR:-} in
        /*) SOCKET=$XDG_RUNTIME_DIR/notifyd/notifyd.sock ;;
        *)
            tmp=${TMPDIR:-/tmp}
            case $tmp in /*) ;; *) tmp=/tmp ;; esac
            SOCKET=${tmp%/}/notifyd-$(id -u)/notifyd.sock
            ;;
    esac
fi

command -v socat >/dev/null 2>&1 || { echo "socat-ping.sh: socat is not installed" >&2; exit 127; }

# -t 5: after sending, wait up to 5 s for the reply instead of socat's 0.5 s (notifyd
# closes the connection as soon as it has answered, so this costs nothing).
printf '%s\n' '{"id":1,"cmd":"ping"}' | socat -t 5 - UNIX-CONNECT:"$SOCKET"
