#!/usr/bin/env bash
# FUSE for the power-loss test (tests/powercut.rs, crates/powercut). As root, the `fuser` crate
# mounts with mount(2) itself and needs only /dev/fuse; anyone else needs the setuid
# fusermount3 from Debian's fuse3. Quick when there is nothing to do.
set -euo pipefail
if [ ! -c /dev/fuse ]; then
    echo "install-fuse.sh: /dev/fuse is missing (modprobe fuse, or run the container with --device /dev/fuse)" >&2
    exit 1
fi
if [ "$(id -u)" = 0 ] || command -v fusermount3 >/dev/null; then
    exit 0
fi
sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive sudo apt-get install -y -qq fuse3
