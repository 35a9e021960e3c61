//! `ledgerctl audit`: replay the whole chain from genesis against the rule engines and the
//! jackpot accounts, offline, and print the findings digest (to compare with the live audit's);
//! or show the live audit's status.

use std::io::BufRead;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use ledger_audit::live::{FollowError, Follower};
use ledger_audit::store::{AuditStore, FindingFilter};
use ledger_core::proto as v1;
use ledger_store::Store;

use crate::common::{self, ServerArg};

#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
With --from-genesis the replay is offline: from a stopped ledger's data directory (--data-dir)
or from an export file (--file; verify it first with `ledgerctl verify --file`). Its findings
digest must equal the live audit's (`ledgerctl audit` against the running ledger, once caught
up): both replay the same chain with the same rules.

With --out DIR the derived store is kept in DIR (findings, rounds, jackpot accounts) and a later
`--resume` continues from where the replay stopped, without a duplicate or a gap.

Examples:
  ledgerctl audit --from-genesis --data-dir /var/lib/ledgerd
  ledgerctl audit --from-genesis --file chain.export --json
  ledgerctl audit --wait")]
pub struct Args {
    /// Replay the whole chain from its first entry, offline.
    #[arg(long)]
    pub from_genesis: bool,
    /// The data directory of a stopped ledgerd.
    #[arg(long, value_name = "DIR", conflicts_with = "file")]
    pub data_dir: Option<PathBuf>,
    /// An export file (`ledgerctl export`).
    #[arg(long, value_name = "EXPORT")]
    pub file: Option<PathBuf>,
    /// Keep the derived store in DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continue the replay kept in --out instead of starting from genesis.
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// With --out: snapshot the replay at most every SECS seconds (0: at every commit).
    #[arg(long, value_name = "SECS", default_value_t = 5.0, requires = "out")]
    pub snapshot_every: f64,
    /// Device clock drift finding threshold, ms (as ledgerd's audit.device_clock_drift_ms).
    #[arg(long, value_name = "MS", default_value_t = audit::auditor::DEVICE_CLOCK_DRIFT_MS)]
    pub device_clock_drift_ms: i64,
    /// Also print every finding.
    #[arg(long)]
    pub findings: bool,
    /// Live status: wait until the audit has caught up with the ledger's head.
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub server: ServerArg,
}

pub async fn run(a: Args, json: bool) -> anyhow::Result<i32> {
    if a.from_genesis || a.resume {
        return tokio::task::spawn_blocking(move || replay(a, json)).await?;
    }
    live_status(a, json).await
}

fn replay(a: Args, json: bool) -> anyhow::Result<i32> {
    let store = match &a.out {
        Some(dir) => {
            if !a.resume && dir.exists() {
                std::fs::remove_dir_all(dir)
                    .with_context(|| format!("cannot clear {}", dir.display()))?;
            }
            AuditStore::open(dir).with_context(|| format!("cannot open {}", dir.display()))?
        }
        None => AuditStore::temporary()?,
    };
    let mut follower = Follower::with_store_settings(
        store.clone(),
        ledger_audit::replay::settings_with(false, a.device_clock_drift_ms),
    )?;
    // Without --out the store is thrown away: nobody can query its rounds.
    follower.set_keep_rounds(a.out.is_some());
    follower.set_snapshot_every(std::time::Duration::from_secs_f64(
        a.snapshot_every.max(0.0),
    ));
    let resumed_at = follower.position();
    let started = Instant::now();
    let source;
    let entries;
    match (&a.data_dir, &a.file) {
        (Some(dir), None) => {
            source = dir.display().to_string();
            let chain = Store::open_existing(dir)
                .with_context(|| format!("cannot read the ledger in {}", dir.display()))?;
            let head = chain
                .head()?
                .map(|(i, _)| i)
                .ok_or_else(|| anyhow::anyhow!("{} holds an empty ledger", dir.display()))?;
            // The replay reads with the store reopened now and then (bounded memory): this
            // handle lets go of sled's lock first.
            drop(chain);
            let pb = common::progress(head + 1, "auditing");
            follower.run_to_dir(dir, head, |p| pb.set_position(p + 1))?;
            pb.finish_and_clear();
            entries = head + 1;
        }
        (None, Some(file)) => {
            source = file.display().to_string();
            let (n, iter) = export_entries(file)?;
            let pb = common::progress(n, "auditing");
            follower.apply_all(iter, |p| pb.set_position(p + 1))?;
            pb.finish_and_clear();
            entries = n;
        }
        _ => anyhow::bail!("give --data-dir DIR (a stopped ledger) or --file EXPORT"),
    }
    let secs = started.elapsed().as_secs_f64();
    let replayer = follower.replayer();
    let r = replayer
        .read()
        .map_err(|_| anyhow::anyhow!("audit state poisoned"))?;
    let digest = r.digest();
    let applied = entries.saturating_sub(resumed_at.map_or(0, |p| p + 1));
    if json {
        println!(
            "{}",
            serde_json::json!({
                "source": source,
                "entries": entries,
                "position": r.position(),
                "resumed_after": resumed_at,
                "findings": digest.count,
                "findings_digest": digest.hex(),
                "open_rounds": r.open_rounds(),
                "seconds": secs,
                "entries_per_second": if secs > 0.0 { applied as f64 / secs } else { 0.0 },
            })
        );
    } else {
        println!(
            "audit of {source}: {entries} entries replayed from {}",
            resumed_at.map_or("genesis".to_string(), |p| format!("entry {}", p + 1))
        );
        println!("  findings:        {}", digest.count);
        println!("  findings digest: {}", digest.hex());
        println!("  open rounds:     {}", r.open_rounds());
        println!(
            "  time:            {secs:.2} s ({:.0} entries/s)",
            if secs > 0.0 {
                applied as f64 / secs
            } else {
                0.0
            }
        );
    }
    if a.findings {
        for f in store.findings(&FindingFilter::default(), None, usize::MAX)? {
            if json {
                println!("{}", serde_json::to_string(&f)?);
            } else {
                println!("{}", crate::findings::line(&f));
            }
        }
    }
    Ok(0)
}

/// The entries of an export file, with their count.
fn export_entries(
    path: &std::path::Path,
) -> anyhow::Result<(
    u64,
    impl Iterator<Item = Result<v1::ChainEntry, FollowError>>,
)> {
    let f = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = std::io::BufReader::new(f).lines().enumerate();
    let mut next = move || -> Option<Result<(usize, serde_json::Value), FollowError>> {
        let (n, l) = lines.next()?;
        Some(
            l.map_err(|e| FollowError::Source(format!("line {}: {e}", n + 1)))
                .and_then(|l| {
                    serde_json::from_str(&l)
                        .map(|v| (n + 1, v))
                        .map_err(|e| FollowError::Source(format!("line {}: not JSON: {e}", n + 1)))
                }),
        )
    };
    let header = match next() {
        Some(Ok((_, h))) => h,
        Some(Err(e)) => return Err(e.into()),
        None => anyhow::bail!("{} is empty", path.display()),
    };
    if header.get("format").and_then(|f| f.as_str()) != Some(crate::export::FORMAT) {
        anyhow::bail!("{} is not a {} file", path.display(), crate::export::FORMAT);
    }
    let n = header.get("entries").and_then(|v| v.as_u64()).unwrap_or(0);
    let checkpoints = header
        .get("checkpoints")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    for _ in 0..checkpoints {
        let _ = next();
    }
    let mut seen = 0u64;
    let iter = std::iter::from_fn(move || {
        if seen == n {
            return None;
        }
        seen += 1;
        Some(next()?.and_then(|(line, v)| {
            match v.get("entry") {
                Some(e) => crate::verify::entry_from_json(e, line)
                    .map_err(|x| FollowError::Source(x.to_string())),
                None => Err(FollowError::Source(format!(
                    "line {line}: expected an entry"
                ))),
            }
        }))
    });
    Ok((n, iter))
}

async fn live_status(a: Args, json: bool) -> anyhow::Result<i32> {
    let channel = common::channel(&a.server.server).await?;
    let mut client = v1::audit_client::AuditClient::new(channel);
    let status = loop {
        let s = client
            .get_status(v1::AuditStatusRequest {})
            .await
            .context("the ledger does not serve the audit (is [audit] enabled?)")?
            .into_inner();
        let caught_up =
            s.position >= 0 && s.position as u64 >= s.head && !s.findings_digest.is_empty();
        // A stopped audit will not catch up: no point waiting for it.
        if !a.wait || caught_up || !s.halted.is_empty() {
            break s;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    if json {
        println!(
            "{}",
            serde_json::json!({
                "position": status.position,
                "head": status.head,
                "findings": status.findings,
                "findings_digest": status.findings_digest,
                "open_rounds": status.open_rounds,
                "halted": (!status.halted.is_empty()).then_some(&status.halted),
            })
        );
    } else {
        println!(
            "live audit at entry {} of {} (head)",
            status.position, status.head
        );
        println!("  findings:        {}", status.findings);
        println!(
            "  findings digest: {}",
            if status.findings_digest.is_empty() {
                "(catching up)"
            } else {
                &status.findings_digest
            }
        );
        println!("  open rounds:     {}", status.open_rounds);
        if !status.halted.is_empty() {
            println!(
                "  STOPPED:         {} (ingest goes on; the audit resumes from its last snapshot when ledgerd restarts)",
                status.halted
            );
        }
    }
    // A stopped audit is a failure a script must see.
    Ok(if status.halted.is_empty() { 0 } else { 1 })
}
