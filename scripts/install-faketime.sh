#!/usr/bin/env bash
# libfaketime for tests/clock.rs (steps of ledgerd's wall clock): the Debian package `faketime`.
# Does nothing when the library is already there.
set -euo pipefail
for d in /usr/lib/x86_64-linux-gnu/faketime /usr/lib/aarch64-linux-gnu/faketime /usr/lib/faketime; do
  [ -e "$d/libfaketime.so.1" ] && exit 0
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get install -y faketime >/dev/null || {
  $SUDO apt-get update >/dev/null && $SUDO apt-get install -y faketime >/dev/null
}
