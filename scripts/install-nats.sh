#!/usr/bin/env bash
# nats-server (Debian package) for tests/export_nats.rs: a three-node JetStream cluster on loopback.
# Does nothing when nats-server is already on the PATH.
set -euo pipefail
command -v nats-server >/dev/null 2>&1 && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get install -y nats-server >/dev/null || {
  $SUDO apt-get update >/dev/null && $SUDO apt-get install -y nats-server >/dev/null
}
