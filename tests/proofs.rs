//! End-to-end: the Merkle tree over the chain, against the real ledgerd over TLS. Checkpoints
//! carry a C2SP note; `ledgerctl prove` writes inclusion and consistency proofs that
//! `ledgerctl verify-proof` checks offline with the ledger's key alone, and refuses once
//! tampered; who may ask for which proof; `verify` checks every tree head against the entries.

use e2e::*;
use ledger_core::proto::{self as v1, proofs_client::ProofsClient};
use tonic::Code;

fn json_of(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn proofs_are_written_checked_offline_and_refused_when_tampered() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "[checkpoint]\ninterval_secs = 0\n");
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let envs: Vec<_> = (1..=300)
        .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
        .collect();
    let r = submit(&url, &envs).await;
    assert!(r.iter().all(|r| st(r) == v1::ReceiptStatus::Accepted));
    let (code, out, err) = ledgerctl_as("e2e-admin", &["checkpoint", "--server", &url, "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let cp: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let note = cp["note"].as_str().expect("a C2SP note");
    assert!(note.starts_with("casino-ledger/e2e\n"), "{note}");
    let size = cp["tree_size"].as_u64().unwrap();
    assert_eq!(size, cp["index"].as_u64().unwrap() + 1);

    // An entry by index and by device and sequence; both verify offline.
    let p1 = dir.path().join("p1.json");
    let p2 = dir.path().join("p2.json");
    let seq_index = r[41].index;
    for (args, file) in [
        (vec!["--index", "7"], &p1),
        (vec!["--device", "table-1", "--seq", "42"], &p2),
    ] {
        let mut a = vec![
            "prove",
            "entry",
            "--server",
            &url,
            "--out",
            file.to_str().unwrap(),
        ];
        a.extend(args);
        let (code, out, err) = ledgerctl_as("e2e-compliance", &a);
        assert_eq!(code, 0, "{out}{err}");
    }
    assert_eq!(json_of(&p2)["index"].as_u64(), Some(seq_index));
    for f in [&p1, &p2] {
        let (code, out, err) = ledgerctl(&[
            "verify-proof",
            f.to_str().unwrap(),
            "--ledger-key",
            &l.ledger_key,
            "--ledger-id",
            "e2e",
        ]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.starts_with("OK: entry "), "{out}");
    }
    let (_, out, _) = ledgerctl(&[
        "verify-proof",
        p2.to_str().unwrap(),
        "--ledger-key",
        &l.ledger_key,
    ]);
    assert!(out.contains("table-1 #42 bet_placed"), "{out}");

    // Each kind of tampering is refused with its reason.
    let original = json_of(&p2);
    let stranger = ledger_core::ed25519_dalek::SigningKey::from_bytes(&[9; 32]);
    let tampered = |name: &str, f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = original.clone();
        f(&mut v);
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, v.to_string()).unwrap();
        path
    };
    let flip_hash = |v: &mut serde_json::Value| {
        let h = v["hashes"][0].as_str().unwrap().to_string();
        let c = if h.starts_with('A') { "B" } else { "A" };
        v["hashes"][0] = serde_json::Value::String(format!("{c}{}", &h[1..]));
    };
    let change_entry = |v: &mut serde_json::Value| {
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut bytes = b64.decode(v["entry"].as_str().unwrap()).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        v["entry"] = serde_json::Value::String(b64.encode(bytes));
    };
    let other_size = |v: &mut serde_json::Value| {
        v["tree_size"] = serde_json::json!(v["tree_size"].as_u64().unwrap() - 1);
    };
    let edit_note = |v: &mut serde_json::Value| {
        let n = v["checkpoint"].as_str().unwrap().replacen(
            &format!("\n{size}\n"),
            &format!("\n{}\n", size + 1),
            1,
        );
        v["checkpoint"] = serde_json::Value::String(n);
    };
    for (name, f, why) in [
        (
            "hash",
            &flip_hash as &dyn Fn(&mut serde_json::Value),
            "does not hold",
        ),
        ("entry", &change_entry, ""),
        ("size", &other_size, "tree of"),
        ("note", &edit_note, "not signed by the ledger key"),
    ] {
        let path = tampered(name, f);
        let (code, out, err) = ledgerctl(&[
            "verify-proof",
            path.to_str().unwrap(),
            "--ledger-key",
            &l.ledger_key,
        ]);
        assert_eq!(code, 1, "{name}: {out}{err}");
        assert!(err.contains(why), "{name}: {err}");
    }
    // Another ledger's key, or another ledger's id.
    let other_key = hex::encode(stranger.verifying_key().as_bytes());
    let (code, _, err) = ledgerctl(&[
        "verify-proof",
        p1.to_str().unwrap(),
        "--ledger-key",
        &other_key,
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("not signed by the ledger key"), "{err}");
    let (code, _, err) = ledgerctl(&[
        "verify-proof",
        p1.to_str().unwrap(),
        "--ledger-key",
        &l.ledger_key,
        "--ledger-id",
        "porto",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("not \"casino-ledger/porto\""), "{err}");

    // The ledger grows; a consistency proof from the checkpoint held in p1 to the newest.
    let envs: Vec<_> = (301..=700)
        .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
        .collect();
    submit(&url, &envs).await;
    let (code, out, err) = ledgerctl_as("e2e-admin", &["checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    let pc = dir.path().join("consistency.json");
    let (code, out, err) = ledgerctl_as(
        "e2e-compliance",
        &[
            "prove",
            "consistency",
            "--server",
            &url,
            "--from-note",
            p1.to_str().unwrap(),
            "--out",
            pc.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let v = json_of(&pc);
    assert_eq!(v["from_size"].as_u64(), Some(size));
    assert!(v["to_size"].as_u64().unwrap() >= size + 400);
    let (code, out, err) = ledgerctl(&[
        "verify-proof",
        pc.to_str().unwrap(),
        "--ledger-key",
        &l.ledger_key,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("append only"), "{out}");
    let mut bad = v.clone();
    let h = bad["hashes"][0].as_str().unwrap().to_string();
    bad["hashes"][0] = serde_json::Value::String(format!(
        "{}{}",
        if h.starts_with('A') { "B" } else { "A" },
        &h[1..]
    ));
    let badp = dir.path().join("bad-consistency.json");
    std::fs::write(&badp, bad.to_string()).unwrap();
    let (code, _, err) = ledgerctl(&[
        "verify-proof",
        badp.to_str().unwrap(),
        "--ledger-key",
        &l.ledger_key,
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("history was rewritten"), "{err}");

    // Who may ask: a device may not; a compliance principal of another casino learns nothing
    // of this casino's entry (the answer for an entry that does not exist); consistency proofs
    // are hashes, for every principal but a device.
    let req = || v1::InclusionProofRequest {
        entry: Some(v1::inclusion_proof_request::Entry::Index(7)),
        tree_size: 0,
    };
    let as_client = |c: &str| {
        let tls = pki().identity(c);
        let url = url.clone();
        async move {
            let ch = tonic::transport::Endpoint::from_shared(url)
                .unwrap()
                .tls_config(tls.config())
                .unwrap()
                .connect()
                .await
                .unwrap();
            ProofsClient::new(ch)
        }
    };
    let e = as_client("e2e-device")
        .await
        .get_inclusion_proof(req())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let e = as_client("lisboa-compliance")
        .await
        .get_inclusion_proof(req())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    let mut absent = req();
    absent.entry = Some(v1::inclusion_proof_request::Entry::Index(1_000_000));
    let e = as_client("e2e-regulator")
        .await
        .get_inclusion_proof(absent)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    let ok = as_client("lisboa-compliance")
        .await
        .get_consistency_proof(v1::ConsistencyProofRequest {
            from_size: size,
            to_size: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!ok.hashes.is_empty());

    // After a stop, verify reads the store and matches every tree head with the entries.
    l.stop();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let s: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert!(s["tree_checkpoints"].as_u64().unwrap() >= 2, "{s}");
    assert_eq!(s["tree_root"].as_str().unwrap().len(), 64);
}

/// ledgerctl holds the newest checkpoint it verified and trusts a newer one only with a
/// consistency proof from it: a growing ledger passes; a fork of it (a copy of its data
/// directory, its key included, that took other events: what an insider holding the key could
/// show) is caught; `device entries --verified` proves each entry it shows.
#[tokio::test]
async fn verified_reads_follow_the_ledger_and_catch_a_fork() {
    let dir = tempdir();
    let state = dir.path().join("state");
    let cfg = write_config(dir.path(), "[checkpoint]\ninterval_secs = 0\n");
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    submit(
        &url,
        &(1..=50)
            .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
            .collect::<Vec<_>>(),
    )
    .await;
    let checkpoint = |url: &str| {
        let out = std::process::Command::new(bin("ledgerctl"))
            .args(["checkpoint", "--server", url])
            .envs(tls_env("e2e-admin"))
            .env("LEDGER_STATE_DIR", &state)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, out) = checkpoint(&url);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("first contact"), "{out}");
    // Stop, keep a copy of the ledger as it is, go on with the original.
    l.stop();
    let fork = dir.path().join("fork");
    copy_dir(&data, &fork);
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    submit(
        &url,
        &(51..=120)
            .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
            .collect::<Vec<_>>(),
    )
    .await;
    let (code, out) = checkpoint(&url);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("proven to extend the tree of"), "{out}");

    // Each entry shown is proven in the checkpoint just held.
    let out = std::process::Command::new(bin("ledgerctl"))
        .args([
            "device",
            "entries",
            "--server",
            &url,
            "--device-id",
            "table-1",
            "--verified",
            "--json",
        ])
        .envs(tls_env("e2e-compliance"))
        .env("LEDGER_STATE_DIR", &state)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 120);
    assert!(
        lines
            .iter()
            .all(|l| l["proven"] == serde_json::Value::Bool(true))
    );
    l.stop();

    // The fork: same key, same name, other events after the copy, more entries than held.
    let f = Ledgerd::start(&fork, &cfg, "127.0.0.1:0");
    let furl = f.url();
    let mut t2 = ledger_agent::DeviceSigner::new("table-1", t.key().clone(), 51);
    submit(
        &furl,
        &(51..=200)
            .map(|n| t2.sign(now_ms(), bet("T1", "forked", n)))
            .collect::<Vec<_>>(),
    )
    .await;
    let (code, out) = checkpoint(&furl);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("history was rewritten"), "{out}");
    f.stop();
}

/// `GET` of `path` on the HTTP listener as `client`: (status, body).
fn http_get(client: &str, at: std::net::SocketAddr, path: &str) -> (u16, Vec<u8>) {
    use std::io::{Read, Write};
    let mut s = tls_stream(at, client);
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
        .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8_lossy(&out[..split]).to_string();
    let status = head[9..12].parse().unwrap();
    (status, out[split + 4..].to_vec())
}

/// The tree served as C2SP tlog-tiles on the HTTP listener: a third-party client
/// (`tlog_tiles::TileHashReader`, which authenticates every tile against the checkpoint's root)
/// rebuilds the root and proves entries from the tiles; entry bundles hold the entries as
/// `GetEntry` serves them; hash tiles are for every principal, entry bundles for regulator and
/// admin only, and an unknown path or a tile beyond the tree is 404.
#[tokio::test]
async fn the_tree_is_served_as_tlog_tiles_to_a_third_party_client() {
    let (_dir, l, at) = with_metrics();
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let envs: Vec<_> = (1..=700)
        .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
        .collect();
    assert!(
        submit(&url, &envs)
            .await
            .iter()
            .all(|r| st(r) == v1::ReceiptStatus::Accepted)
    );
    let (code, out, err) = ledgerctl_as("e2e-admin", &["checkpoint", "--server", &url, "--json"]);
    assert_eq!(code, 0, "{out}{err}");

    // The checkpoint, as a standard client parses it, to any principal.
    let (status, note) = http_get("lisboa-device", at, "/tlog/checkpoint");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&note));
    let note = String::from_utf8(note).unwrap();
    let text = &note[..note.find("\n\n").unwrap() + 1];
    let cp = tlog_tiles::Checkpoint::from_bytes(text.as_bytes()).expect("a C2SP checkpoint");
    let size = cp.size();
    let root = *cp.hash();
    assert!(size > 700, "{note}");

    struct Http(std::net::SocketAddr);
    impl tlog_tiles::TileReader for Http {
        fn height(&self) -> u8 {
            8
        }
        fn read_tiles(
            &self,
            tiles: &[tlog_tiles::Tile],
        ) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
            Ok(tiles
                .iter()
                .map(|t| {
                    let p = ledger_core::tiles::TilePath {
                        level: Some(t.level()),
                        n: t.level_index(),
                        width: t.width() as u16,
                    };
                    let (status, body) =
                        http_get("e2e-device", self.0, &format!("/tlog/{}", p.path()));
                    assert_eq!(
                        status,
                        200,
                        "{}: {}",
                        p.path(),
                        String::from_utf8_lossy(&body)
                    );
                    body
                })
                .collect())
        }
        fn save_tiles(&self, _: &[tlog_tiles::Tile], _: &[Vec<u8>]) {}
    }
    let tiles = Http(at);
    let reader = tlog_tiles::TileHashReader::new(size, root, &tiles);
    assert_eq!(tlog_tiles::tree_hash(size, &reader).unwrap(), root);
    let mut q = ledger_core::proto::query_client::QueryClient::new(
        ledger_agent::connect(&url).await.unwrap(),
    );
    for m in [0, 255, 256, 600, size - 1] {
        let proof = tlog_tiles::prove_record(size, m, &reader).unwrap();
        let entry = q
            .get_entry(v1::GetEntryRequest { index: m })
            .await
            .unwrap()
            .into_inner();
        let leaf = tlog_tiles::record_hash(&prost::Message::encode_to_vec(&entry));
        tlog_tiles::check_record(&proof, size, root, m, leaf).unwrap();
    }

    // Entry bundles: the entries as served, for regulator and admin only.
    let (status, bundle) = http_get("e2e-regulator", at, "/tlog/tile/entries/001");
    assert_eq!(status, 200);
    let mut at_byte = 0;
    let mut index = 256;
    while at_byte < bundle.len() {
        let len = u16::from_be_bytes([bundle[at_byte], bundle[at_byte + 1]]) as usize;
        let bytes = &bundle[at_byte + 2..at_byte + 2 + len];
        let entry = q
            .get_entry(v1::GetEntryRequest { index })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            bytes,
            prost::Message::encode_to_vec(&entry),
            "entry {index}"
        );
        at_byte += 2 + len;
        index += 1;
    }
    assert_eq!(index, 512, "a full bundle holds 256 entries");
    for (client, want) in [
        ("e2e-compliance", "needs the role"),
        ("e2e-device", "needs the role"),
        ("porto-compliance", "needs the role"),
    ] {
        let (status, body) = http_get(client, at, "/tlog/tile/entries/000");
        assert_eq!(status, 403, "{client}");
        assert!(String::from_utf8_lossy(&body).contains(want), "{client}");
    }
    // Beyond the tree, or not a tile: 404.
    for path in [
        "/tlog/tile/0/x001/000",
        "/tlog/tile/0/3",
        "/tlog/tile/entries/999.p/3",
        "/tlog/x",
    ] {
        let (status, _) = http_get("e2e-regulator", at, path);
        assert_eq!(status, 404, "{path}");
    }
}

/// `ledgerctl evidence --device D --from-seq A --to-seq B`: a device's events, across a key
/// rotation by the operator, bundled with the entries that prove both keys and their proofs;
/// `verify --evidence` accepts it offline and refuses a bundle with an event missing, one
/// changed, or another device's event in it.
/// `ledgerctl bench-tiles` loads the tiles over keep-alive HTTPS, reads every tile of every
/// level and checks each answer's length; a principal the entry bundles are not for gets only
/// refusals, and the bench says so and exits non-zero.
#[tokio::test]
async fn bench_tiles_reads_the_tiles_and_counts_what_it_was_refused() {
    let (_dir, l, at) = with_metrics();
    let url = l.url();
    let mut t = register(&url, 1, &[table("table-1", "T1")]).await.remove(0);
    let envs: Vec<_> = (1..=600)
        .map(|n| t.sign(now_ms(), bet("T1", "r", n)))
        .collect();
    assert!(
        submit(&url, &envs)
            .await
            .iter()
            .all(|r| st(r) == v1::ReceiptStatus::Accepted)
    );
    let (code, out, err) = ledgerctl_as("e2e-admin", &["checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    let http = format!("https://{at}");
    let bench = |client: &str, what: &str| {
        ledgerctl_as(
            client,
            &[
                "bench-tiles",
                "--url",
                &http,
                "--seconds",
                "1",
                "--connections",
                "2",
                "--what",
                what,
                "--json",
            ],
        )
    };
    // 600 events + the registration + genesis and declarations: 2 full level-0 tiles and one
    // partial, one partial level-1 tile.
    let (code, out, err) = bench("lisboa-device", "hashes");
    assert_eq!(code, 0, "{out}{err}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let size = j["tree_size"].as_u64().unwrap();
    assert!(size > 600, "{j}");
    assert_eq!(j["tiles"], (size.div_ceil(256) + 1), "{j}");
    assert!(
        j["requests"].as_u64().unwrap() >= j["tiles"].as_u64().unwrap(),
        "{j}"
    );
    assert_eq!(j["wrong_answers"], 0, "{j}");
    // Kept alive: every request of the second on the connections it opened first.
    assert_eq!(j["reconnects"], 0, "{j}");

    let (code, out, err) = bench("e2e-regulator", "entries");
    assert_eq!(code, 0, "{out}{err}");
    // Entry bundles are not a device's to read: refused before the load starts.
    let (code, out, err) = bench("lisboa-device", "entries");
    assert_ne!(code, 0, "{out}{err}");
    assert!(out.contains("403"), "{out}{err}");
    // Without a client certificate ledgerd's listener is not for it at all.
    let o = std::process::Command::new(bin("ledgerctl"))
        .args(["bench-tiles", "--url", &http, "--seconds", "1", "--json"])
        .env("LEDGER_CA", pki().ca())
        .env_remove("LEDGER_CERT")
        .env_remove("LEDGER_KEY")
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "{o:?}");
}

#[tokio::test]
async fn a_device_range_is_bundled_across_a_key_rotation_and_verified_offline() {
    use base64::Engine as _;
    use ed25519_dalek::SigningKey;
    use prost::Message;
    let b64 = base64::engine::general_purpose::STANDARD;
    let dir = tempdir();
    let cfg = write_config(dir.path(), "[checkpoint]\ninterval_secs = 0\n");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut devs = register(&url, 1, &[table("table-1", "T1"), table("table-2", "T2")]).await;
    let (mut t1, mut t2) = (devs.remove(0), devs.remove(0));
    let mut envs = Vec::new();
    for n in 1..=20 {
        envs.push(t1.sign(now_ms(), bet("T1", "r", n)));
        envs.push(t2.sign(now_ms(), bet("T2", "r", n)));
    }
    submit(&url, &envs).await;
    let op_file = dir.path().join("operator-1.key");
    std::fs::write(&op_file, hex::encode(operator_key().to_bytes())).unwrap();
    let new_key = SigningKey::from_bytes(&[0x79; 32]);
    let (code, out, err) = ledgerctl(&[
        "device",
        "rotate-key",
        "--server",
        &url,
        "--operator-key",
        op_file.to_str().unwrap(),
        "--operator-id",
        "operator-1",
        "--device-id",
        "table-1",
        "--public-key",
        &hex::encode(new_key.verifying_key().as_bytes()),
        "--reason",
        "terminal replaced",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let mut t1 = ledger_agent::DeviceSigner::new("table-1", new_key, 21);
    let later: Vec<_> = (21..=30)
        .map(|n| t1.sign(now_ms(), bet("T1", "r", n)))
        .collect();
    submit(&url, &later).await;
    let (code, out, err) = ledgerctl_as("e2e-admin", &["checkpoint", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");

    let file = dir.path().join("device.json");
    let (code, out, err) = ledgerctl_as(
        "e2e-regulator",
        &[
            "evidence",
            "--server",
            &url,
            "--device",
            "table-1",
            "--from-seq",
            "15",
            "--to-seq",
            "25",
            "--out",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let bundle = json_of(&file);
    let roles: Vec<&str> = bundle["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles.iter().filter(|r| **r == "event").count(),
        11,
        "{roles:?}"
    );
    assert!(
        roles.contains(&"rotation") && roles.contains(&"registration"),
        "{roles:?}"
    );
    let key = l.ledger_key.clone();
    let check = |b: &serde_json::Value| {
        let f = dir.path().join("check.json");
        std::fs::write(&f, serde_json::to_string(b).unwrap()).unwrap();
        ledgerctl(&[
            "verify",
            "--evidence",
            f.to_str().unwrap(),
            "--ledger-key",
            &key,
        ])
    };
    let (code, out, err) = check(&bundle);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("device table-1's events 15..25"), "{out}");

    // Tampering: an event left out; an event's bet changed; the rotation left out (the later
    // events' key unproven); the range claimed wider than the events.
    let events: Vec<usize> = roles
        .iter()
        .enumerate()
        .filter(|(_, r)| **r == "event")
        .map(|(i, _)| i)
        .collect();
    let mut missing = bundle.clone();
    missing["entries"].as_array_mut().unwrap().remove(events[3]);
    let mut changed = bundle.clone();
    {
        let item = &mut changed["entries"][events[0]];
        let bytes = b64.decode(item["entry"].as_str().unwrap()).unwrap();
        let mut e = v1::ChainEntry::decode(bytes.as_slice()).unwrap();
        let last = e.body.len() - 1;
        e.body[last] ^= 1;
        item["entry"] = b64.encode(e.encode_to_vec()).into();
    }
    let mut unrotated = bundle.clone();
    let at = roles.iter().position(|r| *r == "rotation").unwrap();
    unrotated["entries"].as_array_mut().unwrap().remove(at);
    let mut wider = bundle.clone();
    wider["to_sequence"] = 26.into();
    for (what, b) in [
        ("an event missing", missing),
        ("an event changed", changed),
        ("the rotation missing", unrotated),
        ("a wider range", wider),
    ] {
        let (code, out, err) = check(&b);
        assert_ne!(code, 0, "{what} was accepted: {out}");
        assert!(err.contains("REFUSED"), "{what}: {err}");
    }
    // Bad ranges are refused before anything is written.
    let (code, _, err) = ledgerctl_as(
        "e2e-regulator",
        &[
            "evidence",
            "--server",
            &url,
            "--device",
            "table-1",
            "--from-seq",
            "25",
            "--to-seq",
            "40",
            "--out",
            file.to_str().unwrap(),
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("no event of sequence 31"), "{err}");
    l.stop();
}
