//! Helpers for the slot-machine and jackpot end-to-end tests: a real ledgerd with an operator and
//! a regulator principal, a simulated slot floor (`jackpot::sim::Floor`) whose machines are
//! registered by the operator, and its events signed by the right key and streamed over gRPC.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use casino_play::sim::DeviceSpec;
use ed25519_dalek::SigningKey;
use jackpot::sim::{Floor, FloorEvent, FloorMachine, FloorPlan, Signer};
use jackpot::{ModelApproved, PoolConfigured, PoolKind};
use ledger_agent::DeviceSigner;
use ledger_core::proto::{
    self as v1, audit_client::AuditClient, event_body::Payload, jackpots_client::JackpotsClient,
    query_client::QueryClient,
};

use crate::{Ledgerd, now_ms, operator_key, register, submit, write_config};

/// The inspectorate's key in every slot test ledger.
pub fn regulator_key() -> SigningKey {
    SigningKey::from_bytes(&[0x22; 32])
}

pub const REGULATOR_ID: &str = "inspectorate";

/// A config with the test operator and the regulator `inspectorate`.
pub fn write_config_with_regulator(dir: &Path) -> std::path::PathBuf {
    write_config_with_regulator_and(dir, "")
}

/// [`write_config_with_regulator`], followed by `extra` TOML (sections of ledgerd's config).
pub fn write_config_with_regulator_and(dir: &Path, extra: &str) -> std::path::PathBuf {
    write_config(
        dir,
        &format!(
            "[[principals]]\nid = \"{REGULATOR_ID}\"\nrole = \"regulator\"\npublic_key = \"{}\"\n{extra}",
            hex::encode(regulator_key().verifying_key().as_bytes())
        ),
    )
}

/// Write a secret key file as `ledgerctl keygen` does (PKCS#8 PEM, mode 0600).
pub fn write_key_file(path: &Path, key: &SigningKey) {
    use std::os::unix::fs::PermissionsExt;
    // PKCS#8 PEM, as `ledgerctl keygen` writes it.
    std::fs::write(path, ledger_core::signing::secret_key_pem(key)).expect("write key");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod key");
}

/// Casinos `C1` and `C2`; models `K` (92%) and `L` (88%), both with bets 0.50/1.00/2.00;
/// machines `A1`, `A2` (C1, K), `B1` (C2, K), `B2` (C2, L); jackpots `JP-A2` on A2 and `JP-B1`
/// on B1; a superjackpot `SJP` over A1, B1 and B2 (two models: not a valid target for K's
/// values while K machines exist).
pub fn plan() -> FloorPlan {
    let machine = |id: &str, casino: &str, model: &str, rollover: u64, start: u64| FloorMachine {
        machine_id: id.into(),
        casino_id: casino.into(),
        model_id: model.into(),
        bet_values_cents: vec![50, 100, 200],
        rollover,
        initial_coin_in: start,
        report_games: id.ends_with('1'),
    };
    let pool = |id: &str, kind, casinos: &[&str], members: &[&str], bp, start| PoolConfigured {
        pool_id: id.into(),
        kind,
        casino_ids: casinos.iter().map(|c| (*c).into()).collect(),
        member_machine_ids: members.iter().map(|m| (*m).into()).collect(),
        member_table_ids: vec![],
        contribution_bp: bp,
        start_value_cents: start,
        reset_value_cents: start,
    };
    FloorPlan {
        models: vec![
            ModelApproved {
                model_id: "K".into(),
                theoretical_rtp_bp: 9200,
                bet_values_cents: vec![50, 100, 200],
                approval_ref: "IGJ-K".into(),
            },
            ModelApproved {
                model_id: "L".into(),
                theoretical_rtp_bp: 8800,
                bet_values_cents: vec![50, 100, 200],
                approval_ref: "IGJ-L".into(),
            },
        ],
        machines: vec![
            machine("A1", "C1", "K", 100_000_000, 99_990_000),
            machine("A2", "C1", "K", 0, 5_000_000),
            machine("B1", "C2", "K", 0, 7_000_000),
            machine("B2", "C2", "L", 0, 1_000_000),
        ],
        pools: vec![
            pool("JP-A2", PoolKind::Jackpot, &["C1"], &["A2"], 120, 40_000),
            pool("JP-B1", PoolKind::Jackpot, &["C2"], &["B1"], 120, 40_000),
            pool(
                "SJP",
                PoolKind::Superjackpot,
                &["C1", "C2"],
                &["A1", "B1", "B2"],
                80,
                300_000,
            ),
        ],
    }
}

/// The machines' registrations.
pub fn machine_specs(plan: &FloorPlan) -> Vec<DeviceSpec> {
    plan.machines
        .iter()
        .map(|m| DeviceSpec {
            device_id: m.machine_id.to_string(),
            kind: ledger_core::DeviceKind::Machine,
            casino_id: m.casino_id.to_string(),
            table_ids: vec![],
            machine_id: m.machine_id.to_string(),
            model_id: m.model_id.to_string(),
            bet_values_cents: m.bet_values_cents.clone(),
            description: format!("slot machine, model {}", m.model_id),
        })
        .collect()
}

/// A slot floor streaming into a real ledgerd.
pub struct SlotFloor {
    pub dir: tempfile::TempDir,
    pub ledgerd: Ledgerd,
    pub url: String,
    pub floor: Floor,
    pub signers: BTreeMap<String, DeviceSigner>,
}

impl SlotFloor {
    /// Start a ledger, register the plan's machines, and stream the floor's set-up (models,
    /// first readings, pools) and `steps` rounds of `games` games per machine.
    pub async fn start(plan: FloorPlan, seed: u64, steps: usize, games: u32) -> SlotFloor {
        Self::start_with(plan, seed, steps, games, "").await
    }

    /// [`SlotFloor::start`] with `extra` TOML in ledgerd's config.
    pub async fn start_with(
        plan: FloorPlan,
        seed: u64,
        steps: usize,
        games: u32,
        extra: &str,
    ) -> SlotFloor {
        Self::start_reporting(plan, seed, steps, games, extra, &[]).await
    }

    /// [`SlotFloor::start_with`], the machines `reporting` reporting their significant events
    /// ([`Floor::report_events`]).
    pub async fn start_reporting(
        plan: FloorPlan,
        seed: u64,
        steps: usize,
        games: u32,
        extra: &str,
        reporting: &[&str],
    ) -> SlotFloor {
        let dir = crate::tempdir();
        let cfg = write_config_with_regulator_and(dir.path(), extra);
        let ledgerd = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
        let url = ledgerd.url();
        let specs = machine_specs(&plan);
        let mut signers: BTreeMap<String, DeviceSigner> = register(&url, 1, &specs)
            .await
            .into_iter()
            .map(|s| (s.device_id.clone(), s))
            .collect();
        signers.insert(
            "operator-1".into(),
            DeviceSigner::new("operator-1", operator_key(), specs.len() as u64 + 1),
        );
        signers.insert(
            REGULATOR_ID.into(),
            DeviceSigner::new(REGULATOR_ID, regulator_key(), 1),
        );
        let mut floor = Floor::new(plan, seed, 0);
        for m in reporting {
            floor.report_events(m);
        }
        let mut events = floor.setup();
        for _ in 0..steps {
            events.extend(floor.play(games));
        }
        let mut s = SlotFloor {
            dir,
            ledgerd,
            url,
            floor,
            signers,
        };
        s.send(&events).await;
        s
    }

    /// Sign floor events with their signers' keys, in order.
    pub fn sign(&mut self, events: &[FloorEvent]) -> Vec<v1::Envelope> {
        events
            .iter()
            .filter_map(|e| {
                let payload = ledger_convert::to_proto::jackpot_event(&e.event)?;
                Some(self.sign_payload(signer_id(&e.signer), payload))
            })
            .collect()
    }

    /// Sign one payload as `signer` ("operator-1", "inspectorate" or a machine id).
    pub fn sign_payload(&mut self, signer: &str, payload: Payload) -> v1::Envelope {
        self.signers
            .get_mut(signer)
            .unwrap_or_else(|| panic!("no signer {signer}"))
            .sign(now_ms(), payload)
    }

    /// Sign and stream floor events; every one must be accepted. Returns the receipts.
    pub async fn send(&mut self, events: &[FloorEvent]) -> Vec<v1::Receipt> {
        let envs = self.sign(events);
        self.submit(&envs).await
    }

    /// Stream envelopes; every one must be accepted.
    pub async fn submit(&self, envs: &[v1::Envelope]) -> Vec<v1::Receipt> {
        let r = submit(&self.url, envs).await;
        for x in &r {
            assert_eq!(x.status, v1::ReceiptStatus::Accepted as i32, "{x:?}");
        }
        r
    }

    /// Sign and submit one payload; its receipt.
    pub async fn send_payload(&mut self, signer: &str, payload: Payload) -> v1::Receipt {
        let env = self.sign_payload(signer, payload);
        self.submit(&[env]).await.remove(0)
    }

    pub async fn channel(&self) -> tonic::transport::Channel {
        ledger_agent::connect(&self.url).await.expect("connect")
    }

    /// Wait until the live audit has caught up with the head.
    pub async fn caught_up(&self) -> v1::AuditStatus {
        wait_caught_up(&self.url).await
    }

    /// Every finding, in sequence order.
    pub async fn findings(&self) -> Vec<v1::Finding> {
        list_findings(&self.url, v1::ListFindingsRequest::default()).await
    }

    /// The findings recorded after the first `n`.
    pub async fn findings_after(&self, n: u64) -> Vec<v1::Finding> {
        list_findings(
            &self.url,
            v1::ListFindingsRequest {
                after_seq: n.checked_sub(1),
                ..Default::default()
            },
        )
        .await
    }

    pub async fn pools(&self) -> v1::PoolList {
        JackpotsClient::new(self.channel().await)
            .list_pools(v1::ListPoolsRequest {})
            .await
            .expect("ListPools")
            .into_inner()
    }

    /// A pool's exact captive value as the ledger holds it (1/10,000 cent).
    pub async fn captive_e4(&self, pool: &str) -> i128 {
        captive_e4(&self.pools().await, pool)
    }
}

/// Who signs a floor event.
pub fn signer_id(s: &Signer) -> &str {
    match s {
        Signer::Machine(m) => m,
        Signer::Operator => "operator-1",
        Signer::Regulator => REGULATOR_ID,
    }
}

pub fn captive_e4(list: &v1::PoolList, pool: &str) -> i128 {
    list.pools
        .iter()
        .find(|p| p.pool_id == pool)
        .unwrap_or_else(|| panic!("no pool {pool}"))
        .captive_e4
        .parse()
        .expect("captive_e4")
}

/// Wait until the live audit has caught up with the ledger's head (and its digest is set).
pub async fn wait_caught_up(url: &str) -> v1::AuditStatus {
    let ch = ledger_agent::connect(url).await.expect("connect");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let head = QueryClient::new(ch.clone())
            .get_head(v1::GetHeadRequest {})
            .await
            .expect("GetHead")
            .into_inner();
        let s = AuditClient::new(ch.clone())
            .get_status(v1::AuditStatusRequest {})
            .await
            .expect("GetStatus")
            .into_inner();
        assert!(s.halted.is_empty(), "the live audit stopped: {}", s.halted);
        if s.position >= 0 && s.position as u64 >= head.index && !s.findings_digest.is_empty() {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "the audit did not catch up: {s:?}, head {}",
            head.index
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every finding matching `req`, all pages.
pub async fn list_findings(url: &str, mut req: v1::ListFindingsRequest) -> Vec<v1::Finding> {
    let mut audit = AuditClient::new(ledger_agent::connect(url).await.expect("connect"));
    req.limit = 500;
    let mut out = Vec::new();
    loop {
        let page = audit
            .list_findings(req.clone())
            .await
            .expect("ListFindings")
            .into_inner();
        out.extend(page.findings);
        match page.next_after_seq {
            Some(s) => req.after_seq = Some(s),
            None => return out,
        }
    }
}

/// The codes of some findings.
pub fn codes(fs: &[v1::Finding]) -> Vec<&str> {
    fs.iter().map(|f| f.code.as_str()).collect()
}
