#!/usr/bin/env bash
# The peer benchmark (docs/performance.md, "Against PostgreSQL"): a throwaway PostgreSQL 15
# cluster and ledgerd loaded one after the other, in one run, on this machine, with the same
# kind of records; prints records/s, latency and machine CPU per record for each mode, and the
# ratios of ledgerd's figures to each.
#
#   scripts/peer-bench.sh                # release build, 20 s per PostgreSQL mode
#   DURATION=5 EVENTS=100000 scripts/peer-bench.sh   # a quick look
#
# PostgreSQL: fsync=on, synchronous_commit=on (durable commits, as ledgerd's receipts), 8 pgbench
# clients on 2 threads, one table with a bigserial key. Modes: one row a transaction; a
# hash-chained table (each row's SHA-256 over the previous row's hash and its body, the head
# row locked: a chain serialises its writers); 100 rows a transaction with 250-byte and with
# 72-byte bodies. ledgerd: `ledgerctl bench` (embedded ledger, 8 streams, one device each, the
# load generator in the same process as pgbench is on the same machine): every event's ed25519
# signature checked, sequences, the blake3 chain, the Merkle tree, signed receipts, durable
# before each receipt.
set -euo pipefail
cd "$(dirname "$0")/.."

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
DURATION=${DURATION:-20}
CLIENTS=${CLIENTS:-8}
EVENTS=${EVENTS:-600000}
[ -x "$PGBIN/postgres" ] || { echo "no PostgreSQL 15 in $PGBIN (set PGBIN)" >&2; exit 2; }

if [ -z "${SKIP_BUILD:-}" ]; then
  cargo build --release -q -p ledgerctl
fi
LEDGERCTL=${LEDGERCTL:-target/release/ledgerctl}

tmp=$(mktemp -d /tmp/peer-bench.XXXXXX)
pg_user=$(id -un)
run_pg() { "$@"; }
if [ "$(id -u)" = 0 ]; then
  # PostgreSQL refuses to run as root.
  pg_user=nobody
  chown nobody "$tmp"
  run_pg() { runuser -u nobody -- "$@"; }
fi
cleanup() {
  run_pg "$PGBIN/pg_ctl" -D "$tmp/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

run_pg "$PGBIN/initdb" -D "$tmp/pg" -U bench --auth=trust -E UTF8 >/dev/null
cat >>"$tmp/pg/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$tmp'
fsync = on
synchronous_commit = on
full_page_writes = on
shared_buffers = 512MB
max_wal_size = 4GB
CONF
run_pg "$PGBIN/pg_ctl" -D "$tmp/pg" -l "$tmp/pg.log" -w start >/dev/null
psql() { run_pg "$PGBIN/psql" -h "$tmp" -U bench -d postgres -qAt "$@"; }
psql -c "CREATE TABLE plain (id bigserial PRIMARY KEY, device text NOT NULL, seq bigint NOT NULL, body bytea NOT NULL)"
psql -c "CREATE TABLE chained (n bigint PRIMARY KEY, hash bytea NOT NULL, body bytea NOT NULL)"
psql -c "CREATE TABLE chain_head (one int PRIMARY KEY, n bigint NOT NULL, hash bytea NOT NULL)"
psql -c "INSERT INTO chain_head VALUES (1, 0, '\\x00')"

cat >"$tmp/one.sql" <<'SQL'
INSERT INTO plain (device, seq, body) VALUES ('d' || :client_id, :client_id, convert_to(repeat('x', 250), 'UTF8'));
SQL
cat >"$tmp/chained.sql" <<'SQL'
WITH h AS (UPDATE chain_head SET n = n + 1, hash = sha256(hash || convert_to(repeat('x', 250), 'UTF8')) WHERE one = 1 RETURNING n, hash)
INSERT INTO chained SELECT n, hash, convert_to(repeat('x', 250), 'UTF8') FROM h;
SQL
for size in 250 72; do
  cat >"$tmp/batch$size.sql" <<SQL
INSERT INTO plain (device, seq, body) SELECT 'd' || :client_id, g, convert_to(repeat('x', $size), 'UTF8') FROM generate_series(1, 100) g;
SQL
done
chmod a+r "$tmp"/*.sql

# CPU seconds PostgreSQL used so far: the postmaster's own and its reaped children's (the
# backends pgbench connected), and its living children's (writers, checkpointer, WAL writer).
# Only these processes and pgbench count, not the rest of a shared machine.
tick=$(getconf CLK_TCK)
pg_cpu() {
  local pm
  pm=$(head -1 "$tmp/pg/postmaster.pid")
  { awk '{print $14+$15+$16+$17}' "/proc/$pm/stat"
    for c in $(pgrep -P "$pm"); do awk '{print $14+$15}' "/proc/$c/stat" 2>/dev/null || true; done
  } | awk -v t="$tick" '{s+=$1} END {print s/t}'
}

results="$tmp/results.tsv"
: >"$results"
pg_mode() { # name script rows-per-transaction
  local name=$1 script=$2 rows=$3 out b0 b1 t0 t1
  b0=$(pg_cpu)
  t0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  out=$(run_pg "$PGBIN/pgbench" -h "$tmp" -U bench -n -c "$CLIENTS" -j 2 -T "$DURATION" -f "$tmp/$script" postgres 2>&1)
  sleep 1 # the postmaster reaps the backends
  t1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  b1=$(python3 -c "print($(pg_cpu) + ($t1 - $t0) / $tick)")
  local tps lat
  tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
  lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out")
  [ -n "$tps" ] || { echo "pgbench failed for $name:" >&2; echo "$out" >&2; exit 1; }
  python3 - "$name" "$tps" "$rows" "$lat" "$b0" "$b1" "$DURATION" >>"$results" <<'PY'
import sys
name, tps, rows, lat, b0, b1, dur = sys.argv[1:]
rps = float(tps) * int(rows)
cpu_us = (float(b1) - float(b0)) / (rps * float(dur)) * 1e6
print(f"{name}\t{rps:.0f}\t{float(lat):.2f}\t-\t{cpu_us:.1f}")
PY
  echo "  $(tail -1 "$results" | cut -f1-2) rows/s" >&2
}

echo "PostgreSQL 15 ($CLIENTS clients, $DURATION s a mode):" >&2
pg_mode "PostgreSQL, 1 row a transaction (250 B)" one.sql 1
pg_mode "PostgreSQL, hash-chained rows (250 B)" chained.sql 1
pg_mode "PostgreSQL, 100 rows a transaction (250 B)" batch250.sql 100
pg_mode "PostgreSQL, 100 rows a transaction (72 B)" batch72.sql 100
run_pg "$PGBIN/pg_ctl" -D "$tmp/pg" -m fast stop >/dev/null

echo "ledgerd (ledgerctl bench, $EVENTS events, 8 streams):" >&2
"$LEDGERCTL" --json bench --events "$EVENTS" --streams 8 --warmup $((EVENTS / 10)) >"$tmp/ledgerd.json"
python3 - "$tmp/ledgerd.json" >>"$results" <<'PY'
import json, sys
text, dec, runs, at = open(sys.argv[1]).read(), json.JSONDecoder(), [], 0
while True:
    at = text.find("{", at)
    if at < 0:
        break
    v, at = dec.raw_decode(text, at)
    runs.append(v)
r = runs[-1]
rate = r["accepted_per_second"]
cpu = r.get("cpu", {})
cpu_us = cpu.get("process_cores", 0) / rate * 1e6 if rate else 0
lat = r["latency_ms"]
print(f"ledgerd, signed events (about 60 B + 64 B signature)\t{rate:.0f}\t{lat['p50']:.2f}\t{lat['p99']:.2f}\t{cpu_us:.1f}")
PY

python3 - "$results" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
ledger = float(rows[-1][1])
print(f"{'mode':<52} {'records/s':>10} {'latency ms':>22} {'CPU µs/record':>14} {'ledgerd ×':>10}")
for name, rate, lat, p99, cpu in rows:
    latency = f"avg {lat}" if p99 == "-" else f"p50 {lat} p99 {p99}"
    ratio = ledger / float(rate)
    print(f"{name:<52} {float(rate):>10.0f} {latency:>22} {cpu:>14} {ratio:>10.2f}")
PY
