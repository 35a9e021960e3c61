#!/usr/bin/env bash
# Debian's Chromium and its WebDriver server, for the console's browser tests (tests/console.rs,
# driven from Rust through fantoccini). Does nothing when both are already there.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get install -y chromium chromium-driver >/dev/null || {
  $SUDO apt-get update >/dev/null && $SUDO apt-get install -y chromium chromium-driver >/dev/null
}
