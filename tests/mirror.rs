//! ledgerd as a mirror of another ledger (`[mirror]`), against real ledgerds over real TLS: it
//! follows under ingest, its live audit's digest equals the source's, it refuses ingest and
//! checkpoints, it resumes after restarts of either side without a gap or a duplicate, and a
//! source whose history was rewritten raises an alarm while nothing of the rewrite is stored.

#[path = "support/play.rs"]
mod play;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use casino_play::sim;
use e2e::*;
use ledger_agent::DeviceSigner;
use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, ingest_client::IngestClient,
    mirror_client::MirrorClient, query_client::QueryClient, replication_client::ReplicationClient,
};

/// A mirror's configuration: its source, the source's identity, and a regulator's certificate
/// at the source.
fn mirror_config(dir: &Path, src: &Ledgerd) -> PathBuf {
    let p = pki();
    write_config(
        dir,
        &format!(
            "[mirror]\nsource = \"{}\"\nsource_ledger_id = \"e2e\"\nsource_ledger_key = \"{}\"\ntls_ca = {:?}\ntls_cert = {:?}\ntls_key = {:?}\npoll_ms = 100\n",
            src.url(),
            src.ledger_key,
            p.ca(),
            p.cert("e2e-regulator"),
            p.key("e2e-regulator"),
        ),
    )
}

async fn head(url: &str) -> v1::Head {
    let ch = ledger_agent::connect(url).await.expect("connect");
    QueryClient::new(ch)
        .get_head(v1::GetHeadRequest {})
        .await
        .expect("GetHead")
        .into_inner()
}

/// Every entry, in order.
async fn entries(url: &str) -> Vec<v1::ChainEntry> {
    let ch = ledger_agent::connect(url).await.expect("connect");
    let mut s = QueryClient::new(ch)
        .max_decoding_message_size(64 << 20)
        .list_entries(v1::ListEntriesRequest {
            from_index: 0,
            to_index: u64::MAX,
        })
        .await
        .expect("ListEntries")
        .into_inner();
    let mut out = Vec::new();
    while let Some(e) = s.message().await.expect("an entry") {
        out.push(e);
    }
    out
}

async fn latest_checkpoint(url: &str) -> v1::Checkpoint {
    let ch = ledger_agent::connect(url).await.expect("connect");
    CheckpointsClient::new(ch)
        .get_latest(v1::GetCheckpointRequest { cosigned: false })
        .await
        .expect("GetLatest")
        .into_inner()
}

async fn mirror_status(url: &str) -> v1::MirrorStatus {
    let ch = ledger_agent::connect(url).await.expect("connect");
    MirrorClient::new(ch)
        .get_status(v1::GetMirrorStatusRequest {})
        .await
        .expect("Mirror.GetStatus")
        .into_inner()
}

async fn alarms(url: &str) -> Vec<v1::MirrorAlarm> {
    let ch = ledger_agent::connect(url).await.expect("connect");
    MirrorClient::new(ch)
        .list_alarms(v1::ListMirrorAlarmsRequest {})
        .await
        .expect("Mirror.ListAlarms")
        .into_inner()
        .alarms
}

/// Wait until the mirror holds the source's head (and its latest checkpoint).
async fn wait_synced(src: &str, mirror: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (a, b) = (head(src).await, head(mirror).await);
        if a.index == b.index && a.entry_hash == b.entry_hash {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the mirror did not catch up: source at {}, mirror at {}",
            a.index,
            b.index
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `n` bets of `dev` on table t1, numbered from `from`.
fn bets(dev: &mut DeviceSigner, from: u64, n: u64) -> Vec<v1::Envelope> {
    (from..from + n)
        .map(|k| dev.sign(now_ms(), bet("t1", &format!("r{}", k / 10), k)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_mirrors_follow_two_sources_under_ingest_and_audit_alike() {
    let t0 = Instant::now();
    let mut dirs = Vec::new();
    let mut pairs = Vec::new();
    let mut sessions = Vec::new();
    for seed in [7u64, 8] {
        let dir = tempdir();
        let src = Ledgerd::start(
            &dir.path().join("src"),
            &write_config(
                &{
                    let d = dir.path().join("src-cfg");
                    std::fs::create_dir_all(&d).unwrap();
                    d
                },
                "",
            ),
            "127.0.0.1:0",
        );
        let mdir = dir.path().join("mirror-cfg");
        std::fs::create_dir_all(&mdir).unwrap();
        let mirror = Ledgerd::start(
            &dir.path().join("mirror"),
            &mirror_config(&mdir, &src),
            "127.0.0.1:0",
        );
        assert_eq!(mirror.ledger_key, src.ledger_key);
        let plan = sim::standard_plan(seed, 0, 12, true, play::OPERATOR, "inspectorate");
        let session = sim::generate(&plan).expect("generate");
        sessions.push(play::sign(&session, seed));
        pairs.push((src, mirror));
        dirs.push(dir);
    }
    // Both sessions streamed at once, each into its source, while the mirrors follow; a
    // checkpoint on each source midway.
    let mut tasks = Vec::new();
    for ((src, _), signed) in pairs.iter().zip(&sessions) {
        let (url, signed) = (src.url(), signed.clone());
        tasks.push(tokio::spawn(async move {
            play::register_and_open(&url, &signed).await;
            let (code, out, err) = ledgerctl(&["checkpoint", "--server", &url]);
            assert_eq!(code, 0, "{out}{err}");
            play::stream(&url, &signed, &play::patient()).await;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    for (src, mirror) in &pairs {
        let (code, out, err) = ledgerctl(&["checkpoint", "--server", &src.url()]);
        assert_eq!(code, 0, "{out}{err}");
        wait_synced(&src.url(), &mirror.url()).await;
        // The source's latest checkpoint reaches the mirror, checked against its entries.
        let want = latest_checkpoint(&src.url()).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        while latest_checkpoint(&mirror.url()).await != want {
            assert!(
                Instant::now() < deadline,
                "the checkpoint did not reach the mirror"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(entries(&mirror.url()).await, entries(&src.url()).await);
        // The mirror's own live audit finds what the source's finds.
        let a = play::wait_caught_up(&src.url(), Duration::from_secs(120)).await;
        let b = play::wait_caught_up(&mirror.url(), Duration::from_secs(120)).await;
        assert!(a.findings > 0, "the session has injected mistakes");
        assert_eq!(
            (b.findings, &b.findings_digest, b.rounds),
            (a.findings, &a.findings_digest, a.rounds)
        );
        let s = mirror_status(&mirror.url()).await;
        assert!(!s.halted && s.alarms == 0, "{s:?}");
        assert_eq!(s.mirrored_entries, head(&src.url()).await.length);
        assert!(s.checkpoints >= 2, "{s:?}");
    }
    // Read-only: ingest and checkpoint requests are refused, saying why.
    let (src, mirror) = &pairs[0];
    let ch = ledger_agent::connect(&mirror.url()).await.expect("connect");
    let mut op = DeviceSigner::new("operator-1", operator_key(), 1_000_000);
    let env = op.sign(now_ms(), bet("t1", "r", 1));
    let mut receipts = IngestClient::new(ch.clone())
        .submit(tokio_stream::iter(vec![env]))
        .await
        .expect("the stream opens")
        .into_inner();
    let e = receipts.message().await.expect_err("refused");
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("read-only mirror of"), "{e:?}");
    let e = CheckpointsClient::new(ch)
        .create(v1::CreateCheckpointRequest {})
        .await
        .expect_err("refused");
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    let (code, out, err) = ledgerctl(&["--json", "mirror", "status", "--server", &mirror.url()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["halted"], false, "{v}");
    assert_eq!(v["mirrored_entries"], head(&src.url()).await.length, "{v}");
    let (_, out, _) = ledgerctl(&["mirror", "alarms", "--server", &mirror.url()]);
    assert_eq!(out.trim(), "no alarms");
    // Only regulators and admins read a mirror's state (`access::RULES`): every other client
    // is refused.
    for (client, role, _) in CLIENTS {
        for what in ["status", "alarms"] {
            let (code, out, err) =
                ledgerctl_as(client, &["mirror", what, "--server", &mirror.url()]);
            if ["regulator", "admin"].contains(role) {
                assert_eq!(code, 0, "{client} {what}: {out}{err}");
            } else {
                assert_ne!(code, 0, "{client} {what}: {out}");
                assert!(err.contains("needs the role"), "{client} {what}: {err}");
            }
        }
    }
    // Stopped, each mirror's store verifies offline against its source's key.
    let n = head(&src.url()).await.length;
    for (src, mirror) in pairs {
        let (key, data) = (src.ledger_key.clone(), mirror.data_dir.clone());
        mirror.stop();
        src.stop();
        let (code, out, err) = ledgerctl(&[
            "verify",
            "--data-dir",
            data.to_str().unwrap(),
            "--ledger-key",
            &key,
        ]);
        assert_eq!(code, 0, "{out}{err}");
    }
    eprintln!(
        "two sources, two mirrors, {n} entries in the first; {:.1} s",
        t0.elapsed().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_of_either_side_neither_skip_nor_duplicate() {
    let dir = tempdir();
    let scfg = {
        let d = dir.path().join("src-cfg");
        std::fs::create_dir_all(&d).unwrap();
        write_config(&d, "")
    };
    let sdata = dir.path().join("src");
    let src = Ledgerd::start(&sdata, &scfg, "127.0.0.1:0");
    let addr = src.addr.clone();
    let mcfg = {
        let d = dir.path().join("mirror-cfg");
        std::fs::create_dir_all(&d).unwrap();
        mirror_config(&d, &src)
    };
    let mdata = dir.path().join("mirror");
    let mut devs = register(&src.url(), 1, &[table("table-1", "t1")]).await;
    let dev = &mut devs[0];
    submit(&src.url(), &bets(dev, 0, 200)).await;
    let mirror = Ledgerd::start(&mdata, &mcfg, "127.0.0.1:0");
    wait_synced(&src.url(), &mirror.url()).await;

    // The mirror stops; the source goes on; the mirror resumes from its own head.
    mirror.stop();
    submit(&src.url(), &bets(dev, 200, 200)).await;
    let mirror = Ledgerd::start(&mdata, &mcfg, "127.0.0.1:0");
    wait_synced(&src.url(), &mirror.url()).await;

    // The source stops: the mirror keeps serving what it holds, then follows the source again.
    let held = head(&src.url()).await;
    src.stop();
    assert_eq!(head(&mirror.url()).await.entry_hash, held.entry_hash);
    let src = Ledgerd::start(&sdata, &scfg, &addr);
    submit(&src.url(), &bets(dev, 400, 200)).await;
    wait_synced(&src.url(), &mirror.url()).await;

    // The mirror is killed while the source takes a stream of events, and started again.
    let url = src.url();
    let batch = bets(dev, 600, 3000);
    let ingest = tokio::spawn(async move { submit(&url, &batch).await });
    let deadline = Instant::now() + Duration::from_secs(60);
    while head(&mirror.url()).await.index < held.index + 300 {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    mirror.kill9();
    ingest.await.unwrap();
    let mirror = Ledgerd::start(&mdata, &mcfg, "127.0.0.1:0");
    wait_synced(&src.url(), &mirror.url()).await;
    assert_eq!(entries(&mirror.url()).await, entries(&src.url()).await);
    let s = mirror_status(&mirror.url()).await;
    assert!(s.alarms == 0 && !s.halted, "{s:?}");
    let key = src.ledger_key.clone();
    mirror.stop();
    src.stop();
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--data-dir",
        mdata.to_str().unwrap(),
        "--ledger-key",
        &key,
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewritten_source_raises_the_alarm_and_nothing_of_it_is_stored() {
    let dir = tempdir();
    let scfg = {
        let d = dir.path().join("src-cfg");
        std::fs::create_dir_all(&d).unwrap();
        write_config(&d, "")
    };
    let (a_data, b_data) = (dir.path().join("a"), dir.path().join("b"));
    let src = Ledgerd::start(&a_data, &scfg, "127.0.0.1:0");
    let addr = src.addr.clone();
    let mut devs = register(&src.url(), 1, &[table("table-1", "t1")]).await;
    let mut dev = devs.remove(0);
    submit(&src.url(), &bets(&mut dev, 0, 50)).await;
    src.stop();
    // A fork of the ledger as it is now: same key, same history so far.
    copy_dir(&a_data, &b_data);
    // The same device key as `register` gave table-1, at the fork's next sequence.
    let mut fork_dev = DeviceSigner::new(
        "table-1",
        ed25519_dalek::SigningKey::from_bytes(&[0x40; 32]),
        51,
    );

    let src = Ledgerd::start(&a_data, &scfg, &addr);
    submit(&src.url(), &bets(&mut dev, 50, 50)).await;
    let mcfg = {
        let d = dir.path().join("mirror-cfg");
        std::fs::create_dir_all(&d).unwrap();
        mirror_config(&d, &src)
    };
    let mirror = Ledgerd::start(&dir.path().join("mirror"), &mcfg, "127.0.0.1:0");
    wait_synced(&src.url(), &mirror.url()).await;
    let held = entries(&src.url()).await;
    src.stop();

    // The fork, on the same address, with other events after the fork point: a rewritten history.
    let forged = Ledgerd::start(&b_data, &scfg, &addr);
    submit(&forged.url(), &bets(&mut fork_dev, 5000, 120)).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let found = loop {
        let a = alarms(&mirror.url()).await;
        if !a.is_empty() {
            break a;
        }
        assert!(Instant::now() < deadline, "no alarm was raised");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(found[0].kind, "history_rewritten", "{found:?}");
    assert!(
        found[0].has_index && found[0].index == held.len() as u64 - 1,
        "{found:?}"
    );
    // Nothing of the forged history was stored; the mirror serves what it verified.
    assert_eq!(entries(&mirror.url()).await, held);
    let s = mirror_status(&mirror.url()).await;
    assert!(s.halted && s.alarms == 1, "{s:?}");
    let (code, out, err) = ledgerctl(&["mirror", "alarms", "--server", &mirror.url()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("history_rewritten"), "{out}");
    // Retrying does not record the same alarm again, and still stores nothing of the fork.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(alarms(&mirror.url()).await.len(), 1);
    assert_eq!(entries(&mirror.url()).await, held);
    forged.stop();
    mirror.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_source_is_restored_from_its_mirror_and_both_carry_on() {
    let dir = tempdir();
    let scfg = {
        let d = dir.path().join("src-cfg");
        std::fs::create_dir_all(&d).unwrap();
        write_config(&d, "")
    };
    let sdata = dir.path().join("src");
    let src = Ledgerd::start(&sdata, &scfg, "127.0.0.1:0");
    let addr = src.addr.clone();
    let mcfg = {
        let d = dir.path().join("mirror-cfg");
        std::fs::create_dir_all(&d).unwrap();
        mirror_config(&d, &src)
    };
    let mirror = Ledgerd::start(&dir.path().join("mirror"), &mcfg, "127.0.0.1:0");
    let mut devs = register(&src.url(), 1, &[table("table-1", "t1")]).await;
    let dev = &mut devs[0];
    let mut receipts = submit(&src.url(), &bets(dev, 0, 300)).await;
    // A marked event, then more.
    let marked = dev.sign(
        now_ms(),
        v1::event_body::Payload::BetPlaced(v1::BetPlaced {
            table_id: "t1".into(),
            round_id: "r-marked".into(),
            bet_id: "MARKER-RESTORE".into(),
            bet_type: "straight".into(),
            selection: vec![7],
            amount_cents: 100,
            ..Default::default()
        }),
    );
    receipts.extend(submit(&src.url(), &[marked]).await);
    receipts.extend(submit(&src.url(), &bets(dev, 301, 300)).await);
    wait_synced(&src.url(), &mirror.url()).await;
    let restore = |data: &Path| {
        let p = pki();
        std::process::Command::new(bin("ledgerd"))
            .args(["restore", "--from", &mirror.url(), "--config"])
            .arg(&scfg)
            .arg("--data-dir")
            .arg(data)
            .arg("--tls-ca")
            .arg(p.ca())
            .arg("--tls-cert")
            .arg(p.cert("e2e-regulator"))
            .arg("--tls-key")
            .arg(p.key("e2e-regulator"))
            .env("RUST_LOG", "warn")
            .output()
            .unwrap()
    };
    // Never from under a running ledger.
    let out = restore(&sdata);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("in use"),
        "{out:?}"
    );
    assert!(sdata.join("db").exists());
    src.stop();
    // The source's store is damaged: a byte of the marked event flipped wherever sled wrote it.
    let db = sdata.join("db");
    let mut bytes = std::fs::read(&db).unwrap();
    let needle = b"MARKER-RESTORE";
    let mut hits = 0;
    for i in 0..bytes.len().saturating_sub(needle.len()) {
        if &bytes[i..i + needle.len()] == needle {
            bytes[i + needle.len() - 1] ^= 1;
            hits += 1;
        }
    }
    assert!(hits > 0);
    std::fs::write(&db, &bytes).unwrap();
    assert!(
        Ledgerd::try_start(&sdata, &scfg, &addr).is_err(),
        "the damage is refused"
    );

    // Restored from the mirror (which keeps running), verified as it is copied.
    let out = restore(&sdata);
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("restored") && said.contains(".damaged-"),
        "{said}"
    );

    // The source carries on with its own key and history: every acknowledged entry is back.
    let src = Ledgerd::start(&sdata, &scfg, &addr);
    let ch = ledger_agent::connect(&src.url()).await.unwrap();
    for r in &receipts {
        assert_eq!(st(r), v1::ReceiptStatus::Accepted);
        let e = QueryClient::new(ch.clone())
            .get_entry(v1::GetEntryRequest { index: r.index })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(e.entry_hash, r.entry_hash, "entry {}", r.index);
    }
    // Ingest resumes where the device left off, and the mirror follows the restored source.
    let more = submit(&src.url(), &bets(dev, 601, 50)).await;
    assert!(more.iter().all(|r| st(r) == v1::ReceiptStatus::Accepted));
    let (code, out, err) = ledgerctl(&["checkpoint", "--server", &src.url()]);
    assert_eq!(code, 0, "{out}{err}");
    wait_synced(&src.url(), &mirror.url()).await;
    let s = mirror_status(&mirror.url()).await;
    assert!(s.alarms == 0 && !s.halted, "{s:?}");
    let key = src.ledger_key.clone();
    src.stop();
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--data-dir",
        sdata.to_str().unwrap(),
        "--ledger-key",
        &key,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    mirror.stop();
}

/// `n` bets on one stream, with a deadline for all their receipts: `None` if it passed.
async fn submit_within(url: &str, envs: &[v1::Envelope], secs: u64) -> Option<Vec<v1::Receipt>> {
    let ch = ledger_agent::connect(url).await.expect("connect");
    let mut receipts = IngestClient::new(ch)
        .submit(tokio_stream::iter(envs.to_vec()))
        .await
        .expect("the stream opens")
        .into_inner();
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while out.len() < envs.len() {
        match tokio::time::timeout_at(deadline, receipts.message()).await {
            Ok(r) => out.push(r.expect("a receipt").expect("a receipt")),
            Err(_) => return None,
        }
    }
    Some(out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_one_required_mirror_a_receipt_means_the_mirror_holds_the_event() {
    let dir = tempdir();
    let scfg = {
        let d = dir.path().join("src-cfg");
        std::fs::create_dir_all(&d).unwrap();
        write_config(
            &d,
            "[replication]\nrequired_mirrors = 1\nmirrors = [\"e2e-regulator\"]\non_lag = \"wait\"\n",
        )
    };
    let src = Ledgerd::start(&dir.path().join("src"), &scfg, "127.0.0.1:0");
    let mcfg = {
        let d = dir.path().join("mirror-cfg");
        std::fs::create_dir_all(&d).unwrap();
        mirror_config(&d, &src)
    };
    let mdata = dir.path().join("mirror");
    let mirror = Ledgerd::start(&mdata, &mcfg, "127.0.0.1:0");
    let mut devs = register(&src.url(), 1, &[table("table-1", "t1")]).await;
    let dev = &mut devs[0];
    // Each receipt, as it arrives: the mirror already holds its entry.
    let ch = ledger_agent::connect(&src.url()).await.unwrap();
    let envs = bets(dev, 0, 100);
    let mut receipts = IngestClient::new(ch)
        .submit(tokio_stream::iter(envs))
        .await
        .unwrap()
        .into_inner();
    for _ in 0..100 {
        let r = receipts.message().await.unwrap().expect("a receipt");
        assert_eq!(st(&r), v1::ReceiptStatus::Accepted);
        assert!(
            head(&mirror.url()).await.index >= r.index,
            "receipt for entry {} before the mirror held it",
            r.index
        );
    }
    // The mirror stops: with on_lag = "wait", no receipt until it is back and holds the events.
    mirror.stop();
    let waiting = bets(dev, 100, 20);
    let url = src.url();
    let pending = tokio::spawn(async move { submit_within(&url, &waiting, 120).await });
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !pending.is_finished(),
        "a receipt came while no mirror held the events"
    );
    let mirror = Ledgerd::start(&mdata, &mcfg, "127.0.0.1:0");
    let got = pending
        .await
        .unwrap()
        .expect("the receipts once the mirror is back");
    let last = got.last().unwrap();
    assert!(head(&mirror.url()).await.index >= last.index);
    // Only mirrors (regulators at the source) report: other roles are refused.
    let p = pki();
    for client in ["e2e-admin", "e2e-operator", "e2e-device"] {
        let tls = ledger_agent::tls::ClientTls::from_files(
            &p.ca(),
            Some(&p.cert(client)),
            Some(&p.key(client)),
        )
        .unwrap();
        let ch = tonic::transport::Endpoint::from_shared(src.url())
            .unwrap()
            .tls_config(tls.config())
            .unwrap()
            .connect()
            .await
            .unwrap();
        let report = v1::DurableReport {
            entries: 1_000_000,
            head_hash: vec![0; 32],
        };
        let e = ReplicationClient::new(ch)
            .report_durable(tokio_stream::iter(vec![report]))
            .await
            .expect_err("refused");
        assert_eq!(e.code(), tonic::Code::PermissionDenied, "{client}: {e:?}");
    }
    mirror.stop();
    src.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_on_lag_degrade_a_missing_mirror_delays_receipts_then_they_go_local_only() {
    let dir = tempdir();
    let cfg = write_config(
        dir.path(),
        "[replication]\nrequired_mirrors = 1\nmirrors = [\"e2e-regulator\"]\non_lag = \"degrade\"\ntimeout_ms = 500\n",
    );
    let src = Ledgerd::start(&dir.path().join("src"), &cfg, "127.0.0.1:0");
    let t = Instant::now();
    let mut devs = register(&src.url(), 1, &[table("table-1", "t1")]).await;
    assert!(
        t.elapsed() >= Duration::from_millis(500),
        "the first group waited for its mirror"
    );
    let got = submit_within(&src.url(), &bets(&mut devs[0], 0, 50), 30).await;
    assert!(got.is_some(), "local-only receipts once degraded");
    assert!(
        src.stderr_text().contains("replication alarm"),
        "{}",
        src.stderr_text()
    );
    src.stop();
}

/// A full disk is reported as a full disk, by ledgerd at startup and by `verify`, never as a
/// corrupt store; with room again both work. Needs root for a small tmpfs (skipped otherwise).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_reported_as_full_not_as_corruption() {
    let dir = tempdir();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=32m", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIPPED: cannot mount a tmpfs (needs root)");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let cfg = write_config(dir.path(), "");
    let data = mnt.join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let mut devs = register(&l.url(), 1, &[table("table-1", "t1")]).await;
    submit(&l.url(), &bets(&mut devs[0], 0, 100)).await;
    l.stop();
    // Fill the disk to the last byte.
    let filler = mnt.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let block = vec![0u8; 1 << 20];
    loop {
        if std::io::Write::write_all(&mut f, &block).is_err() {
            break;
        }
    }
    while std::io::Write::write_all(&mut f, &[0]).is_ok() {}
    drop(f);
    let said = Ledgerd::try_start(&data, &cfg, "127.0.0.1:0")
        .err()
        .expect("ledgerd cannot start on a full disk");
    assert!(said.contains("is full"), "{said}");
    assert!(!said.contains("corrupt"), "{said}");
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("is full"), "{err}");
    assert!(!err.contains("corrupt"), "{err}");
    // Room again: nothing was damaged.
    std::fs::remove_file(&filler).unwrap();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    submit(&l.url(), &bets(&mut devs[0], 100, 10)).await;
    l.stop();
}

/// The source comes back, after a crash, as a copy of itself taken before its last checkpoint:
/// the same entries, but a checkpoint of the same number signed again at another time. Two
/// different checkpoints #n signed by the ledger: the mirror raises the alarm at reconnect,
/// keeps the checkpoint it held, and stores nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_contradicting_the_one_held_raises_the_alarm_at_reconnect() {
    let dir = tempdir();
    let scfg = {
        let d = dir.path().join("src-cfg");
        std::fs::create_dir_all(&d).unwrap();
        write_config(&d, "")
    };
    let (a_data, b_data) = (dir.path().join("a"), dir.path().join("b"));
    let src = Ledgerd::start(&a_data, &scfg, "127.0.0.1:0");
    let addr = src.addr.clone();
    let mut dev = register(&src.url(), 1, &[table("table-1", "t1")])
        .await
        .remove(0);
    submit(&src.url(), &bets(&mut dev, 0, 40)).await;
    // No shutdown checkpoint: the entries after the last one are covered by none yet.
    src.kill9();
    copy_dir(&a_data, &b_data);

    // Back up: its startup checkpoint covers them; the mirror copies all of it.
    let src = Ledgerd::start(&a_data, &scfg, &addr);
    let mcfg = {
        let d = dir.path().join("mirror-cfg");
        std::fs::create_dir_all(&d).unwrap();
        mirror_config(&d, &src)
    };
    let mirror = Ledgerd::start(&dir.path().join("mirror"), &mcfg, "127.0.0.1:0");
    wait_synced(&src.url(), &mirror.url()).await;
    // The checkpoint comes after the entries it covers: wait until the mirror holds it too.
    let theirs = latest_checkpoint(&src.url()).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let held_cp = loop {
        let ch = ledger_agent::connect(&mirror.url()).await.expect("connect");
        let cp = CheckpointsClient::new(ch)
            .get_latest(v1::GetCheckpointRequest { cosigned: false })
            .await;
        if let Ok(cp) = cp
            && cp.get_ref() == &theirs
        {
            break cp.into_inner();
        }
        assert!(
            Instant::now() < deadline,
            "the mirror never held the checkpoint"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let held = entries(&mirror.url()).await;
    src.kill9();

    // The copy from before that checkpoint, on the same address: its own startup checkpoint has
    // the same number and covers the same entry, signed at another time.
    std::thread::sleep(Duration::from_millis(20));
    let copy = Ledgerd::start(&b_data, &scfg, &addr);
    let theirs = latest_checkpoint(&copy.url()).await;
    assert_ne!(theirs, held_cp);
    let deadline = Instant::now() + Duration::from_secs(60);
    let found = loop {
        let a = alarms(&mirror.url()).await;
        if !a.is_empty() {
            break a;
        }
        assert!(
            Instant::now() < deadline,
            "no alarm was raised: {}",
            mirror.stderr_text()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(found[0].kind, "checkpoint_contradicts", "{found:?}");
    assert!(
        found[0].detail.contains("is not the one the mirror holds"),
        "{found:?}"
    );
    // The copy takes new events; the halted mirror stores none of them and keeps its checkpoint.
    submit(&copy.url(), &bets(&mut dev, 40, 10)).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(entries(&mirror.url()).await, held);
    assert_eq!(latest_checkpoint(&mirror.url()).await, held_cp);
    let s = mirror_status(&mirror.url()).await;
    assert!(s.halted && s.alarms == 1, "{s:?}");
    copy.stop();
    mirror.stop();
}
