# Sourced by the release benchmarks that start their own ledgerd (scripts/tiles-bench.sh,
# scripts/receipts-bench.sh), in their working directory W with B the binaries' directory:
# an operator key (op.key, op.pub), a CA with ledgerd's certificate and a regulator client
# "reg", the client's environment, and `tls_toml`, the configuration's TLS and client sections.
$B/ledgerctl keygen --out op >/dev/null
$B/ledgerctl pki ca --dir tls >/dev/null
$B/ledgerctl pki server --dir tls --host 127.0.0.1 >/dev/null
REG_FP=$($B/ledgerctl --json pki client --dir tls --name reg --role regulator |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])')
export LEDGER_CA=$W/tls/ca.pem LEDGER_CERT=$W/tls/reg.pem LEDGER_KEY=$W/tls/reg.key
tls_toml() {
    cat <<C
[tls]
cert_chain = "$W/tls/ledgerd.pem"
key = "$W/tls/ledgerd.key"
client_ca = ["$W/tls/ca.pem"]
[[clients]]
name = "reg"
role = "regulator"
fingerprint = "$REG_FP"
[log]
filter = "warn"
C
}
