#!/bin/bash
# The tree served as C2SP tlog-tiles, on release builds (docs/performance.md):
#   scripts/tiles-bench.sh [EVENTS] [SECONDS]
# A ledgerd with its HTTP listener, EVENTS signed events (default 300000) and a checkpoint, then
# `ledgerctl bench-tiles` for SECONDS (default 10) a run: hash tiles over 1 and 4 connections,
# entry bundles over 4. Build first: cargo build --release -p ledgerd -p ledgerctl
set -eu
EVENTS=${1:-300000}
SECONDS_EACH=${2:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/target/release
W=$ROOT/target/tiles-bench

rm -rf "$W"; mkdir -p "$W"; cd "$W"
. "$ROOT/scripts/bench-tls.sh"
HTTP=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > ledgerd.toml <<C
ledger_id = "tiles"
[[principals]]
id = "operator-1"
role = "operator"
public_key = "$(cat op.pub)"
[metrics]
listen = "$HTTP"
$(tls_toml)
C
$B/ledgerd --config ledgerd.toml --data-dir data --listen 127.0.0.1:0 --init > ledgerd.out 2> ledgerd.err &
PID=$!
trap 'kill -TERM $PID 2>/dev/null; wait $PID 2>/dev/null' EXIT
for _ in $(seq 1 600); do [ -s ledgerd.out ] && break; sleep 0.1; done
ADDR=$(head -1 ledgerd.out | awk '{print $4}')
$B/ledgerctl bench --server "https://$ADDR" --operator-key op.key --operator-id operator-1 \
    --streams 8 --events "$EVENTS" --warmup 0 > load.txt 2>&1
$B/ledgerctl checkpoint --server "https://$ADDR" >/dev/null
for run in "hashes 1" "hashes 4" "entries 4"; do
    set -- $run
    echo "== $1, $2 connection(s)"
    $B/ledgerctl bench-tiles --url "https://$HTTP" --what "$1" --connections "$2" --seconds "$SECONDS_EACH"
done
