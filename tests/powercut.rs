//! Power loss (issue 42): ledgerd's data directory on `powercut`, a FUSE layer that keeps every
//! write not yet covered by an fsync in memory. Under load (several devices streaming, checkpoints
//! requested, the live audit writing its store, a mirror on the same disk following) the power is
//! cut at a random moment: everything not synced is dropped, the last unsynced write torn,
//! uncommitted renames, creates and unlinks undone. ledgerd and the mirror are killed, the layer
//! remounted on what the "disk" kept, both restarted.
//! Then every acknowledged event (every ACCEPTED or DUPLICATE receipt) must be there exactly once
//! with its bytes, the live audit must reach the head, the mirror must catch up without an alarm
//! (its audit digest the source's), and `ledgerctl verify --data-dir` passes on both.
//! An audit store that sled cannot read back is set aside by ledgerd and rebuilt from the chain
//! (derived data); the test counts those, and waits for an audit as long as it keeps advancing,
//! up to a bound that grows with the ledger. After the last cut the mirror's audit store is
//! removed, so that every run proves the rebuild (its digest the source's) and measures its rate.
//!
//! `POWERCUT_CYCLES` (default 3, about 3 minutes) cuts, `POWERCUT_SEED` to replay a run (the seed
//! is printed). A longer campaign: `POWERCUT_CYCLES=30 cargo test -p e2e --test powercut -- --nocapture`.
//! `POWERCUT_LYING_DISK=1`: fsync keeps nothing, and the test must fail (acknowledged events lost).
//! Mounting needs root (or fusermount3) and /dev/fuse (`scripts/install-fuse.sh`); without them
//! the test fails saying so.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use e2e::*;
use ledger_core::proto::{
    self as v1, checkpoints_client::CheckpointsClient, mirror_client::MirrorClient,
    query_client::QueryClient,
};
use tokio_stream::StreamExt;

const DEVICES: usize = 3;
/// Events each device signs per cycle (more than a debug ledgerd on FUSE takes before the cut).
const PER_CYCLE: u64 = 30_000;

/// What a device has signed and what the ledger acknowledged of it.
struct Device {
    signer: ledger_agent::DeviceSigner,
    table: String,
    /// Every envelope signed, sequence i + 1 at i.
    sent: Vec<v1::Envelope>,
    /// sequence -> (index, entry hash) from its receipt.
    acked: HashMap<u64, (u64, Vec<u8>)>,
}

impl Device {
    /// The first sequence without a receipt: the device resends from there.
    fn first_unacked(&self) -> u64 {
        (1..)
            .find(|s| !self.acked.contains_key(s))
            .expect("a sequence")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_events_survive_power_cuts() {
    assert!(
        std::path::Path::new("/dev/fuse").exists(),
        "the power-loss test needs FUSE: /dev/fuse is missing (scripts/install-fuse.sh says how)"
    );
    let cycles: u32 = env_or("POWERCUT_CYCLES", 3);
    let seed: u64 = env_or("POWERCUT_SEED", now_ms() as u64);
    // The negative control: on a disk whose fsync keeps nothing this test must fail.
    let lying_disk = std::env::var_os("POWERCUT_LYING_DISK").is_some();
    eprintln!("powercut: {cycles} cycle(s), POWERCUT_SEED={seed}, lying disk {lying_disk}");

    let dir = tempdir();
    let backing = dir.path().join("disk");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir_all(&backing).unwrap();
    std::fs::create_dir_all(&mnt).unwrap();
    let data = mnt.join("data");
    let cfg = write_config(
        dir.path(),
        "[checkpoint]\ninterval_secs = 1\nrequest_interval_ms = 200\n",
    );

    // The source's address stays the same across restarts: the mirror's configuration names it.
    let mut addr = "127.0.0.1:0".to_string();
    let mut mirror_cfg: Option<std::path::PathBuf> = None;
    let mirror_data = mnt.join("mirror");

    let mut devices: Vec<Device> = Vec::new();
    let mut totals = (0usize, 0usize, 0usize); // pages dropped, bytes torn, namespace undone
    let mut mid_stream = 0u32;
    let mut set_aside = 0usize;
    let mut rebuilt = None;
    for cycle in 0..=cycles {
        let mounted = powercut::mount(&backing, &mnt)
            .unwrap_or_else(|e| panic!("the power-loss test cannot mount FUSE: {e}"));
        if cycle == cycles && cycle > 0 {
            // The rebuild from the chain, proven and timed on every run: ledgerd's own path for a
            // store it had to set aside.
            std::fs::remove_dir_all(mirror_data.join("audit")).expect("remove the mirror's audit");
        }
        let l = Ledgerd::start(&data, &cfg, &addr);
        addr = l.addr.clone();
        let url = l.url();
        let mcfg = mirror_cfg
            .get_or_insert_with(|| mirror_config(&dir.path().join("mirror-cfg"), &l))
            .clone();
        let m = Ledgerd::start(&mirror_data, &mcfg, "127.0.0.1:0");
        if cycle == 0 {
            let specs: Vec<_> = (0..DEVICES)
                .map(|i| table(&format!("table-{}", i + 1), &format!("T{}", i + 1)))
                .collect();
            for (i, signer) in register(&url, 1, &specs).await.into_iter().enumerate() {
                devices.push(Device {
                    signer,
                    table: format!("T{}", i + 1),
                    sent: Vec::new(),
                    acked: HashMap::new(),
                });
            }
        }
        let checked = check_acknowledged(&url, &devices).await;
        let audit = wait_audit(&url, "source").await;
        eprintln!(
            "powercut: cycle {cycle}: after restart {checked} acknowledged events present once, \
             audit at {} (head {})",
            audit.position, audit.head
        );
        // The mirror, cut with its source, resumes without an alarm and reaches the head.
        wait_mirrored(&url, &m.url()).await;
        let alarms = mirror_alarms(&m.url()).await;
        assert!(alarms.is_empty(), "cycle {cycle}: mirror alarms {alarms:?}");
        let t = std::time::Instant::now();
        let maudit = wait_audit(&m.url(), "mirror").await;
        if cycle == cycles && cycle > 0 {
            rebuilt = Some((maudit.position + 1, t.elapsed()));
        }
        assert_eq!(
            maudit.findings_digest, audit.findings_digest,
            "cycle {cycle}"
        );
        // Stores set aside after this cut (ledgerd found them damaged at start).
        let aside = [&data, &mirror_data]
            .iter()
            .flat_map(|d| std::fs::read_dir(d).unwrap().flatten())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("audit.damaged-")
            })
            .count();
        if aside > set_aside {
            eprintln!(
                "powercut: cycle {cycle}: {} audit store(s) damaged by the cut, set aside and rebuilt",
                aside - set_aside
            );
            set_aside = aside;
        }
        m.stop();
        l.stop();
        for d in [&data, &mirror_data] {
            let (code, out, err) = ledgerctl(&["verify", "--data-dir", d.to_str().unwrap()]);
            assert_eq!(
                code,
                0,
                "cycle {cycle}, POWERCUT_SEED={seed}: verify {} failed\n{out}{err}",
                d.display()
            );
        }
        if cycle == cycles {
            mounted.unmount().expect("unmount");
            break;
        }

        // Load, then the cut.
        if lying_disk {
            mounted.handle.lie_about_fsync();
        }
        let l = Ledgerd::start(&data, &cfg, &addr);
        let m = Ledgerd::start(&mirror_data, &mcfg, "127.0.0.1:0");
        let url = l.url();
        let mut streams = Vec::new();
        for (d, dev) in devices.iter_mut().enumerate() {
            let from = dev.first_unacked();
            for n in 0..PER_CYCLE {
                let round = format!("c{cycle}-{}", n / 8);
                let e = dev
                    .signer
                    .sign(now_ms(), bet(&dev.table, &round, n % 8 + 1));
                dev.sent.push(e);
            }
            let envs = dev.sent[(from - 1) as usize..].to_vec();
            let url = url.clone();
            streams.push(tokio::spawn(async move {
                let mut receipts = Vec::new();
                let r = match ledger_agent::connect(&url).await {
                    Ok(ch) => ledger_agent::client::stream_once(ch, &envs, &mut receipts).await,
                    Err(e) => Err(e),
                };
                (d, receipts, r.is_ok())
            }));
        }
        let stop = Arc::new(Mutex::new(false));
        let checkpoints = {
            let (url, stop) = (url.clone(), stop.clone());
            tokio::spawn(async move {
                // (requests answered, the longest answer, how long the last one had waited when
                // the power went)
                let Ok(ch) = ledger_agent::connect(&url).await else {
                    return (0u32, Duration::ZERO, Duration::ZERO);
                };
                let mut c = CheckpointsClient::new(ch);
                let (mut n, mut longest) = (0u32, Duration::ZERO);
                while !*stop.lock().unwrap() {
                    let t = std::time::Instant::now();
                    if let Err(e) = c.create(v1::CreateCheckpointRequest {}).await {
                        eprintln!("powercut: checkpoint request: {e}");
                        return (n, longest, t.elapsed());
                    }
                    longest = longest.max(t.elapsed());
                    n += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                (n, longest, Duration::ZERO)
            })
        };
        let r = powercut::splitmix(seed ^ u64::from(cycle));
        tokio::time::sleep(Duration::from_millis(200 + r % 1200)).await;
        let report = mounted.handle.cut(Some(r.rotate_left(17)));
        *stop.lock().unwrap() = true;
        l.kill9();
        m.kill9();
        totals.0 += report.pages_dropped;
        totals.1 += report.torn_bytes;
        totals.2 += report.namespace_undone;
        let mut finished = 0;
        for s in streams {
            let (d, receipts, ok) = tokio::time::timeout(Duration::from_secs(60), s)
                .await
                .expect("a stream ended after the kill")
                .unwrap();
            finished += usize::from(ok);
            record(&mut devices[d], &receipts, cycle);
        }
        let (cps, longest_cp, cut_cp) = checkpoints.await.unwrap();
        if finished < DEVICES {
            mid_stream += 1;
        }
        eprintln!(
            "powercut: cycle {cycle}: cut after {} acknowledged events in all, {cps} checkpoint \
             request(s) answered (longest {longest_cp:?}, one waiting {cut_cp:?} at the cut), \
             {finished}/{DEVICES} streams complete; {report:?}",
            devices.iter().map(|d| d.acked.len()).sum::<usize>()
        );
        mounted.unmount().expect("unmount");
    }
    let acked: usize = devices.iter().map(|d| d.acked.len()).sum();
    eprintln!(
        "powercut: {cycles} cut(s) ({mid_stream} mid-stream), {acked} acknowledged events checked \
         after every cut, none lost; {} unsynced pages dropped, {} bytes torn, {} namespace \
         operations undone; {set_aside} audit store(s) set aside and rebuilt; POWERCUT_SEED={seed}",
        totals.0, totals.1, totals.2
    );
    if let Some((entries, took)) = rebuilt {
        eprintln!(
            "powercut: the mirror's audit rebuilt from its chain: {entries} entries in {took:.1?} \
             ({:.0} entries/s)",
            entries as f64 / took.as_secs_f64()
        );
    }
    assert!(
        mid_stream > 0 || cycles == 0,
        "no cut came while events were streaming"
    );
    assert!(acked as u64 >= DEVICES as u64, "events were acknowledged");
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a number")),
        Err(_) => default,
    }
}

/// Keep the receipts that acknowledge an event; a second receipt for a sequence must name the
/// same entry.
fn record(dev: &mut Device, receipts: &[v1::Receipt], cycle: u32) {
    for r in receipts {
        match st(r) {
            v1::ReceiptStatus::Accepted | v1::ReceiptStatus::Duplicate => {
                let e = (r.index, r.entry_hash.clone());
                if let Some(old) = dev.acked.insert(r.sequence, e.clone()) {
                    assert_eq!(
                        old, e,
                        "cycle {cycle}: {} seq {} acknowledged twice as different entries",
                        dev.signer.device_id, r.sequence
                    );
                }
            }
            other => panic!("cycle {cycle}: unexpected receipt {other:?}: {r:?}"),
        }
    }
}

/// Every acknowledged event is in the chain exactly once, at its receipt's index, with the bytes
/// the device signed. Returns how many were checked.
async fn check_acknowledged(url: &str, devices: &[Device]) -> usize {
    let ch = ledger_agent::connect(url).await.unwrap();
    let mut checked = 0;
    for dev in devices {
        let id = &dev.signer.device_id;
        let entries: Vec<v1::ChainEntry> = QueryClient::new(ch.clone())
            .list_device_entries(v1::ListDeviceEntriesRequest {
                device_id: id.clone(),
                from_sequence: 1,
            })
            .await
            .unwrap()
            .into_inner()
            .map(|e| e.expect("an entry"))
            .collect()
            .await;
        // The ledger holds sequences 1..=k of the device, each once (with no gap, there is no
        // room for a duplicate).
        let mut by_seq: HashMap<u64, &v1::ChainEntry> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            let seq = i as u64 + 1;
            let body = &dev.sent[i];
            assert_eq!(
                (&e.body, &e.signature),
                (&body.body, &body.signature),
                "{id}: entry {} is not the device's sequence {seq}",
                e.index
            );
            assert!(by_seq.insert(seq, e).is_none());
        }
        for (seq, (index, hash)) in &dev.acked {
            let e = by_seq.get(seq).unwrap_or_else(|| {
                panic!(
                    "{id}: acknowledged sequence {seq} (index {index}) lost; the ledger holds \
                     sequences 1..={}",
                    entries.len()
                )
            });
            assert_eq!((e.index, &e.entry_hash), (*index, hash), "{id} seq {seq}");
            checked += 1;
        }
    }
    checked
}

/// A mirror of `src` whose data directory is on the same (powercut) disk.
fn mirror_config(dir: &std::path::Path, src: &Ledgerd) -> std::path::PathBuf {
    let p = pki();
    std::fs::create_dir_all(dir).unwrap();
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

/// Wait until the mirror holds the source's head.
async fn wait_mirrored(src: &str, mirror: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (a, b) = (head(src).await, head(mirror).await);
        if a.index == b.index && a.entry_hash == b.entry_hash {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the mirror did not catch up: source at {}, mirror at {}",
            a.index,
            b.index
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Entries a second below which an audit's replay counts as stuck (a debug ledgerd on FUSE
/// replays about 2,400 entries a second entry by entry, more in parallel).
const MIN_AUDIT_RATE: f64 = 500.0;

/// Wait until the live audit at `url` reaches the head, as long as it keeps advancing: it fails
/// when the audit stopped, when it has not moved for 60 s, or when it has taken longer than a
/// replay of the whole ledger at [`MIN_AUDIT_RATE`] (plus a minute).
async fn wait_audit(url: &str, which: &str) -> v1::AuditStatus {
    use ledger_core::proto::audit_client::AuditClient;
    let ch = ledger_agent::connect(url).await.expect("connect");
    let started = std::time::Instant::now();
    let (mut last, mut moved) = (i64::MIN, started);
    loop {
        let head = QueryClient::new(ch.clone())
            .get_head(v1::GetHeadRequest {})
            .await
            .expect("GetHead")
            .into_inner()
            .index;
        let s = AuditClient::new(ch.clone())
            .get_status(v1::AuditStatusRequest {})
            .await
            .expect("Audit.GetStatus")
            .into_inner();
        assert!(
            s.halted.is_empty(),
            "the {which}'s live audit stopped: {}",
            s.halted
        );
        if s.position >= 0 && s.position as u64 >= head && !s.findings_digest.is_empty() {
            return s;
        }
        if s.position != last {
            (last, moved) = (s.position, std::time::Instant::now());
        }
        let bound = Duration::from_secs(60) + Duration::from_secs_f64(head as f64 / MIN_AUDIT_RATE);
        assert!(
            moved.elapsed() < Duration::from_secs(60) && started.elapsed() < bound,
            "the {which}'s live audit did not reach the head {head}: at {} after {:.0?} \
             (unmoved for {:.0?}; bound {bound:.0?})",
            s.position,
            started.elapsed(),
            moved.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn mirror_alarms(url: &str) -> Vec<v1::MirrorAlarm> {
    let ch = ledger_agent::connect(url).await.expect("connect");
    MirrorClient::new(ch)
        .list_alarms(v1::ListMirrorAlarmsRequest {})
        .await
        .expect("Mirror.ListAlarms")
        .into_inner()
        .alarms
}
