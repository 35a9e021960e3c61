#!/usr/bin/env bash
# Page times of the compliance console: 20 loads of each page with curl, p50/p95/max.
# Usage: scripts/console-page-times.sh URL ACCOUNT PASSWORD
#   e.g. after `ledgerctl demo`, `ledgerd --config demo-data/ledgerd.toml` and
#   `ledger-console serve --config demo-data/console.toml`:
#   scripts/console-page-times.sh https://127.0.0.1:8443 inspector <the password the demo printed>
set -euo pipefail
URL=$1 NAME=$2 PW=$3
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
C=$T/cookies
curl -sk -c "$C" -b "$C" "$URL/signin" -o "$T/signin.html"
TOK=$(grep -o 'name="csrf" value="[0-9a-f]*"' "$T/signin.html" | grep -o '[0-9a-f]\{64\}')
code=$(curl -sk -c "$C" -b "$C" -X POST "$URL/signin" \
  --data-urlencode "name=$NAME" --data-urlencode "password=$PW" -d "csrf=$TOK&next=/" \
  -o /dev/null -w '%{http_code}')
[ "$code" = 303 ] || { echo "sign-in refused ($code)" >&2; exit 1; }
ROUND=$(curl -sk -b "$C" "$URL/findings?severity=high" | grep -o 'href="/round?[^"]*"' | head -1 \
  | sed 's/href="//; s/"$//; s/&amp;/\&/g')
DEVICE=$(curl -sk -b "$C" "$URL/devices" | grep -o 'href="/device?id=[^"]*"' | head -1 \
  | sed 's/href="//; s/"$//; s/&amp;/\&/g')
for p in / /findings "/findings?severity=high" ${ROUND:+"$ROUND"} /devices ${DEVICE:+"$DEVICE"} \
         /jackpots /verify /reports /reports/slots.csv /reports/events /reports/events.csv \
         "/findings.csv?severity=high" "/findings.xlsx?severity=high"; do
  for _ in $(seq 20); do
    curl -sk -b "$C" "$URL$p" -o /dev/null -w '%{http_code} %{time_total}\n'
  done > "$T/t"
  codes=$(awk '{print $1}' "$T/t" | sort -u | tr '\n' ' ')
  sort -n -k2 "$T/t" | awk -v p="$p" -v c="$codes" '{t[NR]=$2*1000}
    END {printf "%-60s status %s p50 %6.1f ms  p95 %6.1f ms  max %6.1f ms\n", p, c, t[10], t[19], t[20]}'
done
