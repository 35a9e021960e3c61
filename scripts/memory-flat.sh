#!/bin/bash
# Issue 43: is ledgerd's memory flat as its ledger grows? A separate release ledgerd (TLS, the
# live audit on, as deployed) loaded by `ledgerctl bench --server` with EVENTS slot events
# (8 streams); its resident memory (VmRSS) and the ledger's length are sampled every
# INTERVAL seconds and printed as they go, then the first, middle and last tenth compared.
#   scripts/memory-flat.sh [EVENTS] [INTERVAL]        (defaults 10000000, 10)
# Build first: cargo build --release -p ledgerd -p ledgerctl
set -eu
EVENTS=${1:-10000000}
INTERVAL=${2:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/target/release
W=$ROOT/target/memory-flat

rm -rf "$W"; mkdir -p "$W"; cd "$W"
. "$ROOT/scripts/bench-tls.sh"
cat > ledgerd.toml <<C
ledger_id = "memory-flat"
[[principals]]
id = "operator-1"
role = "operator"
public_key = "$(cat op.pub)"
$(tls_toml)
C
$B/ledgerd --config ledgerd.toml --data-dir data --listen 127.0.0.1:0 --init > ledgerd.out 2> ledgerd.err &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do [ -s ledgerd.out ] && break; sleep 0.1; done
ADDR=$(head -1 ledgerd.out | awk '{print $4}')
$B/ledgerctl --json bench --server "https://$ADDR" --operator-key op.key --operator-id operator-1 \
    --streams 8 --events "$EVENTS" > run.json 2> bench.err &
BENCH=$!
echo "seconds entries rss_mb" | tee samples.txt
T0=$(date +%s)
while kill -0 $BENCH 2>/dev/null; do
    sleep "$INTERVAL"
    RSS=$(awk '/VmRSS/ {print int($2/1024)}' /proc/$PID/status)
    LEN=$($B/ledgerctl --json status --server "https://$ADDR" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])' 2>/dev/null || echo "?")
    echo "$(( $(date +%s) - T0 )) $LEN $RSS" | tee -a samples.txt
done
wait $BENCH
python3 - "$EVENTS" <<'P'
import sys
rows = [l.split() for l in open("samples.txt")][1:]
# From the first sample past 1% of the load (before it, the bench is still signing its events).
rows = [(int(s), int(n), int(r)) for s, n, r in rows if n.isdigit() and int(n) > int(sys.argv[1]) // 100]
if len(rows) >= 10:
    k = max(1, len(rows) // 10)
    parts = {"first": rows[:k], "middle": rows[len(rows)//2 - k//2: len(rows)//2 - k//2 + k], "last": rows[-k:]}
    for name, p in parts.items():
        print(f"{name} tenth: entries {p[0][1]:,}-{p[-1][1]:,}, RSS {min(r for _,_,r in p)}-{max(r for _,_,r in p)} MB")
    print(f"peak RSS {max(r for _,_,r in rows)} MB over {rows[-1][1]:,} entries")
P
