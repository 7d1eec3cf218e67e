# in_each_user_manager ACTION SCRIPT BY_HAND: runs the shell SCRIPT once as the user of
# every running systemd user manager, with that user's XDG_RUNTIME_DIR, so that its
# `systemctl --user` reaches that manager; unless policy-rc.d forbids ACTION (start,
# restart or stop) on notifyd, as it does in image builds and containers: then, where any
# user manager runs, it prints one line saying what was not done and BY_HAND, the command
# each user runs to do it (nothing when BY_HAND is empty). build-deb.sh puts this function where a maintainer script says
# #USER_MANAGERS#.
#
# Each manager is found by its own socket, $XDG_RUNTIME_DIR/systemd/private, not through
# the system manager's list of user@UID units (which is what `deb-systemd-invoke --user`
# asks): that works on a machine booted without systemd too, and a manager that hangs
# holds dpkg back at most 30 s. A failure in one user's session is that session's: it
# never fails the package's installation.
in_each_user_manager() {
    command -v systemctl >/dev/null 2>&1 || return 0
    command -v setpriv >/dev/null 2>&1 || return 0
    # The tests point this elsewhere; dpkg never does.
    runtime_root=${NOTIFYD_USER_RUNTIME_ROOT:-/run/user}
    if command -v policy-rc.d >/dev/null 2>&1; then
        policy=0
        policy-rc.d notifyd "$1" || policy=$?
        if [ "$policy" = 101 ]; then
            # Silence here left a socket unstarted or an old binary running, unnoticed.
            sessions=0
            for runtime in "$runtime_root"/*; do
                if [ -S "$runtime/systemd/private" ]; then sessions=$((sessions + 1)); fi
            done
            case $1 in
                start) what="notifyd.socket was not started" ;;
                restart) what="notifyd was not restarted on the new binary" ;;
                *) what="notifyd was not stopped" ;;
            esac
            [ "$sessions" = 0 ] || [ -z "$3" ] ||
                echo "notifyd: policy-rc.d forbids it, so $what in $sessions running user session(s); each user there runs: $3"
            return 0
        fi
    fi
    for runtime in "$runtime_root"/*; do
        [ -S "$runtime/systemd/private" ] || continue
        uid=$(stat -c %u "$runtime") || continue
        gid=$(stat -c %g "$runtime") || continue
        timeout 30 setpriv --reuid="$uid" --regid="$gid" --clear-groups \
            env -i XDG_RUNTIME_DIR="$runtime" PATH=/usr/bin:/bin sh -c "$2" || true
    done
}
