#!/bin/sh
# Builds notifyd, notifyctl and notify-devbackend the one way they are installed, demonstrated
# and benchmarked, and prints the directory that holds them.
#
# On Linux the Swift runtime, and the C++ runtime under it, are linked in
# (--static-swift-stdlib, static libstdc++): the binaries do not depend on where the
# toolchain sits, and notifyctl starts faster without the dynamic loader resolving a
# dozen libraries. notifyd loads the system's libcurl at run time, so
# building needs nothing beyond Swift. The results are stripped copies: debug
# information is most of an unstripped binary's size.
set -eu

usage() {
    cat <<'EOF'
usage: contrib/build-release.sh [--output DIR] [--product NAME]... [--quiet] [--help]

Builds the release binaries (`swift build -c release`, with --static-swift-stdlib on
Linux), writes stripped copies to DIR (default .build/stripped) and prints DIR.
--product builds only the programs named (notifyd, notifyctl, notify-devbackend;
all three by default). --quiet shows the compiler's errors and warnings only, not its
progress.
EOF
}

fail() {
    printf 'build-release.sh: %s\n' "$*" >&2
    exit 1
}

repository=$(cd "$(dirname "$0")/.." && pwd)
output=$repository/.build/stripped
quiet=
products=
while [ $# -gt 0 ]; do
    case $1 in
        --product)
            [ $# -ge 2 ] || fail "--product needs a program's name"
            case $2 in
                notifyd | notifyctl | notify-devbackend) products="$products $2" ;;
                *) fail "--product $2: not one of notifyd, notifyctl, notify-devbackend" ;;
            esac
            shift 2
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
        --quiet)
            quiet=--quiet
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

command -v swift >/dev/null 2>&1 || fail "swift is not on PATH; install the Swift toolchain"

flags=
if [ "$(uname -s)" = Linux ]; then
    # No RUNPATH either: nothing is loaded from beside the binary, and every start would
    # otherwise look there for libc and friends first.
    flags="--static-swift-stdlib --disable-local-rpath"
    # The C++ runtime under the Swift runtime is linked in as well when its archives are
    # there (Debian's libstdc++-12-dev, which Swift needs anyway): loading libstdc++.so
    # and resolving its symbols was a third of what `notifyctl ping` executed. The
    # toolchain asks for -lstdc++ itself; a directory holding only the archive, searched
    # first, makes that name the static library.
    compiler=$(command -v cc || command -v clang || true)
    cxx_archive=$([ -n "$compiler" ] && "$compiler" -print-file-name=libstdc++.a || true)
    unwind_archive=$([ -n "$compiler" ] && "$compiler" -print-file-name=libgcc_eh.a || true)
    if [ -f "$cxx_archive" ] && [ -f "$unwind_archive" ]; then
        static_cxx=$repository/.build/static-c++
        mkdir -p "$static_cxx"
        ln -sf "$cxx_archive" "$static_cxx/libstdc++.a"
        flags="$flags -Xlinker --as-needed -Xlinker -L$static_cxx -Xlinker -l:libgcc_eh.a"
    else
        printf 'build-release.sh: no libstdc++.a found (Debian: libstdc++-12-dev); linking the C++ runtime as a shared library\n' >&2
    fi
    # notifyd's relocations packed (see Package.swift) where both the toolchain's linker and
    # this machine's C library know DT_RELR. A binary built so needs glibc 2.36 or later
    # where it runs: the loader refuses it clearly elsewhere. NOTIFYD_PACK_RELOCATIONS=0
    # in the environment turns it off.
    if [ -z "${NOTIFYD_PACK_RELOCATIONS:-}" ]; then
        toolchain=$(dirname "$(readlink -f "$(command -v swift)")")
        glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null || true)
        if [ -x "$toolchain/ld.lld" ] && printf '%s\n' "$glibc" | awk '$1 == "glibc" { split($2, v, "."); ok = v[1] > 2 || (v[1] == 2 && v[2] >= 36) } END { exit !ok }'; then
            NOTIFYD_PACK_RELOCATIONS=1
        else
            NOTIFYD_PACK_RELOCATIONS=0
        fi
    fi
    export NOTIFYD_PACK_RELOCATIONS
fi

cd "$repository"
# Which build this is, for `notifyctl ping` and `--version` (Package.swift): the commit,
# and whether the work tree had changes. build-deb.sh sets it itself, with the package's
# version. Given to Package.swift in the environment: SwiftPM reads the manifest again
# when it changes, so a new commit is never shown as the last one built.
if [ -z "${NOTIFYD_BUILD:-}" ] && commit=$(git -C "$repository" rev-parse --short=12 HEAD 2>/dev/null); then
    changes=$(git -C "$repository" status --porcelain --untracked-files=no 2>/dev/null | head -n 1)
    NOTIFYD_BUILD="git $commit${changes:++changes}"
    export NOTIFYD_BUILD
fi
# Product by product: the test-support target is not part of a release build.
# The C library's linker warning about mktemp is dropped, quiet or not: notify-devbackend
# links the toolchain's whole static Foundation, which reaches FoundationEssentials' own
# temporary-file code (Data+Writing, createTemporaryFile), and the warning names that
# object, not this project's code (notifyd and notifyctl never link it). Nobody here can
# act on it, and install.sh printed it to everyone who installed.
log=$(mktemp "${TMPDIR:-/tmp}/build-release.XXXXXX")
trap 'rm -f "$log"' EXIT
[ -n "$products" ] || products="notifyd notifyctl notify-devbackend"
# shellcheck disable=SC2086 # $products: words
for product in $products; do
    # shellcheck disable=SC2086 # $flags and $quiet: words or nothing
    if [ -n "$quiet" ]; then
        swift build -c release $flags $quiet --product "$product" >"$log" 2>&1 || { cat "$log" >&2; fail "swift build failed"; }
        grep -v "the use of .mktemp' is dangerous" "$log" >&2 || true
    else
        # The progress as it comes, less that one line; the build's status kept past the pipe.
        { swift build -c release $flags --product "$product" 2>&1 || echo failed >"$log"; } | grep -v "the use of .mktemp' is dangerous" >&2
        [ ! -s "$log" ] || fail "swift build failed"
    fi
done
# shellcheck disable=SC2086
binaries=$(swift build -c release $flags --show-bin-path) || fail "cannot find the build directory"

mkdir -p "$output"
# shellcheck disable=SC2086 # $products: words
for program in $products; do
    cp "$binaries/$program" "$output/$program.tmp"
    if command -v strip >/dev/null 2>&1; then
        strip "$output/$program.tmp" || fail "strip $program failed"
    fi
    chmod 755 "$output/$program.tmp"
    mv -f "$output/$program.tmp" "$output/$program"
done
printf '%s\n' "$output"
