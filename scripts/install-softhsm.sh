#!/usr/bin/env bash
# SoftHSM2 (a PKCS#11 token in files) for the tests of the ledger's key in an HSM
# (crates/ledger-store/tests/pkcs11.rs, tests/keys.rs). Quick when it is already there.
set -euo pipefail
if [ -e /usr/lib/softhsm/libsofthsm2.so ] && command -v softhsm2-util >/dev/null; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq softhsm2
