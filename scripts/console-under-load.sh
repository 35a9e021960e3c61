#!/usr/bin/env bash
# Ingest latency while a browser uses the compliance console on the same ledgerd (issue 41), and
# the console's page times on the demo's ledger. Release builds, on a ledger left by the demo:
#   cargo build --release -p ledgerd -p ledgerctl -p ledger-console
#   target/release/ledgerctl demo --data-dir DIR --no-mirror      # prints the console password
#   scripts/console-under-load.sh DIR PASSWORD [RATE] [EVENTS] [PAIRS]   (20000 a second, 200000, 3)
# Each pair streams EVENTS at RATE with `ledgerctl bench --server` (8 streams) once alone and once
# while headless Chromium (WebDriver, chromedriver) signs in and loads the console's pages in a
# loop; prints each run's receipt p99 and the medians. Then the page times
# (scripts/console-page-times.sh) with the ledger idle.
set -euo pipefail
DIR=$(cd "$1" && pwd) PW=$2 RATE=${3:-20000} EVENTS=${4:-200000} PAIRS=${5:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/target/release
W=$(mktemp -d); PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait; rm -rf "$W"' EXIT
export LEDGER_CA=$DIR/pki/ca.pem LEDGER_CERT=$DIR/pki/demo-regulator.pem \
       LEDGER_KEY=$DIR/pki/demo-regulator.key

"$B/ledgerd" --config "$DIR/ledgerd.toml" > "$W/ledgerd.out" 2> "$W/ledgerd.err" & PIDS+=($!)
"$B/ledgerctl" health --server https://127.0.0.1:50051 --timeout 60 > /dev/null
"$B/ledger-console" serve --config "$DIR/console.toml" > "$W/console.out" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do curl -sk -o /dev/null https://127.0.0.1:8443/signin && break; sleep 0.1; done
URL=https://127.0.0.1:8443

# The browser: chromedriver's W3C WebDriver endpoints, driven with curl.
chromedriver --port=9515 > /dev/null 2>&1 & PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:9515/status && break; sleep 0.1; done
WD=http://127.0.0.1:9515
SID=$(curl -s -X POST $WD/session -d '{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{
  "binary":"/usr/bin/chromium","args":["--headless=new","--no-sandbox","--disable-dev-shm-usage",
  "--disable-gpu","--ignore-certificate-errors","--window-size=1280,1000"]}}}}' | jq -r .value.sessionId)
[ -n "$SID" ] && [ "$SID" != null ] || { echo "no WebDriver session" >&2; exit 1; }
go() { curl -s -X POST "$WD/session/$SID/url" -d "{\"url\":\"$URL$1\"}" > /dev/null; }
el() { curl -s -X POST "$WD/session/$SID/element" -d "{\"using\":\"css selector\",\"value\":\"$1\"}" \
       | jq -r '.value | to_entries[0].value'; }
go /signin
curl -s -X POST "$WD/session/$SID/element/$(el '#name')/value" -d '{"text":"inspector"}' > /dev/null
curl -s -X POST "$WD/session/$SID/element/$(el '#password')/value" -d "{\"text\":\"$PW\"}" > /dev/null
curl -s -X POST "$WD/session/$SID/element/$(el 'form button[type=submit]')/click" -d '{}' > /dev/null
sleep 1
at=$(curl -s "$WD/session/$SID/url" | jq -r .value)
case "$at" in */signin*) echo "sign-in refused (still at $at)" >&2; exit 1 ;; esac

browse() { # loads the pages in a loop until $W/stop exists; counts the loads in $W/loads
  local n=0
  while [ ! -e "$W/stop" ]; do
    for p in / /findings "/findings?severity=high" /devices /jackpots /reports /reports/events /verify; do
      go "$p"; n=$((n + 1))
    done
  done
  echo $n > "$W/loads"
}

bench() { # prints the receipt p99 (ms) at the client and in ledgerd
  "$B/ledgerctl" --json bench --server https://127.0.0.1:50051 --operator-key "$DIR/keys/operator-1.key" \
      --operator-id operator-1 --expect-ledger-id casino-ledger-demo --streams 8 --events "$EVENTS" \
      --rate "$RATE" > "$W/run.json"
  jq -r '.[0] | "\(.latency_ms.p99) \(.ledgerd.receipt_latency_ms.p99) \(.accepted_per_second|floor)"' "$W/run.json"
}

: > "$W/alone"; : > "$W/browsed"
for i in $(seq "$PAIRS"); do
  a=$(bench); echo "pair $i alone:        p99 client/ledgerd ms, events/s: $a"; echo "$a" >> "$W/alone"
  rm -f "$W/stop"; browse & bp=$!
  sleep 2
  b=$(bench); touch "$W/stop"; wait $bp
  echo "pair $i with browser: p99 client/ledgerd ms, events/s: $b ($(cat "$W/loads") pages loaded)"
  echo "$b" >> "$W/browsed"
done
med() { sort -n -k"$2" "$1" | awk -v k="$2" '{v[NR]=$k} END {print v[int((NR+1)/2)]}'; }
echo "medians: alone p99 $(med "$W/alone" 1) ms (ledgerd $(med "$W/alone" 2)); with the browser \
p99 $(med "$W/browsed" 1) ms (ledgerd $(med "$W/browsed" 2)), at $RATE events/s"
curl -s -X DELETE "$WD/session/$SID" > /dev/null
echo "page times, ledger idle:"
"$ROOT/scripts/console-page-times.sh" "$URL" inspector "$PW"
