#!/usr/bin/env bash
# ledger-agent's throughput on one device: a release ledgerd on loopback, a machine registered, N GamePlayed
# lines (default 200,000) through `ledger-agent run --input`; prints the agent's own summary and its
# time and peak memory. From the repository: cargo build --release -p ledgerd -p ledgerctl -p
# ledger-agent-cli, then bash crates/ledger-agent-cli/bench.sh (B= names another binary folder).
set -euo pipefail
B=${B:-target/release}
N=${N:-200000}
W=$(mktemp -d -p "${TMPDIR:-/tmp}" agent-bench.XXXX)
trap 'kill $LP 2>/dev/null || true; rm -rf "$W"' EXIT
$B/ledgerctl keygen --out "$W/operator-1" >/dev/null
$B/ledgerctl keygen --out "$W/m1" >/dev/null
cat > "$W/ledgerd.toml" <<CFG
ledger_id = "agent-bench"
[tls]
plaintext = true
[[principals]]
id = "operator-1"
role = "operator"
public_key = "$(cat "$W/operator-1.pub")"
CFG
$B/ledgerd --init --config "$W/ledgerd.toml" --data-dir "$W/data" --listen 127.0.0.1:0 > "$W/out" 2> "$W/err" &
LP=$!
for _ in $(seq 100); do grep -q listening "$W/out" 2>/dev/null && break; sleep 0.1; done
ADDR=$(head -1 "$W/out" | awk '{print $4}')
$B/ledgerctl device register --server "http://$ADDR" --operator-key "$W/operator-1.key" --operator-id operator-1 \
  --device-id m1 --kind machine --public-key "$W/m1.pub" --casino lisboa --machine-id M-01 --model MODEL-A --bet-value 100 >/dev/null
python3 - "$W/in.jsonl" "$N" <<'PY'
import sys, time
t = int(time.time() * 1000) - 10_000
with open(sys.argv[1], "w") as f:
    for n in range(1, int(sys.argv[2]) + 1):
        f.write('{"occurredAtMs":"%d","gamePlayed":{"machineId":"M-01","gameNumber":"%d","wagerCents":"100","winCents":"%d"}}\n' % (t, n, 500 if n % 7 == 0 else 0))
PY
/usr/bin/time -f "agent: %e s wall, %U s user, %S s sys, %M KB peak" \
  $B/ledger-agent run --server "http://$ADDR" --device-id m1 --key "$W/m1.key" --outbox "$W/outbox" --input "$W/in.jsonl"
