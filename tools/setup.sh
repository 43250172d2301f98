#!/bin/sh
# Installs the Debian packages traceanalyze needs to build and test, if any
# are missing (as root, or through sudo).
PKGS="make gcc pkg-config libyajl-dev yajl-tools zlib1g-dev libisal-dev isal libsqlite3-dev libcsv-dev check mandoc python3 sqlite3 tmux man-db valgrind chromium slurm-wlm munge parallel"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "setup: installing$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || exit 1
# shellcheck disable=SC2086
$SUDO apt-get install -y --no-install-recommends $missing
