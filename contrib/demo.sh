#!/usr/bin/env bash
# notifyd end to end in one command: builds, starts notifyd on a private socket, logs in,
# registers a device, shows the status and sends a notification, then stops everything.
#
# Against the bundled dev backend (an in-memory copy of the tutorial's AppBackend) unless
# NOTIFYD_BACKEND names a real one; then NOTIFYD_USER is the account and the password is
# read from NOTIFYD_PASSWORD or prompted for. The dev backend is the tutorial as updated
# for FCM v1; NOTIFYD_DEMO_ANDROID_NAME=fcm makes it the tutorial as written, and tells
# notifyd so. NOTIFYD_DEMO_API=installations makes it the backend service of Microsoft's
# newer tutorials instead (installations and an API key), and tells notifyd so.
set -euo pipefail
cd "$(dirname "$0")/.."

# Bold on a terminal only: piped or logged, plain text (and never with NO_COLOR).
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
    say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
    say() { printf '\n== %s\n' "$*"; }
fi

say "building (contrib/build-release.sh: the binaries install.sh installs; minutes the first time)"
# The build is quiet but for errors; a line every 15 s says it is still going.
built=$(mktemp /tmp/notifyd-demo-build.XXXXXX)
contrib/build-release.sh --quiet >"$built" &
builder=$!
elapsed=0
while kill -0 "$builder" 2>/dev/null; do
    sleep 1
    elapsed=$((elapsed + 1))
    if [ $((elapsed % 15)) -eq 0 ]; then echo "still building ($elapsed s)"; fi
done
wait "$builder" || { rm -f "$built"; exit 1; }
bin=$(tail -n 1 "$built")
rm -f "$built"

work=$(mktemp -d /tmp/notifyd-demo.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${NOTIFYD_BACKEND:-}" ]; then
    backend=$NOTIFYD_BACKEND
    user=${NOTIFYD_USER:?set NOTIFYD_USER to your account at $NOTIFYD_BACKEND}
    if [ -n "${NOTIFYD_PASSWORD:-}" ]; then
        password=$NOTIFYD_PASSWORD
    else
        read -rsp "Password for $user at $backend: " password
        echo
    fi
    recipient=${NOTIFYD_RECIPIENT:-$user}
else
    android=${NOTIFYD_DEMO_ANDROID_NAME:-fcmv1}
    case $android in
        fcmv1) variant="the tutorial backend updated for FCM v1" ;;
        fcm) variant="the tutorial backend as written, which predates FCM v1" ;;
        *) echo "NOTIFYD_DEMO_ANDROID_NAME must be fcmv1 or fcm, not '$android'" >&2; exit 2 ;;
    esac
    # notifyd is told the name this backend knows Android by.
    export NOTIFYD_ANDROID_NAME=$android
    api=${NOTIFYD_DEMO_API:-registrations}
    dialect=(--android-name "$android")
    case $api in
        registrations) ;;
        installations)
            variant="the backend service (installations and an API key)"
            # A key of this run only, in a file: never on a command line.
            head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/api-key"
            dialect=(--api installations --api-key-file "$work/api-key")
            export NOTIFYD_BACKEND_API=installations ;;
        *) echo "NOTIFYD_DEMO_API must be registrations or installations, not '$api'" >&2; exit 2 ;;
    esac
    say "starting the dev backend on a free loopback port"
    "$bin/notify-devbackend" --port 0 "${dialect[@]}" >"$work/backend.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do grep -q listening "$work/backend.log" 2>/dev/null && break; sleep 0.05; done
    backend=$(sed -n 's/^notify-devbackend listening on //p' "$work/backend.log")
    [ -n "$backend" ] || { cat "$work/backend.log"; exit 1; }
    user=alice
    recipient=alice
    if [ "$api" = installations ]; then
        echo "$backend ($variant: the key is in $work/api-key)"
        password=$(cat "$work/api-key")
    else
        echo "$backend ($variant: password = user name)"
        password=alice
    fi
fi

say "starting notifyd"
export NOTIFYD_SOCKET=$work/notifyd.sock
# password_store = file: a throwaway run leaves nothing in the session's keyring.
NOTIFYD_PASSWORD_STORE=file "$bin/notifyd" --state-dir "$work/state" --backend "$backend" --log-level info 2>"$work/notifyd.log" &
pids+=($!)
for _ in $(seq 100); do [ -S "$NOTIFYD_SOCKET" ] && break; sleep 0.05; done
# Quotes a word the way a shell reads it back, for commands that can be pasted.
shell_word() {
    if [[ $1 =~ ^[A-Za-z0-9_./:,@%+=-]+$ ]]; then
        printf '%s' "$1"
    else
        printf "'%s'" "${1//\'/\'\\\'\'}"
    fi
}
# Show each command as it can be pasted into a shell, and its exit status (4 means
# "accepted, and notifyd is still at it"), and carry on.
notifyctl() {
    local word line='$ notifyctl'
    for word in "$@"; do line+=" $(shell_word "$word")"; done
    printf '%s\n' "$line" >&2
    local status=0
    "$bin/notifyctl" "$@" || status=$?
    [ "$status" -eq 0 ] || echo "(exit status $status)" >&2
}

notifyctl ping
say "logging in and registering this device"
printf '%s\n' "$password" | notifyctl login --password-stdin "$user"
notifyctl set-token "<3f2a1b9c 5d7e8f00 11223344 55667788 99aabbcc ddeeff00 01234567 89abcdef>"
notifyctl set-tags demo news
notifyctl status

if "$bin/notifyctl" help send >/dev/null 2>&1; then
    say "sending a notification to $recipient"
    if [ -n "${NOTIFYD_BACKEND:-}" ] || [ "${NOTIFYD_BACKEND_API:-}" = installations ]; then
        notifyctl send --to "$recipient" 'Dinner at 8? Bring "the good" <wine> & cheese 🍷'
    else
        # To Apple and Android devices alike: Android goes under the name the backend knows.
        notifyctl send --to "$recipient" --pns apns,fcmv1 'Dinner at 8? Bring "the good" <wine> & cheese 🍷'
    fi
fi

if [ -z "${NOTIFYD_BACKEND:-}" ]; then
    say "what the dev backend handed to the push services"
    grep -E '^(push|request)' "$work/backend.log" || echo "(no pushes)"
fi

say "notifyd's log"
cat "$work/notifyd.log"
