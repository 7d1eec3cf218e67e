#!/bin/sh
# Builds a Debian package of notifyd from the release build, with dpkg-deb alone (no
# debian/ source tree, no debhelper), and prints its path on the last line.
#
# The package installs what install.sh installs for one user, where the system looks
# for it: the programs in /usr/bin, the systemd user units in /usr/lib/systemd/user, enabled for every user by the
# postinst, manual pages, completions in the shells' vendor directories, and
# /usr/share/doc/notifyd. The maintainer scripts restart running notifyds on an
# upgrade and stop them on removal (contrib/debian/). It ships no XDG autostart entry: in
# /etc/xdg/autostart it would start a second notifyd beside the socket unit of every
# systemd session (never two launchers); sessions without systemd use install.sh.
#
# notify-devbackend, the tutorial backend in memory for trying notifyd out, is a package
# of its own beside it (notify-devbackend_VERSION_ARCH.deb): it links the toolchain's
# whole Foundation, and was three quarters of notifyd's Installed-Size for a program
# that no running notifyd needs.
set -eu

usage() {
    cat <<'EOF'
usage: contrib/build-deb.sh [--build-dir DIR] [--output DIR] [--version-suffix SUFFIX] [--help]

Builds notifyd_VERSION_ARCH.deb and notify-devbackend_VERSION_ARCH.deb with dpkg-deb,
and prints their paths, notifyd's on the last line.

  --build-dir DIR   take notifyd and notifyctl from DIR instead of running
                    contrib/build-release.sh
  --output DIR      where to write the package (default .build/debian)
  --version-suffix SUFFIX
                    append SUFFIX (+ or ~ and then letters, digits, dots, + or ~)
                    to the package's version, for a rebuild that must upgrade or
                    downgrade the one installed: +b1 sorts after, ~pre1 before
  --help            print this help and exit

The Maintainer field (and the changelog's) is "$DEBFULLNAME <$DEBEMAIL>", as for dch;
without them, the repository's git user.name and user.email. SOURCE_DATE_EPOCH, when
set, dates the changelog (else the last commit does), so that a package built twice
from one commit is the same.
EOF
}

fail() {
    printf 'build-deb.sh: %s\n' "$*" >&2
    exit 1
}

contrib=$(cd "$(dirname "$0")" && pwd)
repository=$(dirname "$contrib")
build_dir=
output=$repository/.build/debian
version_suffix=
while [ $# -gt 0 ]; do
    case $1 in
        --build-dir)
            [ $# -ge 2 ] || fail "--build-dir needs a directory"
            build_dir=$2
            shift 2
            ;;
        --build-dir=*)
            build_dir=${1#--build-dir=}
            shift
            ;;
        --output)
            [ $# -ge 2 ] || fail "--output needs a directory"
            output=$2
            shift 2
            ;;
        --output=*)
            output=${1#--output=}
            shift
            ;;
        --version-suffix)
            [ $# -ge 2 ] || fail "--version-suffix needs a suffix such as +b1"
            version_suffix=$2
            shift 2
            ;;
        --version-suffix=*)
            version_suffix=${1#--version-suffix=}
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            fail "unknown option '$1' (see --help)"
            ;;
    esac
done

for tool in dpkg-deb dpkg readelf gzip; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (Debian packages dpkg and binutils)"
done

case $version_suffix in
    '') ;;
    [+~] | [+~]*[!A-Za-z0-9.+~]*) fail "--version-suffix '$version_suffix': + or ~, then letters, digits, dots, + or ~" ;;
    [+~]*) ;;
    *) fail "--version-suffix '$version_suffix' must start with + (sorts after) or ~ (sorts before)" ;;
esac
if [ -n "$build_dir" ]; then
    binaries=$(cd "$build_dir" 2>/dev/null && pwd) || fail "--build-dir $build_dir is not a directory"
else
    # The binaries name the package they were built for, and its commit, in `notifyctl
    # ping`: two packages of one version are told apart (the version is the source's).
    source_version=$(sed -n 's/^ *public static let current = "\([^"]*\)"$/\1/p' "$repository/Sources/NotifyProtocol/ProtocolVersion.swift")
    commit=$(git -C "$repository" rev-parse --short=12 HEAD 2>/dev/null || true)
    NOTIFYD_BUILD="$source_version$version_suffix${commit:+, git $commit}"
    export NOTIFYD_BUILD
    binaries=$("$contrib/build-release.sh" --quiet) || fail "the release build failed"
fi

for program in notifyd notifyctl notify-devbackend; do
    [ -x "$binaries/$program" ] || fail "$binaries/$program is missing; build it first (contrib/build-release.sh)"
done

version=$("$binaries/notifyd" --version | sed -n 's/^notifyd \([^ ]*\).*/\1/p')
[ -n "$version" ] || fail "cannot read the version from $binaries/notifyd --version"
version=$version$version_suffix
architecture=$(dpkg --print-architecture)

if [ -n "${DEBEMAIL:-}" ]; then
    maintainer="${DEBFULLNAME:-notifyd packager} <$DEBEMAIL>"
else
    name=$(git -C "$repository" config user.name 2>/dev/null || true)
    email=$(git -C "$repository" config user.email 2>/dev/null || true)
    [ -n "$name" ] && [ -n "$email" ] || fail "no maintainer: set DEBFULLNAME and DEBEMAIL (or git's user.name and user.email)"
    maintainer="$name <$email>"
fi
case $maintainer in
    *'|'* | *'&'* | *'\'*) fail "the maintainer '$maintainer' holds a character this script cannot put in the control file" ;;
esac
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git -C "$repository" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
date=$(LC_ALL=C date -u -d "@$SOURCE_DATE_EPOCH" '+%a, %d %b %Y %H:%M:%S +0000')

# The C library the binaries need: the newest GLIBC_ version any of them asks for (a
# binary with packed relocations asks for GLIBC_ABI_DT_RELR, which came with 2.36).
glibc_needed() {
    glibc=$(for program in "$@"; do readelf -V -W "$binaries/$program"; done |
        sed -n 's/.*Name: GLIBC_\([0-9][0-9.]*\) .*/\1/p; s/.*Name: GLIBC_ABI_DT_RELR .*/2.36/p' |
        sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
    [ -n "$glibc" ] || fail "cannot read the C library version $* need (readelf -V)"
    printf '%s\n' "$glibc"
}
# libcurl is not linked but loaded at run time (dlopen of libcurl.so.4), so no tool
# would find it: without it notifyd cannot reach any backend. Debian 13 and Ubuntu 24.04
# name the package libcurl4t64.
depends="libc6 (>= $(glibc_needed notifyd notifyctl)), libcurl4 | libcurl4t64"

work=$(mktemp -d "${TMPDIR:-/tmp}/build-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root
umask 022

put() { # MODE SOURCE DESTINATION (below the package root)
    mkdir -p "$(dirname "$root/$3")"
    cp "$2" "$root/$3"
    chmod "$1" "$root/$3"
}

# Copies a template with @NAME@ placeholders filled in: fill SOURCE DESTINATION NAME=VALUE...
fill() {
    source_file=$1
    destination=$2
    shift 2
    script=
    for pair in "$@"; do
        value=$(printf '%s\n' "${pair#*=}" | sed 's/[\\|&]/\\&/g')
        script="${script}s|@${pair%%=*}@|${value}|g;"
    done
    mkdir -p "$(dirname "$destination")"
    sed "$script" "$source_file" >"$destination"
    chmod 644 "$destination"
}

put 755 "$binaries/notifyd" usr/bin/notifyd
put 755 "$binaries/notifyctl" usr/bin/notifyctl
put 644 "$contrib/systemd/notifyd.socket" usr/lib/systemd/user/notifyd.socket
fill "$contrib/systemd/notifyd.service.in" "$root/usr/lib/systemd/user/notifyd.service" BINDIR=/usr/bin
for page in notifyd.1 notifyctl.1; do
    mkdir -p "$root/usr/share/man/man1"
    gzip -9n <"$contrib/man/$page" >"$root/usr/share/man/man1/$page.gz"
done
put 644 "$contrib/completions/notifyctl.bash" usr/share/bash-completion/completions/notifyctl
put 644 "$contrib/completions/_notifyctl" usr/share/zsh/vendor-completions/_notifyctl
put 644 "$contrib/completions/notifyctl.fish" usr/share/fish/vendor_completions.d/notifyctl.fish
put 644 "$contrib/debian/copyright" usr/share/doc/notifyd/copyright
put 644 "$contrib/docs/protocol.md" usr/share/doc/notifyd/protocol.md
put 644 "$contrib/debian/README.Debian" usr/share/doc/notifyd/README.Debian
put 644 "$contrib/debian/lintian-overrides" usr/share/lintian/overrides/notifyd
fill "$contrib/debian/changelog.in" "$work/changelog" VERSION="$version" MAINTAINER="$maintainer" DATE="$date"
gzip -9n <"$work/changelog" >"$root/usr/share/doc/notifyd/changelog.gz"
chmod 644 "$root/usr/share/doc/notifyd/changelog.gz" "$root/usr/share/man/man1/"*.gz

# Every file and directory dated by SOURCE_DATE_EPOCH (dpkg-deb clamps to it too).
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$root/DEBIAN"
# The maintainer scripts, with the function that reaches every user manager put in.
for script in postinst prerm postrm; do
    awk -v snippet="$contrib/debian/user-managers.sh" '
        $0 == "#USER_MANAGERS#" { while ((getline line < snippet) > 0) print line; next }
        { print }' "$contrib/debian/$script" >"$root/DEBIAN/$script"
    chmod 755 "$root/DEBIAN/$script"
done
(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
installed_size=$(du -sk --apparent-size "$root/usr" | cut -f1)
fill "$contrib/debian/control.in" "$root/DEBIAN/control" VERSION="$version" ARCH="$architecture" \
    MAINTAINER="$maintainer" INSTALLED_SIZE="$installed_size" DEPENDS="$depends"
chmod 644 "$root/DEBIAN/md5sums"

mkdir -p "$output"
package=$(cd "$output" && pwd)/notifyd_${version}_${architecture}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$package" >&2

# notify-devbackend's own package: the program, its manual page, and what Debian asks of
# every package's documentation directory.
root=$work/devbackend
put 755 "$binaries/notify-devbackend" usr/bin/notify-devbackend
mkdir -p "$root/usr/share/man/man1"
gzip -9n <"$contrib/man/notify-devbackend.1" >"$root/usr/share/man/man1/notify-devbackend.1.gz"
put 644 "$contrib/debian/copyright" usr/share/doc/notify-devbackend/copyright
sed 's/^notifyd (/notify-devbackend (/' "$work/changelog" | gzip -9n >"$root/usr/share/doc/notify-devbackend/changelog.gz"
chmod 644 "$root/usr/share/doc/notify-devbackend/changelog.gz" "$root/usr/share/man/man1/"*.gz
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$root/DEBIAN"
(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/md5sums"
fill "$contrib/debian/control-devbackend.in" "$root/DEBIAN/control" VERSION="$version" ARCH="$architecture" \
    MAINTAINER="$maintainer" INSTALLED_SIZE="$(du -sk --apparent-size "$root/usr" | cut -f1)" \
    DEPENDS="libc6 (>= $(glibc_needed notify-devbackend))"
devbackend_package=$(cd "$output" && pwd)/notify-devbackend_${version}_${architecture}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$devbackend_package" >&2

printf '%s\n' "$devbackend_package" "$package"
