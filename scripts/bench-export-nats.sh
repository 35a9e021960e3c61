#!/usr/bin/env bash
# What the NATS JetStream export costs ingest, and how fast it drains a backlog, in one sitting.
# A JetStream cluster of NODES nats-server processes on loopback (stream replicas = NODES), then
# RUNS times, alternated:
#   off: a fresh ledgerd without [export.nats], `ledgerctl bench` against it; then (BACKLOG=1)
#        the same ledger restarted with the export: seconds until its whole backlog is in the
#        stream;
#   on:  a fresh ledgerd with [export.nats], the same bench, the export's lag sampled every
#        0.2 s meanwhile (its largest, and whether it yielded to ingest; "off" is sampled alike,
#        since the scrapes cost too); then seconds until the lag is 0 after the bench's last
#        receipt (the catch-up).
# At the end: the peaks' medians, their ratio and the pair ratios' median, ledgerd's CPU a
# receipt. The machine's noise between runs is larger than the export's cost: compare pairs.
# From the repository: cargo build --release -p ledgerd -p ledgerctl; then
# bash scripts/bench-export-nats.sh (B= another binary folder; EVENTS, STREAMS, RUNS, NODES,
# BACKLOG=0 to skip the backlog drains).
set -euo pipefail
B=${B:-target/release}
EVENTS=${EVENTS:-300000}
STREAMS=${STREAMS:-8}
RUNS=${RUNS:-2}
NODES=${NODES:-3}
BACKLOG=${BACKLOG:-1}
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
bench() { # $1: off|on; appends "mode peak cpu_us" to $W/runs
  $B/ledgerctl --json bench --server "http://$ADDR" --operator-key "$W/operator-1.key" --operator-id operator-1 \
    --events "$EVENTS" --streams "$STREAMS" --warmup 30000 > "$W/run.json"
  python3 - "$1" "$W/run.json" >> "$W/runs" <<'P'
import json, sys
j = json.load(open(sys.argv[2]))[0]
print(sys.argv[1], round(j["accepted_per_second"]), j["ledgerd"]["cpu_us_per_receipt"])
P
  tail -1 "$W/runs" | awk '{printf "   peak %s events/s, ledgerd %s us of CPU a receipt\n", $2, $3}'
}
sample_lag() { # every 0.2 s until killed: "lag yielding"
  while :; do
    echo "$(metric ledger_export_nats_lag_entries) $(metric ledger_export_nats_yielding)"
    sleep 0.2
  done
}

: > "$W/runs"
for r in $(seq "$RUNS"); do
  echo "== run $r, off: no export"
  start "$W/off$r" ""
  # The same sampling as below (its scrapes cost ledgerd and the machine alike).
  sample_lag > /dev/null &
  SP=$!
  bench off
  kill "$SP"; wait "$SP" 2>/dev/null || true
  stop
  if [ "$BACKLOG" = 1 ]; then
    start "$W/off$r" "DRAIN$r"
    s=$(drain)
    n=$(metric ledger_export_nats_exported_entries)
    echo "   backlog of $n entries into the stream in $s s: $(echo "$n / $s" | bc) entries/s"
    stop
  fi
  rm -rf "$W/off$r"
  echo "== run $r, on: export to a stream of $NODES replicas"
  start "$W/on$r" "BENCH$r"
  sample_lag > "$W/lag" &
  SP=$!
  bench on
  kill "$SP"; wait "$SP" 2>/dev/null || true
  echo "   during the bench: largest lag $(sort -n "$W/lag" | tail -1 | awk '{print $1}') entries, yielding in $(awk '$2 == 1' "$W/lag" | wc -l) of $(wc -l < "$W/lag") samples; lag $(metric ledger_export_nats_lag_entries) at its end"
  s=$(drain)
  n=$(metric ledger_export_nats_exported_entries)
  echo "   caught up (lag 0) $s s after the last receipt; $n entries exported, $(metric ledger_export_nats_resumes_total) resumes, $(metric ledger_export_nats_yields_total) yields"
  # The export thread's own CPU (reading, encoding, the NATS connection: all on that thread).
  for t in /proc/"$LP"/task/*; do
    if [ "$(cat "$t/comm")" = export-nats ]; then
      awk -v n="$n" -v hz="$(getconf CLK_TCK)" '{printf "   the export thread: %.2f s of CPU, %.2f us an entry\n", ($14 + $15) / hz, ($14 + $15) / hz / n * 1e6}' "$t/stat"
    fi
  done
  stop
  rm -rf "$W/on$r"
done
python3 - "$W/runs" <<'P'
import statistics as st, sys
runs = [l.split() for l in open(sys.argv[1])]
off = [(float(r[1]), float(r[2])) for r in runs if r[0] == "off"]
on = [(float(r[1]), float(r[2])) for r in runs if r[0] == "on"]
med = st.median
print(f"peak (events/s), medians: off {med([a for a, _ in off]):.0f}, on {med([a for a, _ in on]):.0f}, "
      f"ratio {med([a for a, _ in on]) / med([a for a, _ in off]):.3f}; pair ratios "
      f"{', '.join(f'{a[0] / b[0]:.3f}' for a, b in zip(on, off))}, median "
      f"{med([a[0] / b[0] for a, b in zip(on, off)]):.3f}")
print(f"ledgerd CPU a receipt (us), medians: off {med([c for _, c in off]):.2f}, on {med([c for _, c in on]):.2f}")
P
