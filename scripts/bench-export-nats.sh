#!/usr/bin/env bash
# What the NATS JetStream export costs ingest, and how fast it drains a backlog, in one sitting.
# A JetStream cluster of NODES nats-server processes on loopback (stream replicas = NODES), then
# RUNS times, alternated:
#   off: a fresh ledgerd without [export.nats], `ledgerctl bench` against it; then the same
#        ledger restarted with the export: seconds until its whole backlog is in the stream;
#   on:  a fresh ledgerd with [export.nats], the same bench; then seconds until the export's lag
#        is 0 after the bench's last receipt.
# From the repository: cargo build --release -p ledgerd -p ledgerctl; then
# bash scripts/bench-export-nats.sh (B= another binary folder; EVENTS, STREAMS, RUNS, NODES).
set -euo pipefail
B=${B:-target/release}
EVENTS=${EVENTS:-300000}
STREAMS=${STREAMS:-8}
RUNS=${RUNS:-2}
NODES=${NODES:-3}
NATS=$(command -v nats-server || echo /usr/sbin/nats-server)
W=$(mktemp -d -p "${TMPDIR:-/tmp}" export-bench.XXXX)
PIDS=()
LP=
cleanup() {
  [ -n "$LP" ] && kill "$LP" 2>/dev/null || true
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

CPORTS=(); RPORTS=()
for i in $(seq "$NODES"); do CPORTS+=("$(port)"); RPORTS+=("$(port)"); done
SERVERS=""
for i in $(seq 0 $((NODES - 1))); do
  ROUTES=""
  for j in $(seq 0 $((NODES - 1))); do
    [ "$i" = "$j" ] || ROUTES="$ROUTES\"nats-route://127.0.0.1:${RPORTS[$j]}\", "
  done
  CLUSTER=""
  [ "$NODES" -gt 1 ] && CLUSTER="cluster { name: bench, listen: 127.0.0.1:${RPORTS[$i]}, routes: [${ROUTES%, }] }"
  cat > "$W/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:${CPORTS[$i]}
jetstream { store_dir: "$W/n$i", max_memory_store: 64MB, max_file_store: 8GB }
$CLUSTER
CONF
  "$NATS" -c "$W/n$i.conf" 2> "$W/n$i.log" &
  PIDS+=($!)
  SERVERS="$SERVERS\"nats://127.0.0.1:${CPORTS[$i]}\", "
done

$B/ledgerctl keygen --out "$W/operator-1" >/dev/null
MPORT=$(port)
config() { # $1: stream name, or empty for no export
  cat <<CFG
ledger_id = "export-bench"
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
  if [ -n "$1" ]; then
    printf '[export.nats]\nservers = [%s]\nstream = "%s"\nsubject_prefix = "%s"\nreplicas = %s\n' \
      "${SERVERS%, }" "$1" "$1" "$NODES"
  fi
}
start() { # $1: data dir, $2: stream or empty; sets LP and ADDR
  config "$2" > "$W/ledgerd.toml"
  local init=""
  [ -e "$1/db" ] || init="--init"
  $B/ledgerd $init --config "$W/ledgerd.toml" --data-dir "$1" --listen 127.0.0.1:0 > "$W/out" 2> "$W/err" &
  LP=$!
  for _ in $(seq 1200); do grep -q listening "$W/out" 2>/dev/null && break; sleep 0.1; done
  grep -q listening "$W/out" || { echo "ledgerd did not start:" >&2; tail -5 "$W/err" >&2; exit 1; }
  ADDR=$(head -1 "$W/out" | awk '{print $4}')
}
stop() { kill "$LP"; wait "$LP" 2>/dev/null || true; LP=; }
metric() { curl -s "http://127.0.0.1:$MPORT/metrics" | awk -v n="$1" '$1 == n {print $2 + 0}'; }
drain() { # seconds until the export's lag is 0
  local t0 lag
  t0=$(date +%s.%N)
  while :; do
    lag=$(metric ledger_export_nats_lag_entries)
    [ "$(metric ledger_export_nats_connected)" = "1" ] && [ "$lag" = "0" ] && break
    kill -0 "$LP" 2>/dev/null || { echo "ledgerd stopped:" >&2; tail -5 "$W/err" >&2; exit 1; }
    if [ "$(echo "$(date +%s.%N) - $t0 > 900" | bc)" = 1 ]; then echo "no drain in 900 s" >&2; exit 1; fi
    sleep 0.05
  done
  echo "$(date +%s.%N) - $t0" | bc
}
bench() {
  $B/ledgerctl bench --server "http://$ADDR" --operator-key "$W/operator-1.key" --operator-id operator-1 \
    --events "$EVENTS" --streams "$STREAMS" --warmup 30000 --also-half 2>&1 | grep -v '^ *$'
}

for r in $(seq "$RUNS"); do
  echo "== run $r, off: no export"
  start "$W/off$r" ""
  bench
  stop
  start "$W/off$r" "DRAIN$r"
  s=$(drain)
  n=$(metric ledger_export_nats_exported_entries)
  echo "   backlog of $n entries into the stream in $s s: $(echo "$n / $s" | bc) entries/s"
  stop
  rm -rf "$W/off$r"
  echo "== run $r, on: export to a stream of $NODES replicas"
  start "$W/on$r" "BENCH$r"
  bench
  s=$(drain)
  echo "   export lag 0 $s s after the last receipt; $(metric ledger_export_nats_exported_entries) entries exported, $(metric ledger_export_nats_resumes_total) resumes"
  stop
  rm -rf "$W/on$r"
done
