#!/usr/bin/env bash
# What the live audit's fsync at every commit costs, against fsyncs at its snapshots only
# (LEDGERD_BENCH_AUDIT_SYNC=snapshots: a benchmark setting, never for a ledger in use). RUNS
# alternated pairs, "every" then "snapshots":
#   a fresh ledgerd (plaintext, the audit on), `ledgerctl bench` against it: the ingest peak and
#   ledgerd's CPU a receipt; then ledgerd stopped, its audit store deleted and ledgerd started
#   again: seconds until the audit is at the head (the rebuild: the audit's own throughput).
# From the repository: cargo build --release -p ledgerd -p ledgerctl; then
# bash scripts/bench-audit-fsync.sh (B= another binary folder; EVENTS, STREAMS, RUNS).
set -euo pipefail
B=${B:-target/release}
EVENTS=${EVENTS:-300000}
STREAMS=${STREAMS:-8}
RUNS=${RUNS:-3}
W=$(mktemp -d -p "${TMPDIR:-/tmp}" audit-fsync.XXXX)
LP=
cleanup() {
  [ -n "$LP" ] && kill "$LP" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

$B/ledgerctl keygen --out "$W/operator-1" >/dev/null
MPORT=$(port)
cat > "$W/ledgerd.toml" <<CFG
ledger_id = "audit-fsync"
[tls]
plaintext = true
[[principals]]
id = "operator-1"
role = "operator"
public_key = "$(cat "$W/operator-1.pub")"
[checkpoint]
interval_secs = 0
[metrics]
listen = "127.0.0.1:$MPORT"
CFG
start() { # $1: data dir, $2: every|snapshots; sets LP and ADDR
  local init="" sync=""
  [ -e "$1/db" ] || init="--init"
  [ "$2" = snapshots ] && sync=snapshots
  LEDGERD_BENCH_AUDIT_SYNC=$sync $B/ledgerd $init --config "$W/ledgerd.toml" --data-dir "$1" \
    --listen 127.0.0.1:0 > "$W/out" 2> "$W/err" &
  LP=$!
  for _ in $(seq 1200); do grep -q listening "$W/out" 2>/dev/null && break; sleep 0.1; done
  grep -q listening "$W/out" || { echo "ledgerd did not start:" >&2; tail -5 "$W/err" >&2; exit 1; }
  ADDR=$(head -1 "$W/out" | awk '{print $4}')
}
stop() { kill "$LP"; wait "$LP" 2>/dev/null || true; LP=; }
metric() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk -v n="$1" '$1 == n {print $2 + 0}'; }

: > "$W/runs"
for r in $(seq "$RUNS"); do
  for mode in every snapshots; do
    d="$W/$mode$r"
    start "$d" "$mode"
    $B/ledgerctl --json bench --server "http://$ADDR" --operator-key "$W/operator-1.key" \
      --operator-id operator-1 --events "$EVENTS" --streams "$STREAMS" --warmup 30000 > "$W/run.json"
    head=$(metric ledger_head_index)
    stop
    rm -rf "$d/audit"
    t0=$(date +%s.%N)
    start "$d" "$mode"
    while [ "$(metric ledger_audit_position)" != "$head" ]; do
      kill -0 "$LP" 2>/dev/null || { echo "ledgerd stopped:" >&2; tail -5 "$W/err" >&2; exit 1; }
      sleep 0.05
    done
    secs=$(echo "$(date +%s.%N) - $t0" | bc)
    stop
    rm -rf "$d"
    python3 - "$mode" "$W/run.json" "$head" "$secs" >> "$W/runs" <<'P'
import json, sys
j = json.load(open(sys.argv[2]))[0]
print(sys.argv[1], round(j["accepted_per_second"]), j["ledgerd"]["cpu_us_per_receipt"],
      int(sys.argv[3]) + 1, round(float(sys.argv[4]), 2))
P
    tail -1 "$W/runs" | awk '{printf "== %s %s: peak %s events/s, %s us a receipt; audit rebuilt %s entries in %s s (%d/s)\n", "'"$r"'", $1, $2, $3, $4, $5, $4 / $5}'
  done
done
python3 - "$W/runs" <<'P'
import statistics as st, sys
runs = [l.split() for l in open(sys.argv[1])]
get = lambda m: [(float(r[1]), float(r[2]), float(r[3]) / float(r[4])) for r in runs if r[0] == m]
e, s = get("every"), get("snapshots")
med = st.median
print(f"ingest peak (events/s), medians: fsync every commit {med([x[0] for x in e]):.0f}, at snapshots only "
      f"{med([x[0] for x in s]):.0f}; pair ratios' median {med([a[0] / b[0] for a, b in zip(e, s)]):.3f}")
print(f"ledgerd CPU a receipt (us), medians: {med([x[1] for x in e]):.2f} against {med([x[1] for x in s]):.2f}")
print(f"audit rebuild (entries/s), medians: {med([x[2] for x in e]):.0f} against {med([x[2] for x in s]):.0f}; "
      f"pair ratios' median {med([a[2] / b[2] for a, b in zip(e, s)]):.3f}")
P
