#!/bin/bash
# Mirror measurements on release builds (docs/performance.md; docs/performance-history.md, "Mirrors"):
#   scripts/mirror-bench.sh lag RATE EVENTS   receipt p50/p99 and mirror lag p99 at RATE, without and with [replication] k = 1
#   scripts/mirror-bench.sh catchup EVENTS    a fresh mirror copying EVENTS entries (audits off), then a restore from it
# Build first: cargo build --release -p ledgerd -p ledgerctl
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/target/release
W=$ROOT/target/mirror-bench

rm -rf $W; mkdir -p $W; cd $W
$B/ledgerctl keygen --out op >/dev/null
$B/ledgerctl pki ca --dir tls >/dev/null
$B/ledgerctl pki server --dir tls --host 127.0.0.1 >/dev/null
REG=$($B/ledgerctl --json pki client --dir tls --name reg --role regulator)
ADM=$($B/ledgerctl --json pki client --dir tls --name adm --role admin)
fp() { echo "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])'; }
OPPUB=$(python3 - <<'P'
import re
t=open("op.pub").read().strip()
print(t)
P
)
common() {
cat <<C
[tls]
cert_chain = "$W/tls/ledgerd.pem"
key = "$W/tls/ledgerd.key"
client_ca = ["$W/tls/ca.pem"]
[[clients]]
name = "reg"
role = "regulator"
fingerprint = "$(fp "$REG")"
[[clients]]
name = "adm"
role = "admin"
fingerprint = "$(fp "$ADM")"
[log]
filter = "warn"
C
}
src_cfg() { # $1 = extra
cat > src.toml <<C
ledger_id = "m"
[[principals]]
id = "operator-1"
role = "operator"
public_key = "$OPPUB"
[checkpoint]
interval_secs = 5
$1
$(common)
C
}
mirror_cfg() { # $1 = src addr, $2 = key
cat > mirror.toml <<C
ledger_id = "m"
[mirror]
source = "https://$1"
source_ledger_id = "m"
source_ledger_key = "$2"
tls_ca = "$W/tls/ca.pem"
tls_cert = "$W/tls/reg.pem"
tls_key = "$W/tls/reg.key"
$(common)
C
}
export LEDGER_CA=$W/tls/ca.pem LEDGER_CERT=$W/tls/reg.pem LEDGER_KEY=$W/tls/reg.key
start() { # $1 cfg $2 dir $3 extra args ; prints addr key
  $B/ledgerd --config $1 --data-dir $2 --listen 127.0.0.1:0 $3 > $2.out 2> $2.err &
  echo $! > $2.pid
  for i in $(seq 1 600); do [ -s $2.out ] && break; sleep 0.1; done
  head -1 $2.out
}
stopit() { kill -TERM $(cat $1.pid); while kill -0 $(cat $1.pid) 2>/dev/null; do sleep 0.1; done; }
bench() { # $1 addr, rest args
  local a=$1; shift
  $B/ledgerctl bench --server https://$a --operator-key op.key --operator-id operator-1 --streams 8 "$@" 2>&1
}
caught_up() { # $1 mirror addr, $2 want entries
  while true; do
    m=$($B/ledgerctl --json mirror status --server https://$1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["mirrored_entries"])')
    [ "$m" -ge "$2" ] && break; sleep 0.05
  done
}
src_head() { $B/ledgerctl --json status --server https://$1 | python3 -c "import json,sys; print(json.load(sys.stdin)[\"entries\"])"; }
case "${1:-}" in
lag)
  RATE=${2:-10000}; EV=${3:-100000}
  for mode in plain k1; do
    rm -rf $W/src $W/mir
    if [ $mode = k1 ]; then
      src_cfg $'[replication]\nrequired_mirrors = 1\nmirrors = ["reg"]\non_lag = "wait"'
    else
      src_cfg ""
    fi
    L=$(start src.toml $W/src "--init"); A=$(echo $L | awk '{print $4}'); K=$(echo $L | awk '{print $6}')
    mirror_cfg $A $K
    M=$(start mirror.toml $W/mir "--init" | awk '{print $4}')
    echo "== $mode: source $A mirror $M"
    bench $A --events $EV --rate $RATE | grep -E 'accepted|ledgerd:' | head -3
    H=$(src_head $A); caught_up $M $H
    $B/ledgerctl mirror status --server https://$M
    stopit $W/mir; stopit $W/src
  done ;;
catchup)
  EV=${2:-1000000}
  rm -rf $W/src $W/mir $W/src.lost
  src_cfg $'[audit]\nenabled = false'
  L=$(start src.toml $W/src "--init"); A=$(echo $L | awk '{print $4}'); K=$(echo $L | awk '{print $6}')
  bench $A --events $EV | grep -E 'accepted' | head -2
  H=$(src_head $A); echo "source entries $H"
  mirror_cfg $A $K; printf "[audit]\nenabled = false\n" >> mirror.toml
  t0=$(date +%s.%N)
  M=$(start mirror.toml $W/mir "--init" | awk '{print $4}')
  caught_up $M $H
  t1=$(date +%s.%N)
  echo "mirror catch-up: $H entries in $(python3 -c "print(round($t1-$t0,2))") s"
  stopit $W/src
  mv $W/src $W/src.lost
  mkdir -p $W/keys && cp $W/src.lost/ledger.key $W/keys/ledger.key
  sed -i "s|^ledger_id = \"m\"|ledger_id = \"m\"\nledger_public_key = \"$K\"\nledger_key_file = \"$W/keys/ledger.key\"|" src.toml
  $B/ledgerd restore --from https://$M --config src.toml --data-dir $W/src --tls-ca $W/tls/ca.pem \
    --tls-cert $W/tls/reg.pem --tls-key $W/tls/reg.key 2>&1 | tail -1
  L=$(start src.toml $W/src ""); echo "restored source serves: $L"
  stopit $W/src; stopit $W/mir ;;
*) echo "usage: $0 lag [RATE] [EVENTS] | catchup [EVENTS]"; exit 2 ;;
esac
