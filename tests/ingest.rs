//! End-to-end ingest: the real ledgerd on a loopback port, real gRPC.

use casino_play::sim;
use e2e::*;
use ledger_agent::DeviceSigner;
use ledger_core::proto::{self as v1, event_body::Payload as P, query_client::QueryClient};
use prost::Message;
use tokio_stream::StreamExt;
use v1::{ReceiptStatus as St, RejectReason as Why};

fn start() -> (tempfile::TempDir, Ledgerd) {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    (dir, l)
}

/// [`start`], with the test operator's secret key in a file there.
fn start_with_operator_key() -> (tempfile::TempDir, Ledgerd, std::path::PathBuf) {
    let (dir, l) = start();
    let key = dir.path().join("operator-1.key");
    std::fs::write(&key, hex::encode(operator_key().to_bytes())).unwrap();
    (dir, l, key)
}

/// `ledgerctl COMMAND --server URL --operator-key KEY --operator-id operator-1 REST`.
fn as_operator(
    command: &[&str],
    url: &str,
    key: &std::path::Path,
    rest: &[&str],
) -> (i32, String, String) {
    let mut args = command.to_vec();
    args.extend([
        "--server",
        url,
        "--operator-key",
        key.to_str().unwrap(),
        "--operator-id",
        "operator-1",
    ]);
    args.extend(rest);
    ledgerctl(&args)
}

#[tokio::test]
async fn a_clean_stream_of_mixed_events_is_accepted_tailed_and_verifies() {
    let (_dir, l) = start();
    let url = l.url();
    // A short casino session: every table game and a slot floor (machines and operator events).
    let session = sim::generate(&sim::standard_plan(
        11,
        0,
        2,
        false,
        "operator-1",
        "inspectorate",
    ))
    .unwrap();
    let specs = session.devices.clone();
    let mut signers = register(&url, 1, &specs).await;
    signers.push(DeviceSigner::new(
        "operator-1",
        operator_key(),
        specs.len() as u64 + 1,
    ));
    let roulette_device = specs[0].device_id.clone();
    // Live tail from the first device event on, started before the session.
    let ch = ledger_agent::connect(&url).await.unwrap();
    let mut tail = QueryClient::new(ch.clone())
        .tail(v1::TailRequest { from_index: 0 })
        .await
        .unwrap()
        .into_inner();
    let events = &session.events;
    let t0 = now_ms() - events.last().unwrap().occurred_at_ms - 1000;
    let envs: Vec<_> = events
        .iter()
        .map(|e| {
            let s = signers
                .iter_mut()
                .find(|s| s.device_id == e.device_id)
                .unwrap();
            s.sign(t0 + e.occurred_at_ms, e.payload.clone())
        })
        .collect();
    // One stream carrying every device's events, interleaved.
    let r = submit(&url, &envs).await;
    assert_eq!(r.len(), envs.len());
    for (i, x) in r.iter().enumerate() {
        assert_eq!(st(x), St::Accepted, "{x:?}");
        assert_eq!(x.position, i as u64 + 1);
    }
    assert!(
        r.windows(2).all(|w| w[1].index == w[0].index + 1),
        "contiguous indices"
    );
    let head = QueryClient::new(ch.clone())
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(head.index, r.last().unwrap().index);
    assert_eq!(head.entry_hash, r.last().unwrap().entry_hash);
    // The tail saw everything up to the head.
    let mut seen = 0;
    while let Some(e) = tail.next().await {
        let e = e.unwrap();
        seen += 1;
        if e.index == head.index {
            assert_eq!(e.entry_hash, head.entry_hash);
            break;
        }
    }
    assert_eq!(seen, head.index + 1);
    // Per-device range and single entry.
    let roulette: Vec<_> = QueryClient::new(ch.clone())
        .list_device_entries(v1::ListDeviceEntriesRequest {
            device_id: roulette_device.clone(),
            from_sequence: 0,
        })
        .await
        .unwrap()
        .into_inner()
        .collect::<Vec<_>>()
        .await;
    assert_eq!(
        roulette.len(),
        events
            .iter()
            .filter(|e| e.device_id == roulette_device)
            .count()
    );
    let e = QueryClient::new(ch.clone())
        .get_entry(v1::GetEntryRequest { index: r[0].index })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(e.body, envs[0].body, "the exact signed bytes are stored");
    assert!(
        QueryClient::new(ch.clone())
            .get_entry(v1::GetEntryRequest {
                index: head.index + 1
            })
            .await
            .is_err()
    );
    // Health checking is on.
    let health = tonic_health::pb::health_client::HealthClient::new(ch.clone())
        .check(tonic_health::pb::HealthCheckRequest {
            service: "casino_ledger.v1.Ingest".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        health.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    drop(tail);
    let data = l.data_dir.clone();
    l.stop();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("OK"), "{out}");
}

#[tokio::test]
async fn bad_signature_gap_duplicate_equivocation_malformed_and_oversized() {
    let (_dir, l) = start();
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let e1 = t.sign(now_ms(), bet("T1", "r1", 1));
    let first = submit(&url, std::slice::from_ref(&e1)).await.remove(0);
    assert_eq!(st(&first), St::Accepted);

    let mut forged = t.sign(now_ms(), bet("T1", "r1", 2));
    t.next_sequence -= 1;
    forged.signature[0] ^= 1;
    let gap = DeviceSigner::new("table-1", t.key().clone(), 7).sign(now_ms(), bet("T1", "r1", 3));
    let other =
        DeviceSigner::new("table-1", t.key().clone(), 1).sign(now_ms(), bet("T1", "r1", 99));
    let junk = v1::Envelope {
        body: vec![0xde, 0xad, 0xbe, 0xef, 0xff],
        signature: vec![1; 64],
    };
    let short_sig = v1::Envelope {
        body: e1.body.clone(),
        signature: vec![1; 10],
    };
    let mut huge = t.sign(now_ms(), bet("T1", "r1", 4));
    t.next_sequence -= 1;
    huge.body.extend(std::iter::repeat_n(0u8, 100 * 1024));
    let future = t.sign(now_ms() + 3_600_000, bet("T1", "r1", 5));
    t.next_sequence -= 1;
    // A card of one two-byte character: its body is decoded (before the signature is checked),
    // and the card parser once cut it inside the character and panicked.
    let odd_card = t.sign(
        now_ms(),
        P::CardDealt(v1::CardDealt {
            table_id: "T1".into(),
            round_id: "r1".into(),
            recipient: "dealer".into(),
            card: "é".into(),
            face_up: true,
        }),
    );
    t.next_sequence -= 1;
    let r = submit(
        &url,
        &[
            forged,
            gap,
            e1.clone(),
            other.clone(),
            other,
            junk,
            short_sig,
            huge,
            future,
            odd_card,
        ],
    )
    .await;
    let got: Vec<_> = r.iter().map(|x| (st(x), why(x))).collect();
    assert_eq!(
        got,
        vec![
            (St::Rejected, Why::BadSignature),
            (St::Rejected, Why::SequenceGap),
            (St::Duplicate, Why::Unspecified),
            (St::Equivocation, Why::Unspecified),
            (St::Equivocation, Why::Unspecified),
            (St::Rejected, Why::Malformed),
            (St::Rejected, Why::BadSignature),
            (St::Rejected, Why::TooLarge),
            (St::Rejected, Why::TimeOutOfRange),
            (St::Rejected, Why::Malformed),
        ]
    );
    assert!(r[9].detail.contains("card"), "{}", r[9].detail);
    assert_eq!(r[1].expected_sequence, 2);
    assert!(r[1].detail.contains("expected 2"), "{}", r[1].detail);
    assert_eq!(
        (r[2].index, &r[2].entry_hash, r[2].received_at_ms),
        (first.index, &first.entry_hash, first.received_at_ms),
        "the original receipt"
    );
    assert_eq!(
        r[3].index, r[4].index,
        "one finding for the same conflicting envelope"
    );
    // Only the finding was added: genesis, principals, registration, e1, finding.
    let ch = ledger_agent::connect(&url).await.unwrap();
    let head = QueryClient::new(ch.clone())
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(head.index, r[3].index);
    assert_eq!(head.index, first.index + 1);
    let finding = QueryClient::new(ch.clone())
        .get_entry(v1::GetEntryRequest { index: r[3].index })
        .await
        .unwrap()
        .into_inner();
    let rec = v1::LedgerRecordBody::decode(finding.body.as_slice()).unwrap();
    assert!(
        matches!(rec.record, Some(v1::ledger_record_body::Record::SecurityFinding(ref f)) if f.code == "equivocation" && f.sequence == 1)
    );
    // A message beyond gRPC's limit breaks that stream only; the server goes on.
    let mut giant = t.sign(now_ms(), bet("T1", "r1", 6));
    t.next_sequence -= 1;
    giant.body.extend(std::iter::repeat_n(0u8, 5 << 20));
    let err = ledger_agent::client::stream_once(ch.clone(), &[giant], &mut Vec::new())
        .await
        .unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("message")
            || err.to_string().contains("ResourceExhausted")
            || err.to_string().contains("resource"),
        "{err}"
    );
    let next = submit(&url, &[t.sign(now_ms(), bet("T1", "r1", 7))]).await;
    assert_eq!(st(&next[0]), St::Accepted);
    assert_eq!(next[0].sequence, 2);
    let data = l.data_dir.clone();
    l.stop();
    let (code, out, err) = ledgerctl(&["--json", "verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["security_findings"], 1);
}

#[tokio::test]
async fn unknown_and_revoked_devices_via_the_cli() {
    let (dir, l, opkey) = start_with_operator_key();
    let url = l.url();
    let base = dir.path().join("table-9");
    let (code, out, err) = ledgerctl(&["keygen", "--out", base.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let key = ledger_agent::keys::read_secret(&dir.path().join("table-9.key")).unwrap();
    // Unknown before registration.
    let mut t = DeviceSigner::new("table-9", key, 1);
    let r = submit(&url, &[t.sign(now_ms(), bet("T9", "r", 1))]).await;
    assert_eq!((st(&r[0]), why(&r[0])), (St::Rejected, Why::UnknownDevice));
    t.next_sequence = 1;
    let pubfile = dir.path().join("table-9.pub");
    let register = || {
        as_operator(
            &["device", "register"],
            &url,
            &opkey,
            &[
                "--device-id",
                "table-9",
                "--kind",
                "table",
                "--public-key",
                pubfile.to_str().unwrap(),
                "--casino",
                "e2e",
                "--table",
                "T9",
            ],
        )
    };
    let (code, out, err) = register();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("accepted"), "{out}");
    // Registering the same id again is refused (exit 1, reason named).
    let (code, out, _) = register();
    assert_eq!(code, 1);
    assert!(out.contains("registration_refused"), "{out}");
    let r = submit(&url, &[t.sign(now_ms(), bet("T9", "r", 1))]).await;
    assert_eq!(st(&r[0]), St::Accepted);
    let (code, out, err) = as_operator(
        &["device", "revoke"],
        &url,
        &opkey,
        &["--device-id", "table-9", "--reason", "terminal stolen"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let r = submit(&url, &[t.sign(now_ms(), bet("T9", "r", 2))]).await;
    assert_eq!((st(&r[0]), why(&r[0])), (St::Rejected, Why::RevokedDevice));
    let (code, out, _) = ledgerctl(&["--json", "device", "list", "--server", &url]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = v
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device_id"] == "table-9")
        .unwrap();
    assert_eq!(
        (d["revoked"].as_bool(), d["last_sequence"].as_u64()),
        (Some(true), Some(1))
    );
    // Its entries, and the operator's (the registration, then the revocation), by device.
    let entries = |device: &str, more: &[&str]| {
        let mut args = vec!["--json", "device", "entries", "--server", &url];
        args.extend(["--device-id", device]);
        args.extend(more);
        let (code, out, err) = ledgerctl(&args);
        assert_eq!(code, 0, "{out}{err}");
        out.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|v| {
                (
                    v["signer"].as_str().unwrap().to_string(),
                    v["sequence"].as_u64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(entries("table-9", &[]), [("table-9".to_string(), 1)]);
    let op: Vec<u64> = entries("operator-1", &[]).iter().map(|e| e.1).collect();
    assert!(
        op.len() >= 2 && op.windows(2).all(|w| w[1] == w[0] + 1),
        "{op:?}"
    );
    let last_two = entries(
        "operator-1",
        &["--from-sequence", &(op[op.len() - 2]).to_string()],
    );
    assert_eq!(last_two.len(), 2);
    assert_eq!(entries("operator-1", &["--limit", "1"]).len(), 1);
    // A device cannot sign registry events.
    let r = submit(
        &url,
        &[t.sign(
            now_ms(),
            P::DeviceRevoked(v1::DeviceRevoked {
                device_id: "table-9".into(),
                reason: String::new(),
            }),
        )],
    )
    .await;
    assert_eq!(st(&r[0]), St::Rejected);
    l.stop();
}

/// Server reflection lists the ledger's services (what `grpcurl list` shows).
#[tokio::test]
async fn reflection_lists_the_services() {
    use tonic_reflection::pb::v1::{
        ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
        server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
    };
    let (_dir, l) = start();
    let ch = ledger_agent::connect(&l.url()).await.unwrap();
    let req = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut resp = ServerReflectionClient::new(ch)
        .server_reflection_info(tokio_stream::iter(vec![req]))
        .await
        .unwrap()
        .into_inner();
    let Some(MessageResponse::ListServicesResponse(list)) =
        resp.next().await.unwrap().unwrap().message_response
    else {
        panic!("no service list");
    };
    let names: Vec<_> = list.service.iter().map(|s| s.name.as_str()).collect();
    for s in [
        "casino_ledger.v1.Ingest",
        "casino_ledger.v1.Query",
        "casino_ledger.v1.Checkpoints",
        "grpc.health.v1.Health",
    ] {
        assert!(names.contains(&s), "{s} missing from {names:?}");
    }
    l.stop();
}

/// One HTTP/1.1 exchange over TLS as the admin principal, with a raw request: the whole answer.
fn http(addr: &str, request: &[u8]) -> String {
    http_as("e2e-admin", addr, request)
}

fn http_as(client: &str, addr: &str, request: &[u8]) -> String {
    use std::io::{Read, Write};
    let mut s = tls_stream(addr.parse().unwrap(), client);
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    // The server closes without a TLS close_notify after `Connection: close` at worst: what was
    // read is the answer.
    let _ = s.read_to_end(&mut out);
    String::from_utf8(out).unwrap()
}

/// `[metrics] listen` serves the ingest figures to Prometheus over plain HTTP, answers anything
/// else with an error, and keeps serving after bad requests.
#[tokio::test]
async fn the_metrics_endpoint_serves_prometheus_text() {
    let (_dir, l, at) = with_metrics();
    let at = at.to_string();
    let url = l.url();
    let t = register(&url, 1, &[table("T1", "BJ-1")]).await;
    let mut t1 = t.into_iter().next().unwrap();
    let envs: Vec<_> = (1..=5)
        .map(|n| t1.sign(now_ms(), bet("BJ-1", "R1", n)))
        .collect();
    assert!(
        submit(&url, &envs)
            .await
            .iter()
            .all(|r| st(r) == St::Accepted)
    );

    for bad in [
        &b"POST /metrics HTTP/1.1\r\n\r\n"[..],
        b"GET /chain HTTP/1.1\r\n\r\n",
        b"\x00\x01garbage\r\n\r\n",
    ] {
        let a = http(&at, bad);
        assert!(!a.starts_with("HTTP/1.1 200"), "{a}");
        assert!(a.contains("Connection: close"), "{a}");
    }
    let a = http(&at, &[b'A'; 20_000]);
    assert!(a.starts_with("HTTP/1.1 431"), "{a}");

    // Metrics are for admin and regulator principals; others are refused, naming the role.
    for client in ["e2e-device", "e2e-compliance", "e2e-operator"] {
        let a = http_as(
            client,
            &at,
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        assert!(
            a.starts_with("HTTP/1.1 403")
                && a.contains("admin or regulator")
                && !a.contains("ledger_"),
            "{client}: {a}"
        );
    }
    let a = http_as(
        "e2e-regulator",
        &at,
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(a.starts_with("HTTP/1.1 200 OK\r\n"), "{a}");
    let a = http(
        &at,
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(a.starts_with("HTTP/1.1 200 OK\r\n"), "{a}");
    assert!(a.contains("Content-Type: text/plain; version=0.0.4"), "{a}");
    let body = a.split("\r\n\r\n").nth(1).unwrap();
    let value = |name: &str| -> f64 {
        body.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} missing:\n{body}"))
            .parse()
            .unwrap()
    };
    // The operator's registration and the five bets.
    assert_eq!(value("ledger_accepted_events_total"), 6.0);
    assert_eq!(value("ledger_acknowledging"), 1.0);
    let head = QueryClient::new(ledger_agent::connect(&url).await.unwrap())
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(value("ledger_head_index"), head.index as f64);
    assert_eq!(value("ledger_receipt_latency_seconds_count"), 6.0);
    assert!(value("ledger_sync_latency_seconds_count") >= 1.0);
    assert!(
        body.contains("ledger_receipt_latency_seconds_bucket{le=\"+Inf\"} 6\n"),
        "{body}"
    );
    // Receipts by status and reason, the process and the build.
    assert_eq!(
        value("ledger_receipts_total{status=\"accepted\",reason=\"none\"}"),
        6.0
    );
    assert_eq!(
        value("ledger_receipts_total{status=\"rejected\",reason=\"sequence_gap\"}"),
        0.0
    );
    assert!(value("process_open_fds") > 0.0);
    assert!(value("process_resident_memory_bytes") > 0.0);
    assert!(body.contains("ledger_build_info{version=\""), "{body}");
    // HEAD: the length of the metrics, not the metrics.
    let a = http(
        &at,
        b"HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(a.starts_with("HTTP/1.1 200 OK\r\n"), "{a}");
    assert!(a.ends_with("\r\n\r\n") && !a.contains("ledger_"), "{a}");
    // OpenMetrics when the scraper asks for it.
    let a = http(
        &at,
        b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAccept: application/openmetrics-text;version=1.0.0\r\n\r\n",
    );
    assert!(
        a.contains("Content-Type: application/openmetrics-text") && a.ends_with("# EOF\n"),
        "{a}"
    );
    l.stop();
}

/// Whether /dev/shm is a tmpfs mount here (it is on Linux machines that have it).
fn dev_shm_is_tmpfs() -> bool {
    std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|t| {
        t.lines()
            .any(|l| l.split(' ').nth(4) == Some("/dev/shm") && l.contains(" - tmpfs "))
    })
}

/// `store.require_safe_filesystem`: a data directory in memory (tmpfs) is refused at startup,
/// naming the reason and the key, before anything is created in it; `--check-config` says the
/// same and exits non-zero. Without the requirement, ledgerd starts and warns.
#[test]
fn a_data_directory_in_memory_is_refused_when_a_safe_filesystem_is_required() {
    if !dev_shm_is_tmpfs() {
        eprintln!("skipped: /dev/shm is not a tmpfs on this machine");
        return;
    }
    let dir = tempdir();
    let shm = tempfile::Builder::new()
        .prefix("e2e-")
        .tempdir_in("/dev/shm")
        .unwrap();
    let data = shm.path().join("ledger");
    let strict = write_config(dir.path(), "[store]\nrequire_safe_filesystem = true\n");
    let err = match Ledgerd::try_start(&data, &strict, "127.0.0.1:0") {
        Ok(_) => panic!("ledgerd must refuse a data directory on tmpfs"),
        Err(e) => e,
    };
    assert!(
        err.contains("tmpfs") && err.contains("store.require_safe_filesystem"),
        "{err}"
    );
    assert!(
        !data.exists(),
        "nothing is created in a refused data directory"
    );

    let out = std::process::Command::new(bin("ledgerd"))
        .args(["--check-config", "--config", strict.to_str().unwrap()])
        .args(["--data-dir", data.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("data directory filesystem: tmpfs") && stdout.contains("risk: tmpfs"),
        "{stdout}"
    );

    let lenient = dir.path().join("lenient");
    std::fs::create_dir(&lenient).unwrap();
    let cfg = write_config(&lenient, "");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let said = l.stderr_text();
    l.stop();
    assert!(
        said.contains("WARN") && said.contains("tmpfs keeps files in memory"),
        "{said}"
    );
}

/// `ledgerctl bench --server` loads the ledger it is pointed at, and with `--expect-ledger-id`
/// refuses any other before registering anything there.
#[test]
fn bench_against_a_server_checks_which_ledger_it_loads() {
    let (_dir, l, opkey) = start_with_operator_key();
    let url = l.url();
    let bench = |expect: &str| {
        as_operator(
            &["bench"],
            &url,
            &opkey,
            &[
                "--events",
                "2000",
                "--streams",
                "2",
                "--expect-ledger-id",
                expect,
            ],
        )
    };
    let (code, out, err) = bench("casino-other");
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("keeps ledger \"e2e\", not \"casino-other\""),
        "{err}"
    );
    let (code, out, err) = bench("e2e");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("peak: 2000 accepted"), "{out}");
    assert!(err.contains("bench: ledger \"e2e\""), "{err}");
    // Where the machine's CPU times can be read, the run says how busy the cores were.
    if std::path::Path::new("/proc/stat").exists() {
        assert!(
            out.contains("cpu: this machine's")
                && out.contains("this process (the load generator)"),
            "{out}"
        );
    }
    // ledgerd's own figures over the run: the run's receipts (the registrations came before
    // it), and its syncs.
    assert!(out.contains("\n  ledgerd: 2000 receipts in "), "{out}");
    assert!(out.contains(" receipts a group), its CPU "), "{out}");
    assert!(out.contains(" µs a receipt ("), "{out}");
    assert!(out.contains(" syncs (flush + fsync) p50 "), "{out}");
    assert!(
        out.contains("\n  ledgerd's stages, mean / p99 ms: queued "),
        "{out}"
    );
    // The refused run registered nothing: the operator's only events are the accepted run's
    // two device registrations.
    let (code, out, err) = ledgerctl(&["device", "list", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("bench-").count(), 2, "{out}");
    // `status` gives the same figures since ledgerd started: the bench's events and their
    // registrations (and the warm-up's, if any), all accepted, each with its receipt.
    let (code, out, err) = ledgerctl(&["--json", "status", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ingest = &j["ingest_since_start"];
    let accepted = ingest["accepted"].as_u64().unwrap();
    assert!(accepted >= 2002, "{j}");
    assert_eq!(
        ingest["receipt_latency_ms"]["count"].as_u64(),
        Some(accepted),
        "{j}"
    );
    assert!(
        ingest["sync_latency_ms"]["count"].as_u64().unwrap() >= 1,
        "{j}"
    );
    assert!(ingest["groups"].as_u64().unwrap() >= 1, "{j}");
    // What an envelope cost ledgerd in CPU: some, and less than a second.
    let cpu = ingest["cpu_us_per_receipt"].as_f64().unwrap();
    assert!(cpu > 0.0 && cpu < 1e6, "{j}");
    let (code, out, err) = ledgerctl(&["status", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("{accepted} events accepted")),
        "{out}"
    );
    l.stop();
}

/// A SIGTERM sent the moment ledgerd says it is listening stops it cleanly (exit 0, after its
/// shutdown checkpoint), not by the signal's default action: its handlers are in place before
/// the line goes out.
#[test]
fn sigterm_right_after_the_ready_line_is_a_clean_stop() {
    for _ in 0..3 {
        let (_dir, l) = start();
        l.stop(); // asserts a successful exit
    }
}

/// Streams of entries are bounded over all clients: one more than `grpc.max_entry_streams` gets
/// RESOURCE_EXHAUSTED at once, and a stream closed makes room (a finished `ListEntries` gives
/// its room back as it ends). Ingest is not affected.
#[tokio::test]
async fn streams_of_entries_are_bounded() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "[grpc]\nmax_entry_streams = 2\n");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut q = QueryClient::new(ledger_agent::connect(&url).await.unwrap());
    let tail = |q: &mut QueryClient<_>| {
        let mut q = q.clone();
        async move { q.tail(v1::TailRequest { from_index: 0 }).await }
    };
    // A tail may start at the next entry at the furthest, not beyond.
    let head = q
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner()
        .index;
    for from_index in [head + 2, u64::MAX] {
        let err = q
            .tail(v1::TailRequest { from_index })
            .await
            .expect_err("beyond the next entry");
        assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err}");
        assert!(err.message().contains("from_index"), "{err}");
    }
    let first = tail(&mut q).await.expect("room for two");
    let _second = tail(&mut q).await.expect("room for two");
    let third = tail(&mut q).await.expect_err("no room for a third");
    assert_eq!(third.code(), tonic::Code::ResourceExhausted, "{third}");
    assert!(
        third.message().contains("grpc.max_entry_streams"),
        "{third}"
    );
    // Ingest goes on meanwhile.
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let r = submit(&url, &[t.sign(now_ms(), bet("T1", "r", 1))]).await;
    assert_eq!(st(&r[0]), v1::ReceiptStatus::Accepted);
    drop(first);
    let mut again = None;
    for _ in 0..50 {
        match tail(&mut q).await {
            Ok(s) => {
                again = Some(s);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    assert!(again.is_some(), "a closed stream makes room");
    l.stop();
}

/// Clients that send and never read their receipts cannot hold ledgerd's room (or its memory)
/// for ever: they hold at most `ingest.max_in_flight_total` envelopes between them, and each of
/// their streams is ended once it has left its receipts unread for `ingest.unread_receipts_secs`.
/// An honest client gets its receipts once they are ended; a silent one that reads again learns
/// why (RESOURCE_EXHAUSTED). Here 5 silent streams would hold 1,500 envelopes (300 each) against
/// a total of 1,000, so the honest stream waits for them to be ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_never_read_their_receipts_are_ended_and_the_others_go_on() {
    use ledger_core::proto::ingest_client::IngestClient;
    let dir = tempdir();
    let cfg = write_config(
        dir.path(),
        "[ingest]\nmax_in_flight_per_stream = 300\nmax_in_flight_total = 1000\nunread_receipts_secs = 2\n",
    );
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    // An envelope from a device nobody registered: refused at once, cheaply.
    let nobody = v1::Envelope {
        body: v1::EventBody {
            device_id: "nobody".into(),
            sequence: 1,
            occurred_at_ms: now_ms(),
            payload: Some(bet("t1", "r1", 1)),
        }
        .encode_to_vec(),
        signature: vec![7; 64],
    };
    // HTTP/2's smallest windows: ledgerd can send this client little before it must wait.
    let silent = ledger_agent::endpoint(&url, std::time::Duration::from_secs(5))
        .unwrap()
        .initial_stream_window_size(65_535)
        .initial_connection_window_size(65_535)
        .connect()
        .await
        .unwrap();
    let mut held = Vec::new();
    for _ in 0..5 {
        let (tx, rx) = tokio::sync::mpsc::channel::<v1::Envelope>(64);
        let receipts = IngestClient::new(silent.clone())
            .submit(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        let env = nobody.clone();
        // More than the window lets ledgerd send unread (a few hundred receipts) plus 300.
        let sender = tokio::spawn(async move {
            for _ in 0..5_000 {
                if tx.send(env.clone()).await.is_err() {
                    break;
                }
            }
            tx
        });
        held.push((receipts, sender));
    }
    // Let the silent streams fill their room.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    // An honest device on a connection of its own.
    let table = table("table-1", "t1");
    let mut signers = register(&url, 1, std::slice::from_ref(&table)).await;
    let envs: Vec<v1::Envelope> = (1..=10)
        .map(|n| signers[0].sign(now_ms(), bet("t1", "r1", n)))
        .collect();
    let receipts = tokio::time::timeout(std::time::Duration::from_secs(30), submit(&url, &envs))
        .await
        .expect("the honest stream's receipts");
    assert!(
        receipts.iter().all(|r| st(r) == St::Accepted),
        "{receipts:?}"
    );
    // Every silent stream is ended in turn (one waiting for room has nothing unread until the
    // others' room comes back).
    let ended = "its client took none of its receipts for too long";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while l.stderr_text().matches(ended).count() < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "not every silent stream was ended: {}",
            l.stderr_text()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // A silent stream that reads again: the receipts it was sent, then why it was ended. (The
    // others go first: their unread receipts fill the connection's window, which this one's
    // end needs too.)
    let (mut receipts, _sender) = held.pop().unwrap();
    drop(held);
    let end = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            match receipts.next().await {
                Some(Ok(r)) => assert_eq!(why(&r), Why::UnknownDevice),
                Some(Err(s)) => return s,
                None => panic!("the stream ended without saying why"),
            }
        }
    })
    .await
    .expect("the silent stream's end");
    assert_eq!(end.code(), tonic::Code::ResourceExhausted, "{end:?}");
    assert!(end.message().contains("unread_receipts_secs"), "{end:?}");
    l.stop();
}

/// What every standard gRPC client does with a bidirectional stream: send, half-close, read
/// until the server ends the call. It never counts receipts. The call must end with OK after
/// exactly one receipt per envelope, for an empty stream too.
async fn send_all_then_read_to_the_end(url: &str, envs: Vec<v1::Envelope>) -> Vec<v1::Receipt> {
    use ledger_core::proto::ingest_client::IngestClient;
    let ch = ledger_agent::connect(url).await.unwrap();
    let n = envs.len();
    let call = async move {
        let mut inbound = IngestClient::new(ch)
            .submit(tokio_stream::iter(envs))
            .await
            .expect("the call starts")
            .into_inner();
        let mut receipts = Vec::new();
        while let Some(r) = inbound.next().await {
            receipts.push(r.expect("no error ends the call"));
        }
        receipts
    };
    let receipts = tokio::time::timeout(std::time::Duration::from_secs(60), call)
        .await
        .expect("the call ends by itself once the client half-closed and every receipt came");
    assert_eq!(receipts.len(), n, "one receipt per envelope");
    for (i, r) in receipts.iter().enumerate() {
        assert_eq!(r.position, i as u64 + 1, "{r:?}");
    }
    receipts
}

#[tokio::test]
async fn a_client_that_half_closes_gets_its_receipts_and_ok_on_an_idle_ledger() {
    let (_dir, l) = start();
    let url = l.url();
    assert!(
        send_all_then_read_to_the_end(&url, Vec::new())
            .await
            .is_empty()
    );
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let mut envs: Vec<_> = (1..=200)
        .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
        .collect();
    // A rejected envelope at the end is answered too (a gap: sequence 1,000).
    let mut late = DeviceSigner::new(
        "table-1",
        ed25519_dalek::SigningKey::from_bytes(&[0x40; 32]),
        1_000,
    );
    envs.push(late.sign(now_ms(), bet("T1", "r", 1_000)));
    let r = send_all_then_read_to_the_end(&url, envs).await;
    assert!(r[..200].iter().all(|r| st(r) == St::Accepted), "{r:?}");
    assert_eq!(why(&r[200]), Why::SequenceGap);
    l.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_half_closes_gets_its_receipts_and_ok_under_load() {
    let (_dir, l) = start();
    let url = l.url();
    let specs: Vec<_> = (0..5)
        .map(|i| table(&format!("table-{i}"), &format!("T{i}")))
        .collect();
    let mut signers = register(&url, 1, &specs).await;
    let mut probe = signers.pop().unwrap();
    // Four devices stream 20,000 events each while the probe's calls come and go.
    let load: Vec<_> = signers
        .into_iter()
        .enumerate()
        .map(|(i, mut s)| {
            let t = format!("T{i}");
            let envs: Vec<_> = (1..=20_000)
                .map(|n| s.sign(now_ms(), bet(&t, "r", n)))
                .collect();
            let url = url.clone();
            tokio::spawn(async move { submit(&url, &envs).await })
        })
        .collect();
    let (mut calls, mut n) = (0, 0);
    while calls < 5 || !load.iter().all(|h| h.is_finished()) {
        let envs: Vec<_> = (0..500)
            .map(|_| {
                n += 1;
                probe.sign(now_ms(), bet("T4", "r", n))
            })
            .collect();
        let r = send_all_then_read_to_the_end(&url, envs).await;
        assert!(r.iter().all(|r| st(r) == St::Accepted), "{r:?}");
        calls += 1;
    }
    for h in load {
        let r = h.await.unwrap();
        assert!(r.iter().all(|r| st(r) == St::Accepted));
    }
    l.stop();
}
