//! End-to-end over TLS: the round and jackpot queries answer a principal limited to one casino
//! with that casino's part only. A casino-sim session over two casinos, "lisboa" and "porto"
//! (tables of both, a slot floor with a jackpot of each and a superjackpot shared by both),
//! streamed into the real ledgerd; then lisboa-compliance and porto-compliance ask about their
//! own and each other's rounds, pools, machines and liabilities.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use e2e::slots::{REGULATOR_ID, wait_caught_up, write_config_with_regulator};
use e2e::*;
use ledger_agent::DeviceSigner;
use ledger_core::proto::{self as v1, audit_client::AuditClient, jackpots_client::JackpotsClient};
use tonic::Code;
use tonic::transport::Channel;

async fn channel_as(url: &str, client: &str) -> Channel {
    let p = pki();
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(
            std::fs::read(p.ca()).unwrap(),
        ))
        .identity(tonic::transport::Identity::from_pem(
            std::fs::read(p.cert(client)).unwrap(),
            std::fs::read(p.key(client)).unwrap(),
        ));
    tonic::transport::Endpoint::from_shared(url.to_string())
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap()
}

fn rename(c: &str) -> &'static str {
    match c {
        "casino-lisboa" => "lisboa",
        "casino-estoril" => "porto",
        other => panic!("a casino of the plan: {other}"),
    }
}

/// The standard session (with its planted mistakes when `mistakes`), its casinos renamed lisboa
/// and porto, streamed and audited.
async fn two_casinos(dir: &Path, mistakes: bool) -> (Ledgerd, casino_sim::Session) {
    let cfg = write_config_with_regulator(dir);
    let l = Ledgerd::start(&dir.join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut plan = casino_sim::standard_plan(2, 2, 11, mistakes, "operator-1", REGULATOR_ID);
    for t in &mut plan.tables {
        t.casino_id = rename(&t.casino_id).to_string();
        t.config.casino_id = Some(t.casino_id.clone());
    }
    for m in &mut plan.floor.machines {
        m.casino_id = rename(&m.casino_id).into();
    }
    for p in &mut plan.floor.pools {
        for c in &mut p.casino_ids {
            *c = rename(c).into();
        }
    }
    plan.start_ms = now_ms() - casino_sim::duration_ms(&plan).unwrap() - 60_000;
    let session = casino_sim::generate(&plan).unwrap();
    let specs: Vec<casino_play::sim::DeviceSpec> = session
        .devices
        .iter()
        .map(|d| casino_play::sim::DeviceSpec {
            device_id: d.device_id.clone(),
            kind: d.kind,
            casino_id: d.casino_id.clone(),
            table_ids: d.table_ids.clone(),
            machine_id: d.machine_id.clone(),
            model_id: d.model_id.clone(),
            bet_values_cents: d.bet_values_cents.clone(),
            description: d.description.clone(),
        })
        .collect();
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
        DeviceSigner::new(REGULATOR_ID, e2e::slots::regulator_key(), 1),
    );
    let envs: Vec<v1::Envelope> = session
        .events
        .iter()
        .map(|e| {
            signers
                .get_mut(&e.device_id)
                .unwrap_or_else(|| panic!("no signer {}", e.device_id))
                .sign(e.occurred_at_ms, e.payload.clone())
        })
        .collect();
    for r in submit(&url, &envs).await {
        assert_eq!(st(&r), v1::ReceiptStatus::Accepted, "{r:?}");
    }
    wait_caught_up(&url).await;
    (l, session)
}

fn json(doc: v1::JsonDocument) -> serde_json::Value {
    serde_json::from_str(&doc.json).unwrap()
}

/// The same NOT_FOUND as for an id that does not exist.
fn hidden_like_unknown(hidden: tonic::Status, unknown: tonic::Status, id: &str, what: &str) {
    assert_eq!(
        (hidden.code(), unknown.code()),
        (Code::NotFound, Code::NotFound),
        "{what}: {hidden:?} / {unknown:?}"
    );
    assert_eq!(
        hidden.message().replace(id, "X"),
        unknown.message().replace("no-such-id", "X"),
        "{what}: another casino's is answered as one that does not exist"
    );
}

#[tokio::test]
async fn rounds_and_jackpots_answer_a_casino_with_its_own_part() {
    let dir = tempdir();
    let (l, session) = two_casinos(dir.path(), false).await;
    let url = l.url();
    let casino_of_machine: BTreeMap<String, String> = session
        .devices
        .iter()
        .filter(|d| !d.machine_id.is_empty())
        .map(|d| (d.machine_id.clone(), d.casino_id.clone()))
        .collect();
    let table_of = |casino: &str| {
        session
            .devices
            .iter()
            .find(|d| d.casino_id == casino && !d.table_ids.is_empty())
            .map(|d| d.table_ids[0].clone())
            .unwrap()
    };
    let round_at = |table: &str| {
        session
            .events
            .iter()
            .find_map(|e| match &e.payload {
                v1::event_body::Payload::RoundOpened(o) if o.table_id == table => {
                    Some(o.round_id.clone())
                }
                _ => None,
            })
            .unwrap()
    };
    let mut everyone = JackpotsClient::new(channel_as(&url, "e2e-regulator").await);
    let all_pools = everyone
        .list_pools(v1::ListPoolsRequest {})
        .await
        .unwrap()
        .into_inner();
    let joint: Vec<&v1::PoolSummary> = all_pools
        .pools
        .iter()
        .filter(|p| p.casino_ids.len() > 1)
        .collect();
    assert_eq!(
        joint.len(),
        1,
        "the plan has one superjackpot: {all_pools:?}"
    );
    let sjp = joint[0].pool_id.clone();
    let sjp_all = json(
        everyone
            .get_pool(v1::GetPoolRequest {
                pool_id: sjp.clone(),
                history_limit: 10_000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner(),
    );

    for (who, mine, theirs) in [
        ("lisboa-compliance", "lisboa", "porto"),
        ("porto-compliance", "porto", "lisboa"),
    ] {
        let ch = channel_as(&url, who).await;
        let mut a = AuditClient::new(ch.clone());
        let mut j = JackpotsClient::new(ch);

        // Rounds: its tables' only.
        let (t, r) = (table_of(mine), round_at(&table_of(mine)));
        let detail = a
            .get_round(v1::GetRoundRequest {
                table_id: t.clone(),
                round_id: r.clone(),
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{who} reads round {r} at {t}: {e}"))
            .into_inner();
        assert!(
            detail.summary_json.contains(mine),
            "{}",
            detail.summary_json
        );
        let (t, r) = (table_of(theirs), round_at(&table_of(theirs)));
        let hidden = a
            .get_round(v1::GetRoundRequest {
                table_id: t.clone(),
                round_id: r.clone(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        let unknown = a
            .get_round(v1::GetRoundRequest {
                table_id: t.clone(),
                round_id: "no-such-id".into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        hidden_like_unknown(hidden, unknown, &r, &format!("{who}: round"));

        // Pools: those its casino shares in, with its casino only.
        let pools = j
            .list_pools(v1::ListPoolsRequest {})
            .await
            .unwrap()
            .into_inner();
        assert!(!pools.pools.is_empty(), "{who}");
        for p in &pools.pools {
            assert_eq!(p.casino_ids, [mine], "{who}: {p:?}");
        }
        let own_pool_count = all_pools
            .pools
            .iter()
            .filter(|p| p.casino_ids.iter().any(|c| c == mine))
            .count();
        assert_eq!(pools.pools.len(), own_pool_count, "{who}");
        let theirs_only = all_pools
            .pools
            .iter()
            .find(|p| p.casino_ids == [theirs])
            .unwrap();
        let hidden = j
            .get_pool(v1::GetPoolRequest {
                pool_id: theirs_only.pool_id.clone(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        let unknown = j
            .get_pool(v1::GetPoolRequest {
                pool_id: "no-such-id".into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        hidden_like_unknown(hidden, unknown, &theirs_only.pool_id, "pool");

        // The superjackpot: the pool's totals, and of the machines only its own.
        let page = json(
            j.get_pool(v1::GetPoolRequest {
                pool_id: sjp.clone(),
                history_limit: 10_000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner(),
        );
        assert_eq!(page["pool"]["captive_e4"], sjp_all["pool"]["captive_e4"]);
        assert_eq!(page["pool"]["totals"], sjp_all["pool"]["totals"]);
        assert_eq!(page["pool"]["casinos"], serde_json::json!([mine]));
        let text = page.to_string();
        let theirs_machines: BTreeSet<&str> = casino_of_machine
            .iter()
            .filter(|(_, c)| c.as_str() == theirs)
            .map(|(m, _)| m.as_str())
            .collect();
        for m in &theirs_machines {
            assert!(
                !text.contains(&format!("\"{m}\"")),
                "{who} sees {theirs}'s machine {m} in the superjackpot: {text}"
            );
        }
        let members: Vec<String> = page["pool"]["machines"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert!(!members.is_empty(), "{who}: its own members");
        assert!(
            members.iter().all(|m| casino_of_machine[m] == mine),
            "{who}"
        );
        let all_members = sjp_all["pool"]["machines"].as_object().unwrap();
        assert!(
            all_members.len() > members.len(),
            "the other casino has members too"
        );
        let own_lines = page["history"].as_array().unwrap().len();
        let all_lines = sjp_all["history"].as_array().unwrap().len();
        assert!(
            own_lines < all_lines,
            "{who}: {own_lines} of {all_lines} lines"
        );

        // Liability: its casino, named or not; not the other's, nor everyone's.
        let own = json(
            j.get_liability(v1::LiabilityRequest::default())
                .await
                .unwrap()
                .into_inner(),
        );
        assert_eq!(own["casino_id"], mine, "{own}");
        let e = j
            .get_liability(v1::LiabilityRequest {
                casino_id: theirs.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");

        // Machines: its own only; another casino's is unknown.
        let list = json(
            j.list_machines(v1::ListMachinesRequest::default())
                .await
                .unwrap()
                .into_inner(),
        );
        let ids: Vec<&str> = list["machines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["machine"]["id"].as_str().unwrap())
            .collect();
        assert!(!ids.is_empty(), "{who}");
        assert!(ids.iter().all(|m| casino_of_machine[*m] == mine), "{ids:?}");
        let other = *theirs_machines.iter().next().unwrap();
        let hidden = j
            .get_machine_events(v1::MachineEventsRequest {
                machine_id: other.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        let unknown = j
            .get_machine_events(v1::MachineEventsRequest {
                machine_id: "no-such-id".into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        hidden_like_unknown(hidden, unknown, other, "machine events");
        let hidden = j
            .transfer_candidates(v1::TransferCandidatesRequest {
                machine_id: other.into(),
            })
            .await
            .unwrap_err();
        let unknown = j
            .transfer_candidates(v1::TransferCandidatesRequest {
                machine_id: "no-such-id".into(),
            })
            .await
            .unwrap_err();
        hidden_like_unknown(hidden, unknown, other, "transfer candidates");
        // Its own machine's candidates name none of the other casino's machines.
        let own_machine = casino_of_machine
            .iter()
            .find(|(_, c)| c.as_str() == mine)
            .map(|(m, _)| m.clone())
            .unwrap();
        let c = j
            .transfer_candidates(v1::TransferCandidatesRequest {
                machine_id: own_machine,
            })
            .await
            .unwrap()
            .into_inner();
        for m in &theirs_machines {
            assert!(!c.json.contains(&format!("\"{m}\"")), "{who}: {}", c.json);
        }
    }

    // A transfer out of the superjackpot that is not eligible (its members are not under force
    // majeure): the findings name its members; to lisboa's operator, none of porto's machines.
    let lisboa_pool = all_pools
        .pools
        .iter()
        .find(|p| p.casino_ids == ["lisboa"])
        .map(|p| p.pool_id.clone())
        .expect("a pool of lisboa alone");
    let transfer = v1::JackpotTransfer {
        transfer_id: "T-scoping".into(),
        from_pool_id: sjp.clone(),
        to_pool_id: lisboa_pool,
        amount_cents: 1,
        reason: "test".into(),
        authorization_id: String::new(),
    };
    let messages = |v: v1::TransferValidation| {
        assert!(!v.accepted, "{v:?}");
        v.findings
            .iter()
            .map(|f| f.message.clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let porto_machines: Vec<&str> = casino_of_machine
        .iter()
        .filter(|(_, c)| c.as_str() == "porto")
        .map(|(m, _)| m.as_str())
        .collect();
    let all = messages(
        everyone
            .validate_transfer(transfer.clone())
            .await
            .unwrap()
            .into_inner(),
    );
    assert!(
        porto_machines
            .iter()
            .any(|m| all.contains(&format!("`{m}`"))),
        "the regulator's answer names porto's members: {all}"
    );
    let mut op = JackpotsClient::new(channel_as(&url, "lisboa-operator").await);
    let own = messages(op.validate_transfer(transfer).await.unwrap().into_inner());
    for m in &porto_machines {
        assert!(!own.contains(&format!("`{m}`")), "lisboa-operator: {own}");
    }
    assert!(own.contains("another casino's machine"), "{own}");
    l.stop();
}

async fn review(
    a: &mut AuditClient<Channel>,
    id: &str,
    action: v1::FindingAction,
    comment: &str,
) -> Result<v1::FindingReview, tonic::Status> {
    a.review_finding(v1::ReviewFindingRequest {
        finding_id: id.into(),
        action: action as i32,
        comment: comment.into(),
    })
    .await
    .map(|r| r.into_inner())
}

async fn history(a: &mut AuditClient<Channel>, id: &str) -> v1::FindingDetail {
    a.get_finding(v1::GetFindingRequest {
        finding_id: id.into(),
    })
    .await
    .unwrap()
    .into_inner()
}

/// Findings of one status, as `who` lists them.
async fn with_status(a: &mut AuditClient<Channel>, status: v1::FindingStatus) -> Vec<String> {
    let page = a
        .list_findings(v1::ListFindingsRequest {
            status: status as i32,
            limit: 10_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(page.findings.iter().all(|f| f.status == status as i32));
    page.findings.into_iter().map(|f| f.id).collect()
}

/// A finding's review is recorded in the chain for the principal who made it: only compliance
/// (of the finding's casino) and the regulator may review, another casino's finding reads as
/// one that does not exist, the transitions are enforced, the status filters the list, the
/// history survives a restart and a rebuild of the audit from the chain, and `ledgerctl verify`
/// accepts the chain.
#[tokio::test]
async fn finding_reviews_are_recorded_by_principal_scoped_and_rebuilt_from_the_chain() {
    use v1::{FindingAction as A, FindingStatus as S};
    let dir = tempdir();
    let (l, _session) = two_casinos(dir.path(), true).await;
    let url = l.url();
    let mut reg = AuditClient::new(channel_as(&url, "e2e-regulator").await);
    let all = reg
        .list_findings(v1::ListFindingsRequest {
            limit: 10_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .findings;
    assert!(all.iter().all(|f| f.status == S::Open as i32), "{all:?}");
    let of = |c: &str| {
        all.iter()
            .find(|f| f.casino_id == c)
            .unwrap_or_else(|| panic!("a finding of {c} among {all:?}"))
            .id
            .clone()
    };
    let (lx, po) = (of("lisboa"), of("porto"));

    // Roles: operator, admin and device may not review.
    for who in ["e2e-operator", "e2e-admin", "e2e-device"] {
        let mut a = AuditClient::new(channel_as(&url, who).await);
        let e = review(&mut a, &lx, A::Acknowledge, "").await.unwrap_err();
        assert_eq!(e.code(), Code::PermissionDenied, "{who}: {e:?}");
        assert!(e.message().contains("ReviewFinding"), "{e:?}");
    }
    // Another casino's finding is answered as one that does not exist.
    let mut lisboa = AuditClient::new(channel_as(&url, "lisboa-compliance").await);
    let hidden = review(&mut lisboa, &po, A::Acknowledge, "")
        .await
        .unwrap_err();
    let unknown = review(&mut lisboa, "no-such-id", A::Acknowledge, "")
        .await
        .unwrap_err();
    hidden_like_unknown(hidden, unknown, &po, "ReviewFinding");
    let hidden = lisboa
        .get_finding(v1::GetFindingRequest {
            finding_id: po.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), Code::NotFound, "{hidden:?}");
    // Bad requests change nothing.
    let e = review(&mut lisboa, &lx, A::Resolve, " ").await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("comment:"), "{e:?}");
    let e = review(&mut lisboa, &lx, A::Unspecified, "x")
        .await
        .unwrap_err();
    assert!(e.message().starts_with("action:"), "{e:?}");
    let e = review(&mut lisboa, &lx, A::Acknowledge, &"x".repeat(2001))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(history(&mut reg, &lx).await.history.is_empty());

    // The workflow.
    let ack = review(&mut lisboa, &lx, A::Acknowledge, "seen; table closed")
        .await
        .unwrap();
    let rec = ack.record.clone().unwrap();
    assert_eq!(rec.principal, "lisboa-compliance");
    assert_eq!(rec.principal_role, "compliance");
    assert_eq!(
        rec.principal_fingerprint,
        pki().fingerprint("lisboa-compliance")
    );
    assert_eq!(
        (rec.casino_id.as_str(), rec.previous_status),
        ("lisboa", S::Open as i32)
    );
    let e = review(&mut lisboa, &lx, A::Acknowledge, "")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    review(&mut reg, &lx, A::Dispute, "the payout table says otherwise")
        .await
        .unwrap();
    review(&mut lisboa, &lx, A::Resolve, "player repaid 35 €")
        .await
        .unwrap();
    let e = review(&mut reg, &lx, A::Dispute, "again")
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("resolved"), "{e:?}");
    // Status: in the list (filtered) and in the finding.
    assert_eq!(
        with_status(&mut lisboa, S::Resolved).await,
        std::slice::from_ref(&lx)
    );
    assert!(!with_status(&mut lisboa, S::Open).await.contains(&lx));
    assert!(with_status(&mut reg, S::Open).await.contains(&po));
    let seen = history(&mut lisboa, &lx).await;
    assert_eq!(seen.finding.as_ref().unwrap().status, S::Resolved as i32);
    let steps = |d: &v1::FindingDetail| {
        d.history
            .iter()
            .map(|h| {
                let r = h.record.as_ref().unwrap();
                (h.index, r.action, r.principal.clone(), r.comment.clone())
            })
            .collect::<Vec<_>>()
    };
    let want = steps(&seen);
    assert_eq!(
        want.iter().map(|s| (s.1, s.2.as_str())).collect::<Vec<_>>(),
        [
            (A::Acknowledge as i32, "lisboa-compliance"),
            (A::Dispute as i32, "e2e-regulator"),
            (A::Resolve as i32, "lisboa-compliance"),
        ]
    );
    assert_eq!(want[0].0, ack.index);
    // The CLI: the status column and filter, and its own refusals.
    let (code, out, err) = ledgerctl_as(
        "lisboa-compliance",
        &["findings", "--status", "resolved", "--server", &url],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("resolved") && err.contains("1 finding(s)"),
        "{out}{err}"
    );
    let (code, _, err) = ledgerctl_as(
        "lisboa-compliance",
        &[
            "finding",
            "review",
            &po,
            "--action",
            "acknowledge",
            "--server",
            &url,
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("no finding"), "{err}");
    let (code, _, err) = ledgerctl_as(
        "lisboa-compliance",
        &[
            "finding", "review", &lx, "--action", "close", "--server", &url,
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("--action"), "{err}");

    // After a restart, and after the audit is rebuilt from the chain alone: the same history.
    let data = l.data_dir.clone();
    let cfg = write_config_with_regulator(dir.path());
    l.stop();
    std::fs::remove_dir_all(data.join("audit")).unwrap();
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let url = l.url();
    wait_caught_up(&url).await;
    let mut reg = AuditClient::new(channel_as(&url, "e2e-regulator").await);
    assert_eq!(steps(&history(&mut reg, &lx).await), want);
    assert_eq!(
        with_status(&mut reg, S::Resolved).await,
        std::slice::from_ref(&lx)
    );
    l.stop();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("3 finding review"), "{out}");
}
