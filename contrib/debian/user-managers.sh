# in_each_user_manager ACTION SCRIPT: runs the shell SCRIPT once as the user of every
# running systemd user manager, with that user's XDG_RUNTIME_DIR, so that its `systemctl
# --user` reaches that manager; unless policy-rc.d forbids ACTION (start, restart or
# stop) on notifyd, as it does in image builds and chroots. build-deb.sh puts this function where a maintainer script says
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
    if command -v policy-rc.d >/dev/null 2>&1; then
        policy=0
        policy-rc.d notifyd "$1" || policy=$?
        [ "$policy" != 101 ] || return 0
    fi
    for runtime in /run/user/*; do
        [ -S "$runtime/systemd/private" ] || continue
        uid=$(stat -c %u "$runtime") || continue
        gid=$(stat -c %g "$runtime") || continue
        timeout 30 setpriv --reuid="$uid" --regid="$gid" --clear-groups \
            env -i XDG_RUNTIME_DIR="$runtime" PATH=/usr/bin:/bin sh -c "$2" || true
    done
}
