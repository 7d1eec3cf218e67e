#!/bin/sh
# Installs notifyd and notifyctl for one user, with their manual pages, shell
# completions and one session launcher: systemd user units where a systemd user
# instance runs, a LaunchAgent on macOS, an XDG autostart entry elsewhere (never two,
# so that no two launchers race for the socket). What it installs is listed in a
# manifest, and --uninstall removes exactly that.
set -eu

usage() {
    cat <<'EOF'
usage: contrib/install.sh [--prefix DIR] [--build-dir DIR] [--with-devbackend] [--no-enable] [--uninstall] [--help]

Installs notifyd and notifyctl for the current user:

  PREFIX/bin/notifyd, PREFIX/bin/notifyctl
  PREFIX/share/man/man1/notifyd.1, PREFIX/share/man/man1/notifyctl.1
  PREFIX/share/doc/notifyd/protocol.md
  PREFIX/share/bash-completion/completions/notifyctl
  PREFIX/share/zsh/site-functions/_notifyctl
  PREFIX/share/fish/vendor_completions.d/notifyctl.fish

and one launcher, so that notifyd runs in every session:

  Linux with a systemd user instance: notifyd.socket and notifyd.service in
    ${XDG_DATA_HOME:-~/.local/share}/systemd/user, then
    `systemctl --user enable --now notifyd.socket`
  macOS: ~/Library/LaunchAgents/org.notifyd.notifyd.plist, then
    `launchctl bootstrap gui/UID` on it
  otherwise: ${XDG_CONFIG_HOME:-~/.config}/autostart/notifyd.desktop (from the next
    login on), logging to ${XDG_STATE_HOME:-~/.local/state}/notifyd/notifyd.log

Shells look for completions in places of their own: for each installed shell that would
not look in PREFIX, install.sh prints the one line to add to its startup file.

Options:
  --prefix DIR      where to install (default ~/.local)
  --build-dir DIR   take notifyd and notifyctl from DIR instead of running
                    contrib/build-release.sh in this repository
  --with-devbackend also install notify-devbackend, the tutorial backend in memory
                    for trying notifyd out, and its manual page notify-devbackend(1)
  --no-enable       install the launcher but do not enable or start it
  --uninstall       remove what an earlier install into the same --prefix put in
                    place, after disabling the launcher it enabled and stopping the
                    notifyd it started; notifyd's state directory (credentials,
                    registration, outbox) and config file are left, and named
  --help            print this help and exit

The list of installed files is kept in PREFIX/share/notifyd/install-manifest.
EOF
}

say() { printf '%s\n' "$*"; }
fail() {
    printf 'install.sh: %s\n' "$*" >&2
    exit 1
}
usage_error() {
    printf 'install.sh: %s\n' "$*" >&2
    printf "Run 'contrib/install.sh --help' for the options.\n" >&2
    exit 2
}

prefix=${HOME:?HOME is not set}/.local
build_dir=
enable=yes
devbackend=no
action=install

while [ $# -gt 0 ]; do
    case $1 in
        --prefix)
            [ $# -ge 2 ] || usage_error "--prefix needs a directory"
            prefix=$2
            shift 2
            ;;
        --prefix=*)
            prefix=${1#--prefix=}
            shift
            ;;
        --build-dir)
            [ $# -ge 2 ] || usage_error "--build-dir needs a directory"
            build_dir=$2
            shift 2
            ;;
        --build-dir=*)
            build_dir=${1#--build-dir=}
            shift
            ;;
        --no-enable)
            enable=no
            shift
            ;;
        --with-devbackend)
            devbackend=yes
            shift
            ;;
        --uninstall)
            action=uninstall
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            usage_error "unknown option '$1'"
            ;;
    esac
done

[ -n "$prefix" ] || usage_error "--prefix needs a directory"
case $prefix in
    /*) ;;
    *) prefix=$(pwd)/$prefix ;;
esac
prefix=${prefix%/}
[ -n "$prefix" ] || usage_error "refusing to install into /"

contrib=$(cd "$(dirname "$0")" && pwd)
repository=$(dirname "$contrib")
manifest=$prefix/share/notifyd/install-manifest
bindir=$prefix/bin

os=$(uname -s)
uid=$(id -u)
data_home=${XDG_DATA_HOME:-$HOME/.local/share}
config_home=${XDG_CONFIG_HOME:-$HOME/.config}
state_dir=${XDG_STATE_HOME:-$HOME/.local/state}/notifyd
log_file=$state_dir/notifyd.log
unit_dir=$data_home/systemd/user
autostart_dir=$config_home/autostart
agent_dir=$HOME/Library/LaunchAgents
agent_label=org.notifyd.notifyd

has_user_systemd() {
    command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1
}

# --- The manifest: one "KIND PATH" line per thing installed --------------------------
#   file PATH        a file this script wrote
#   dir PATH         a directory this script created (removed again if empty)
#   systemd UNIT     a user unit this script enabled
#   launchd PLIST    a LaunchAgent this script bootstrapped
#   started PATH PID notifyd started by this script from an autostart entry

# Written to a temporary file while installing, moved into place at the end.
new_manifest=

record() {
    # Keep each line once, in the order first written.
    if ! grep -Fqx -- "$1 $2" "$new_manifest"; then
        printf '%s %s\n' "$1" "$2" >>"$new_manifest"
    fi
}

# Removes a file an earlier install recorded, and its line: used to replace one
# launcher by another, since two launchers would race for the socket.
forget_file() {
    if grep -Fqx -- "file $1" "$new_manifest"; then
        rm -f "$1"
        grep -Fvx -- "file $1" "$new_manifest" >"$new_manifest.tmp" || true
        mv "$new_manifest.tmp" "$new_manifest"
        say "  removed $1 (the launcher of an earlier install)"
    fi
}

# Creates a directory and each missing parent, recording the ones it created.
make_directory() {
    if [ ! -d "$1" ]; then
        make_directory "$(dirname "$1")"
        mkdir "$1" || fail "cannot create $1"
        record dir "$1"
    fi
}

install_file() { # MODE SOURCE DESTINATION
    [ -f "$2" ] || fail "$2 is missing"
    make_directory "$(dirname "$3")"
    rm -f "$3"
    cp "$2" "$3" || fail "cannot write $3"
    chmod "$1" "$3"
    record file "$3"
    say "  $3"
}

# Copies a template with @NAME@ placeholders filled in: render SOURCE DEST NAME=VALUE...
render() {
    source_file=$1
    destination=$2
    shift 2
    [ -f "$source_file" ] || fail "$source_file is missing"
    script=
    for pair in "$@"; do
        name=${pair%%=*}
        value=$(printf '%s\n' "${pair#*=}" | sed 's/[\\|&]/\\&/g')
        script="${script}s|@${name}@|${value}|g;"
    done
    make_directory "$(dirname "$destination")"
    rm -f "$destination"
    sed "$script" "$source_file" >"$destination" || fail "cannot write $destination"
    chmod 644 "$destination"
    record file "$destination"
    say "  $destination"
}

# A path that a unit file or a desktop entry can take without quoting.
check_plain_path() {
    case $1 in
        *[!A-Za-z0-9._/+@:,~-]*)
            fail "$2 cannot name $1: it holds spaces or characters that need quoting there; choose another --prefix"
            ;;
    esac
}

# --- install ----------------------------------------------------------------------------

find_binaries() {
    if [ -n "$build_dir" ]; then
        binaries=$(cd "$build_dir" 2>/dev/null && pwd) || fail "--build-dir $build_dir is not a directory"
    fi
    programs="notifyd notifyctl"
    [ "$devbackend" = no ] || programs="$programs notify-devbackend"
    if [ -z "$build_dir" ]; then
        command -v swift >/dev/null 2>&1 || fail "swift is not on PATH; install the Swift toolchain or pass --build-dir with built binaries"
        say "Building $(echo "$programs" | sed 's/ /, /g; s/\(.*\), /\1 and /') (contrib/build-release.sh)..."
        # Only what is installed: notify-devbackend, which links the toolchain's whole
        # static Foundation, took most of the build, and its link printed the C library's
        # warning about mktemp inside that Foundation.
        product_flags=
        for program in $programs; do product_flags="$product_flags --product $program"; done
        # shellcheck disable=SC2086 # $product_flags: words
        binaries=$("$contrib/build-release.sh" $product_flags) || fail "the build failed"
    fi
    for program in $programs; do
        [ -x "$binaries/$program" ] || fail "$binaries/$program is missing or not executable; build it first (contrib/build-release.sh)"
    done
}

# --- shell completions -----------------------------------------------------------------

# Whether bash-completion loads notifyctl's completion from this prefix: it looks in the
# user's directory and in share/bash-completion/completions of each $XDG_DATA_DIRS
# (__load_completion in bash_completion), and only where bash-completion is installed.
bash_finds_completions() {
    loader=
    for candidate in /usr/share/bash-completion/bash_completion /usr/local/share/bash-completion/bash_completion \
        /opt/homebrew/share/bash-completion/bash_completion /etc/bash_completion; do
        [ -f "$candidate" ] && loader=$candidate
    done
    [ -n "$loader" ] || return 1
    wanted=$prefix/share/bash-completion/completions
    user_dir=${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion}/completions
    [ "${user_dir%/}" = "$wanted" ] && return 0
    saved_ifs=$IFS
    IFS=:
    for data_dir in ${XDG_DATA_DIRS:-/usr/local/share:/usr/share}; do
        if [ "${data_dir%/}/bash-completion/completions" = "$wanted" ]; then
            IFS=$saved_ifs
            return 0
        fi
    done
    IFS=$saved_ifs
    return 1
}

# Whether fish looks in DIR: its user directory, $XDG_DATA_HOME/fish/vendor_completions.d,
# or one of those it names itself (from $XDG_DATA_DIRS or where it was installed). fish
# is asked with configuration and data directories of its own: it makes its directories
# in them as it starts, and the user's are not ours to touch.
fish_finds_completions() {
    [ "${XDG_DATA_HOME:-$HOME/.local/share}/fish/vendor_completions.d" = "$1" ] && return 0
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/notifyd-install.XXXXXX") || return 1
    # shellcheck disable=SC2016 # fish's variables, for fish
    XDG_CONFIG_HOME=$scratch/config XDG_DATA_HOME=$scratch/data \
        fish --no-config -c 'source $__fish_data_dir/config.fish; string join \n -- $fish_complete_path' 2>/dev/null >"$scratch/path"
    grep -Fqx -- "$1" "$scratch/path"
    found=$?
    rm -rf "$scratch"
    return $found
}

# Each installed shell is asked where it looks for completions (zsh's $fpath, fish's
# $fish_complete_path, without the user's own startup files); for each that would not
# find the ones just installed, the one line that makes it.
advise_completions() {
    advice=
    if command -v bash >/dev/null 2>&1 && ! bash_finds_completions; then
        advice="$advice
  bash (~/.bashrc): source $prefix/share/bash-completion/completions/notifyctl"
    fi
    zsh_dir=$prefix/share/zsh/site-functions
    if command -v zsh >/dev/null 2>&1 && ! zsh -f -c 'print -rl -- $fpath' 2>/dev/null | grep -Fqx -- "$zsh_dir"; then
        advice="$advice
  zsh (~/.zshrc, before compinit): fpath=($zsh_dir \$fpath)"
    fi
    fish_dir=$prefix/share/fish/vendor_completions.d
    if command -v fish >/dev/null 2>&1 && ! fish_finds_completions "$fish_dir"; then
        advice="$advice
  fish (~/.config/fish/config.fish): set -p fish_complete_path $fish_dir"
    fi
    if [ -n "$advice" ]; then
        say "Shell completions: to have notifyctl completed, add to each shell's startup file:$advice"
    fi
}

install_systemd_units() {
    check_plain_path "$bindir" "a systemd unit"
    say "systemd user units:"
    install_file 644 "$contrib/systemd/notifyd.socket" "$unit_dir/notifyd.socket"
    render "$contrib/systemd/notifyd.service.in" "$unit_dir/notifyd.service" "BINDIR=$bindir"
    systemctl --user daemon-reload || fail "systemctl --user daemon-reload failed"
    if [ "$enable" = yes ]; then
        systemctl --user enable --now notifyd.socket || fail "systemctl --user enable --now notifyd.socket failed"
        record systemd notifyd.socket
        say "Enabled and started notifyd.socket: notifyd starts when a client connects."
        # A notifyd already running (an install over an earlier one) moves to the new
        # binary; its queued messages are on disk, and connections wait in the socket.
        if systemctl --user --quiet is-active notifyd.service; then
            systemctl --user restart notifyd.service || fail "systemctl --user restart notifyd.service failed"
            say "Restarted notifyd on the new binary (what it had queued is kept)."
        fi
    else
        say "Not enabled (--no-enable); enable with: systemctl --user enable --now notifyd.socket"
    fi
}

install_launch_agent() {
    case $bindir in
        *[\&\<\>]*) fail "a property list cannot name $bindir without escaping; choose another --prefix" ;;
    esac
    temporary=$(getconf DARWIN_USER_TEMP_DIR 2>/dev/null || printf '%s' "${TMPDIR:-/tmp}")
    socket_dir=${temporary%/}/notifyd-$uid
    plist=$agent_dir/$agent_label.plist
    say "LaunchAgent:"
    # launchd creates the socket; the directory must exist and be private.
    if [ ! -d "$socket_dir" ]; then
        mkdir -m 700 "$socket_dir" || fail "cannot create $socket_dir"
        record dir "$socket_dir"
    fi
    render "$contrib/launchd/$agent_label.plist.in" "$plist" \
        "BINDIR=$bindir" "SOCKET=$socket_dir/notifyd.sock" "LOGFILE=$HOME/Library/Logs/notifyd.log"
    if [ "$enable" = yes ]; then
        launchctl bootout "gui/$uid/$agent_label" >/dev/null 2>&1 || true
        launchctl bootstrap "gui/$uid" "$plist" || fail "launchctl bootstrap gui/$uid $plist failed"
        record launchd "$plist"
        say "Loaded $agent_label: notifyd starts when a client connects."
    else
        say "Not loaded (--no-enable); launchd loads it at the next login, or now with:"
        say "  launchctl bootstrap gui/$uid $plist"
    fi
}

# Whether process $1 runs $bindir/notifyd (or ran it: a replaced file reads "(deleted)").
runs_from_bindir() {
    executable=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
    [ "${executable% (deleted)}" = "$bindir/notifyd" ]
}

install_autostart_entry() {
    check_plain_path "$bindir" "a desktop entry"
    check_plain_path "$log_file" "a desktop entry"
    say "XDG autostart entry (no systemd user instance found):"
    render "$contrib/xdg/notifyd.desktop.in" "$autostart_dir/notifyd.desktop" "BINDIR=$bindir" "LOGFILE=$log_file"
    if [ "$enable" = yes ]; then
        running=$("$bindir/notifyctl" ping 2>/dev/null | sed -n 's/.*, pid \([0-9][0-9]*\).*/\1/p')
        if [ -n "$running" ] && ! runs_from_bindir "$running"; then
            say "A notifyd not installed here runs (pid $running); it is left alone."
        else
            if [ -n "$running" ]; then
                # An install over a running notifyd: it stops as on SIGTERM (what it had
                # queued stays on disk) and the new binary starts in its place.
                "$bindir/notifyctl" stop >/dev/null || fail "could not stop the running notifyd (pid $running)"
            fi
            (cd / && exec "$bindir/notifyd" --log-file "$log_file" </dev/null >/dev/null 2>&1) &
            record started "$bindir/notifyd $!"
            if [ -n "$running" ]; then
                say "Restarted notifyd on the new binary (pid $!; what it had queued is kept)."
            else
                say "Started notifyd (pid $!); from the next login on the desktop session starts it."
            fi
        fi
        say "Its log: $log_file"
    else
        say "notifyd starts at the next login (--no-enable: not started now)."
    fi
}

do_install() {
    find_binaries
    new_manifest=$(mktemp "${TMPDIR:-/tmp}/notifyd-install.XXXXXX") || fail "cannot create a temporary file"
    trap 'rm -f "$new_manifest" "$new_manifest.tmp"' EXIT
    # Keep what an earlier install recorded, so that --uninstall still finds it.
    if [ -f "$manifest" ]; then cat "$manifest" >"$new_manifest"; fi
    say "Installing into $prefix:"
    make_directory "$prefix/share/notifyd"
    install_file 755 "$binaries/notifyd" "$bindir/notifyd"
    install_file 755 "$binaries/notifyctl" "$bindir/notifyctl"
    install_file 644 "$contrib/man/notifyd.1" "$prefix/share/man/man1/notifyd.1"
    install_file 644 "$contrib/docs/protocol.md" "$prefix/share/doc/notifyd/protocol.md"
    install_file 644 "$contrib/man/notifyctl.1" "$prefix/share/man/man1/notifyctl.1"
    if [ "$devbackend" = yes ]; then
        install_file 755 "$binaries/notify-devbackend" "$bindir/notify-devbackend"
        install_file 644 "$contrib/man/notify-devbackend.1" "$prefix/share/man/man1/notify-devbackend.1"
    fi
    install_file 644 "$contrib/completions/notifyctl.bash" "$prefix/share/bash-completion/completions/notifyctl"
    install_file 644 "$contrib/completions/_notifyctl" "$prefix/share/zsh/site-functions/_notifyctl"
    install_file 644 "$contrib/completions/notifyctl.fish" "$prefix/share/fish/vendor_completions.d/notifyctl.fish"
    advise_completions

    launcher=xdg
    case $os in
        Darwin) launcher=launchd ;;
        Linux) if has_user_systemd; then launcher=systemd; fi ;;
    esac
    [ "$launcher" = systemd ] || { forget_file "$unit_dir/notifyd.socket"; forget_file "$unit_dir/notifyd.service"; }
    [ "$launcher" = xdg ] || forget_file "$autostart_dir/notifyd.desktop"
    case $launcher in
        systemd) install_systemd_units ;;
        launchd) install_launch_agent ;;
        xdg) install_autostart_entry ;;
    esac

    cp "$new_manifest" "$manifest" || fail "cannot write $manifest"
    chmod 644 "$manifest"
    say "Recorded in $manifest; remove with: contrib/install.sh --prefix $prefix --uninstall"
    case :${PATH:-}: in
        *:"$bindir":*) ;;
        *) say "Note: $bindir is not on PATH." ;;
    esac
    next_step
}

# The one thing to do next, as `tailscale up` ends with its login URL.
next_step() {
    if "$bindir/notifyd" --check-config 2>/dev/null | grep -q '^  backend = none'; then
        say "Next: set your backend in ${XDG_CONFIG_HOME:-$HOME/.config}/notifyd/config (a line 'backend = https://...'),"
        say "      then run: $bindir/notifyctl reload && $bindir/notifyctl login USER"
    else
        say "Next: $bindir/notifyctl login USER, then $bindir/notifyctl set-token TOKEN"
    fi
}

# --- uninstall --------------------------------------------------------------------------

# Whether PID runs PROGRAM (Linux: /proc; elsewhere ps). Only the installed binary is
# ever stopped, never another notifyd on the same socket.
runs_program() {
    exe=$(readlink "/proc/$1/exe" 2>/dev/null || ps -p "$1" -o comm= 2>/dev/null || true)
    [ "$exe" = "$2" ] || [ "$exe" = "$2 (deleted)" ]
}

# The notifyd that an autostart install started, if it still runs: stop it, and wait
# until it is gone, before its binary is removed. The pid comes from notifyd itself or,
# if it does not answer (yet, or any more), from the manifest.
stop_started_notifyd() {
    program=${1%% *}
    recorded=
    case $1 in *" "*) recorded=${1##* } ;; esac
    pid=$("$bindir/notifyctl" --json ping 2>/dev/null | sed -n 's/.*"pid" *: *\([0-9][0-9]*\).*/\1/p') || true
    [ -n "$pid" ] || pid=$recorded
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    if ! runs_program "$pid" "$program"; then
        say "notifyd (pid $pid) still runs; it was not started from $program, so it is left alone."
        return 0
    fi
    "$bindir/notifyctl" stop >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt 100 ]; do
        # A notifyd still starting up has not caught SIGTERM yet: ask again.
        [ $((waited % 10)) -eq 5 ] && kill -TERM "$pid" 2>/dev/null
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        say "Killed notifyd (pid $pid): it did not stop within 10 s."
    else
        say "Stopped notifyd (pid $pid)."
    fi
}

do_uninstall() {
    [ -f "$manifest" ] || fail "no install manifest at $manifest: nothing was installed into $prefix by this script (use the same --prefix as for the install)"
    say "Uninstalling from $prefix:"
    units_removed=no
    # First what runs: the launchers this script enabled.
    while IFS= read -r line; do
        kind=${line%% *}
        target=${line#* }
        case $kind in
            systemd)
                if has_user_systemd; then
                    systemctl --user disable --now "$target" || say "warning: could not disable $target"
                    case $target in
                        *.socket) systemctl --user stop "${target%.socket}.service" 2>/dev/null || true ;;
                    esac
                    # systemd removed the socket file (RemoveOnStop=); its directory too, if empty.
                    [ -n "${XDG_RUNTIME_DIR:-}" ] && rmdir "$XDG_RUNTIME_DIR/notifyd" 2>/dev/null || true
                    say "Disabled and stopped $target."
                fi
                ;;
            launchd)
                launchctl bootout "gui/$uid" "$target" 2>/dev/null || launchctl bootout "gui/$uid/$agent_label" 2>/dev/null ||
                    say "warning: could not unload $target"
                ;;
            started)
                [ -x "$bindir/notifyctl" ] && stop_started_notifyd "$target"
                ;;
        esac
    done <"$manifest"
    # Then the files, then the directories this script created, deepest first.
    while IFS= read -r line; do
        kind=${line%% *}
        target=${line#* }
        if [ "$kind" = file ] && { [ -f "$target" ] || [ -L "$target" ]; }; then
            rm -f "$target"
            say "  removed $target"
            case $target in
                */systemd/user/*) units_removed=yes ;;
            esac
        fi
    done <"$manifest"
    directories=$(sed -n 's/^dir //p' "$manifest" | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-)
    rm -f "$manifest"
    printf '%s\n' "$directories" | while IFS= read -r directory; do
        [ -n "$directory" ] && [ -d "$directory" ] && rmdir "$directory" 2>/dev/null || true
    done
    rmdir "$prefix/share/notifyd" 2>/dev/null || true
    if [ "$units_removed" = yes ] && has_user_systemd; then
        systemctl --user daemon-reload || say "warning: systemctl --user daemon-reload failed"
    fi
    say "Done."
    # notifyd's own data was never the installer's: say where it is and how to remove it.
    if [ -d "$state_dir" ] || [ -d "$config_home/notifyd" ]; then
        say "Left in place (remove them yourself if you no longer want them):"
        [ -d "$state_dir" ] && say "  $state_dir: credentials, registration, outbox and log; rm -rf '$state_dir'"
        [ -d "$config_home/notifyd" ] && say "  $config_home/notifyd: the configuration; rm -rf '$config_home/notifyd'"
        say "To delete the registration at the backend too, run \`notifyctl logout\` before uninstalling."
    fi
}

case $action in
    install) do_install ;;
    uninstall) do_uninstall ;;
esac
