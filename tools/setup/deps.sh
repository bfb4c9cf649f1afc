#!/bin/sh
# Installs nextok's missing build dependencies on Debian and Ubuntu (apt-get, through
# sudo when not root), or stops at once with the exact command to run. The package list
# is tools/setup/packages.txt.
#
# The Makefile runs this before every build, so when everything is present it stays
# instant: a few `command -v`, file and pkg-config checks, no apt or network call.
#
# usage: tools/setup/deps.sh [--for build|test] [--check] [--quiet] [--cache FILE]
#                            [-- CMAKE_FLAGS...]
#   --for build    only what building needs; test (the default) adds what the tests need
#   --check        install nothing: name what is missing and the command that installs it
#                  (the same as NEXTOK_NO_INSTALL=1 in the environment)
#   --quiet        print nothing when nothing is missing
#   --cache FILE   a CMakeCache.txt whose options count, like the flags after --
#   CMAKE_FLAGS    the build's -D flags: a package whose option (packages.txt's last
#                  column) is set OFF there is not needed
# Exit status: 0 when everything is present (or now installed), 1 when something is still
# missing, 2 on a usage error.
set -u

here=$(cd "$(dirname "$0")" && pwd)
list="$here/packages.txt"

purpose=test
check_only=0
case ${NEXTOK_NO_INSTALL:-0} in 0 | '') ;; *) check_only=1 ;; esac
quiet=0
cache=
while [ $# -gt 0 ]; do
    case $1 in
    --for) purpose=${2:-}; shift 2 || exit 2 ;;
    --check) check_only=1; shift ;;
    --quiet) quiet=1; shift ;;
    --cache) cache=${2:-}; shift 2 || exit 2 ;;
    --) shift; break ;;
    *) echo "deps.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
    esac
done
case $purpose in build | test) ;; *) echo "deps.sh: --for build|test" >&2; exit 2 ;; esac

say() { echo "nextok: $*" >&2; }

# The value an option will have when CMake configures: the cache's, then the flags'
# (the last -D wins, as in CMake). Empty when nobody set it.
option_value() {
    name=$1
    shift
    value=
    if [ -n "$cache" ] && [ -f "$cache" ]; then
        value=$(sed -n "s/^$name:[A-Za-z]*=//p" "$cache" | tail -n 1)
    fi
    for flag in "$@"; do
        case $flag in
        -D"$name"=* | -D"$name":*=*) value=${flag#*=} ;;
        esac
    done
    printf '%s' "$value"
}

# CMake's false constants (case-insensitive).
is_false() {
    case $1 in
    [Oo][Ff][Ff] | 0 | [Nn][Oo] | [Nn] | [Ff][Aa][Ll][Ss][Ee] | [Ii][Gg][Nn][Oo][Rr][Ee]) return 0 ;;
    *-[Nn][Oo][Tt][Ff][Oo][Uu][Nn][Dd] | [Nn][Oo][Tt][Ff][Oo][Uu][Nn][Dd]) return 0 ;;
    esac
    return 1
}

dpkg_has() {
    command -v dpkg-query >/dev/null 2>&1 &&
        dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q ' installed$'
}

# Is what package $1 provides present? $2 is its check from packages.txt. This looks for
# what the build uses (a command, a header, a pkg-config module), not for the package,
# so a tool installed some other way (pip's cmake, pyenv's python3) counts.
present() {
    case $2 in
    cmd:*) command -v "${2#cmd:}" >/dev/null 2>&1 ;;
    file:*) [ -e "${2#file:}" ] ;;
    py:*) # a module Debian's python3 imports (the Python package's build and tests)
        [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import ${2#py:}" >/dev/null 2>&1 ;;
    pyh:*) # Python.h for Debian's python3 (python3-dev)
        [ -x /usr/bin/python3 ] && /usr/bin/python3 -c \
            "import os, sysconfig; assert os.path.exists(sysconfig.get_paths()['include'] + '/Python.h')" \
            >/dev/null 2>&1 ;;
    pc:*)
        if command -v pkg-config >/dev/null 2>&1; then
            pkg-config --exists "${2#pc:}"
        else
            dpkg_has "$1" # pkg-config itself is missing and will be installed with it
        fi
        ;;
    *) say "$list: unknown check '$2' for $1"; return 1 ;;
    esac
}

what_lacks() {
    case $1 in
    cmd:*) echo "no ${1#cmd:} command" ;;
    file:*) echo "no ${1#file:}" ;;
    pc:*) echo "no pkg-config module ${1#pc:}" ;;
    py:*) echo "/usr/bin/python3 cannot import ${1#py:}" ;;
    pyh:*) echo "no Python.h for /usr/bin/python3" ;;
    esac
}

# Sets $missing (package names) and $lacks (one line per package) from packages.txt.
find_missing() {
    missing=
    lacks=
    while read -r pkg check need option rest; do
        case $pkg in '' | '#'*) continue ;; esac
        [ "$need" = test ] && [ "$purpose" = build ] && continue
        if [ -n "$option" ] && is_false "$(option_value "$option" "$@")"; then
            continue
        fi
        present "$pkg" "$check" && continue
        missing="$missing $pkg"
        lacks="$lacks    $pkg ($(what_lacks "$check"))
"
    done <"$list"
    missing=${missing# }
}

stop() {
    say "$1"
    say "run this, then run make again:"
    echo "    $2" >&2
    exit 1
}

find_missing "$@"
if [ -z "$missing" ]; then
    [ "$quiet" = 1 ] || say "build dependencies present (tools/setup/packages.txt)"
    exit 0
fi
say "missing build dependencies:"
printf '%s' "$lacks" >&2

install="apt-get install -y --no-install-recommends $missing"
if ! command -v apt-get >/dev/null 2>&1; then
    say "this system has no apt-get (not Debian or Ubuntu), so nothing is installed:"
    say "install what the lines above name with its own package manager, then run make again."
    exit 1
fi
if [ "$(id -u)" = 0 ]; then
    sudo=
elif command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
    sudo=sudo # passwordless, or it can ask for the password on this terminal
else
    stop "not root, and sudo is not available without a terminal to ask for a password." \
        "su -c 'apt-get update && $install'"
fi
if [ "$check_only" = 1 ]; then
    stop "not installing them (--check or NEXTOK_NO_INSTALL is set)." \
        "${sudo:+sudo }apt-get update && ${sudo:+sudo }$install"
fi

# apt's own output (hundreds of lines on a fresh machine) goes to a log that is shown
# only when something fails.
log=$(mktemp "${TMPDIR:-/tmp}/nextok-deps.XXXXXX") || log=/dev/null
say "installing$([ -n "$sudo" ] && echo ' (through sudo)'): $missing"
say "(apt-get update, then apt-get install; its output goes to $log)"
# env, not sudo's VAR=value: sudo refuses to set variables its policy does not list.
# The lock timeout waits out an apt run that is already going (a fresh machine's
# unattended upgrades) instead of failing on it.
run_apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 "$@"; }
# No retries for the update: offline, it is what fails first, and it should fail fast.
# When it could not reach a mirror the install gets no retries either (offline it then
# stops within seconds); it is still tried, since the mirror it could not reach may be
# a third-party source that the packages do not come from.
retries=
run_apt -o Acquire::Retries=0 update -qq >"$log" 2>&1 ||
    say "apt-get update failed; trying the install with the package lists as they are"
if grep -q -e 'Temporary failure resolving' -e 'Could not resolve' -e 'Could not connect' \
    -e 'Network is unreachable' "$log"; then
    retries="-o Acquire::Retries=0"
fi
if ! run_apt $retries install -q -y --no-install-recommends $missing >>"$log" 2>&1; then
    tail -n 5 "$log" >&2
    stop "apt-get could not install them (the end of its output is above, all of it in $log)." \
        "${sudo:+sudo }apt-get update && ${sudo:+sudo }$install"
fi
count=$(sed -n 's/^[0-9]* upgraded, \([0-9]*\) newly installed.*/\1/p' "$log")
[ "$log" = /dev/null ] || rm -f "$log"

wanted=$missing
find_missing "$@"
if [ -n "$missing" ]; then
    printf '%s' "$lacks" >&2
    say "still missing after the install: $missing (see tools/setup/packages.txt)"
    exit 1
fi
say "installed: $wanted (${count:-?} new packages with what they need)"
