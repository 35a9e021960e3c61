#!/bin/bash
# The cost of signed receipts (issue 40, docs/performance.md), on release builds: PAIRS alternated
# runs of a separate ledgerd with [ingest] signed_receipts = true, then false, each on a fresh
# ledger loaded by `ledgerctl bench --server` (8 streams); prints each run's peak and ledgerd's
# CPU a receipt, then the medians and the ratios signed / unsigned.
#   scripts/receipts-bench.sh [PAIRS] [EVENTS]        (defaults 5, 300000)
#   BENCH_ARGS=--full-receipts scripts/receipts-bench.sh   (whole receipts, not compact ones)
# Build first: cargo build --release -p ledgerd -p ledgerctl
set -eu
PAIRS=${1:-5}
EVENTS=${2:-300000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/target/release
W=$ROOT/target/receipts-bench

rm -rf "$W"; mkdir -p "$W"; cd "$W"
. "$ROOT/scripts/bench-tls.sh"
run() { # $1 = true|false; prints "signed accepted/s cpu_us"
    cat > ledgerd.toml <<C
ledger_id = "receipts"
[[principals]]
id = "operator-1"
role = "operator"
public_key = "$(cat op.pub)"
[ingest]
signed_receipts = $1
$(tls_toml)
C
    rm -rf data ledgerd.out
    $B/ledgerd --config ledgerd.toml --data-dir data --listen 127.0.0.1:0 --init > ledgerd.out 2> ledgerd.err &
    local pid=$!
    for _ in $(seq 1 600); do [ -s ledgerd.out ] && break; sleep 0.1; done
    local addr
    addr=$(head -1 ledgerd.out | awk '{print $4}')
    $B/ledgerctl --json bench --server "https://$addr" --operator-key op.key --operator-id operator-1 \
        --streams 8 --events "$EVENTS" --warmup 30000 ${BENCH_ARGS:-} > run.json
    kill -TERM $pid; wait $pid || true
    python3 - "$1" <<'P'
import json, sys
j = json.load(open("run.json"))[0]
print(sys.argv[1], round(j["accepted_per_second"]), j["ledgerd"]["cpu_us_per_receipt"])
P
}
for _ in $(seq 1 "$PAIRS"); do run true; run false; done | tee runs.txt
python3 - <<'P'
import statistics as st
runs = [l.split() for l in open("runs.txt")]
s = [(float(r[1]), float(r[2])) for r in runs if r[0] == "true"]
u = [(float(r[1]), float(r[2])) for r in runs if r[0] == "false"]
med = lambda xs: st.median(xs)
print(f"peak (events/s), medians: signed {med([a for a,_ in s]):.0f}, unsigned {med([a for a,_ in u]):.0f}, "
      f"ratio {med([a for a,_ in s]) / med([a for a,_ in u]):.3f}; pair ratios' median "
      f"{med([a[0] / b[0] for a, b in zip(s, u)]):.3f}")
print(f"ledgerd CPU a receipt (µs), medians: signed {med([c for _,c in s]):.2f}, unsigned {med([c for _,c in u]):.2f}, "
      f"ratio {med([c for _,c in s]) / med([c for _,c in u]):.3f}")
P
