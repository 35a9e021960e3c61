//! The conservation invariant of the jackpot accounts over gRPC, under random floor sessions and a
//! kill -9 of ledgerd in the middle of the stream.
//!
//! Each case draws a floor (machines of two models over two casinos, some with their own
//! jackpot, a superjackpot over several) and a few thousand events of play with random
//! mistakes: wrong declarations, short or misplaced awards, meters going back, force majeure
//! with transfers to random targets (eligible or not), transfers without force majeure. The
//! events are signed by the machines and the operator and streamed to a real ledgerd; after a
//! first part (and, in every other case, once the live audit has had time to snapshot), ledgerd
//! is killed (-9) while the agent streams the rest, restarted on the same address, and the agent
//! resends from its last receipt.
//!
//! Afterwards: the pools conserve money exactly (Jackpots.ListPools), every pool's captive value
//! is the floor's own shadow computation to the 1/10,000 cent, the findings are the shadow
//! book's, numbered 0, 1, 2, ... without a duplicate or a gap, and the live findings digest equals
//! an offline `ledgerctl audit --from-genesis --data-dir` of the stopped ledger.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use e2e::slots::*;
use e2e::*;
use jackpot::sim::{Floor, FloorEvent, FloorMachine, FloorPlan};
use jackpot::{ModelApproved, PoolConfigured, PoolKind};
use ledger_agent::DeviceSigner;
use ledger_core::proto::{self as v1, query_client::QueryClient};
use proptest::prelude::*;

/// One machine of a random floor: casino 0/1, model L (else K), meters that wrap, reports every
/// game, has its own jackpot.
type MachineShape = (u8, bool, bool, bool, bool);

fn floor_plan(shape: &[MachineShape]) -> FloorPlan {
    let bets = |l: bool| {
        if l {
            vec![100, 200]
        } else {
            vec![50, 100, 200]
        }
    };
    let mut plan = FloorPlan {
        models: vec![
            ModelApproved {
                model_id: "K".into(),
                theoretical_rtp_bp: 9_200,
                bet_values_cents: bets(false),
                approval_ref: "IGJ-K".into(),
            },
            ModelApproved {
                model_id: "L".into(),
                theoretical_rtp_bp: 8_700,
                bet_values_cents: bets(true),
                approval_ref: "IGJ-L".into(),
            },
        ],
        ..FloorPlan::default()
    };
    for (i, &(casino, l, wraps, games, own)) in shape.iter().enumerate() {
        let id = format!("M{i}");
        plan.machines.push(FloorMachine {
            machine_id: id.as_str().into(),
            casino_id: format!("C{casino}").into(),
            model_id: if l { "L" } else { "K" }.into(),
            bet_values_cents: bets(l),
            rollover: if wraps { 100_000_000 } else { 0 },
            initial_coin_in: if wraps {
                99_900_000 + i as u64
            } else {
                1_000_000 * (i as u64 + 1)
            },
            report_games: games,
        });
        if own {
            plan.pools.push(PoolConfigured {
                pool_id: format!("JP-{id}").into(),
                kind: PoolKind::Jackpot,
                casino_ids: vec![],
                member_machine_ids: vec![id.as_str().into()],
                member_table_ids: vec![],
                contribution_bp: 120,
                start_value_cents: 40_000,
                reset_value_cents: if i % 2 == 0 { 40_000 } else { 0 },
            });
        }
    }
    // A superjackpot over every other machine (across both casinos when there are).
    plan.pools.push(PoolConfigured {
        pool_id: "SJP".into(),
        kind: PoolKind::Superjackpot,
        casino_ids: vec![],
        member_machine_ids: plan
            .machines
            .iter()
            .step_by(2)
            .map(|m| m.machine_id.clone())
            .collect(),
        member_table_ids: vec![],
        contribution_bp: 80,
        start_value_cents: 300_000,
        reset_value_cents: 300_000,
    });
    plan
}

/// A session: set-up, then `steps` of play each followed by one action.
fn session(
    plan: &FloorPlan,
    seed: u64,
    games: u32,
    actions: &[(u8, u16)],
) -> (Floor, Vec<FloorEvent>) {
    let mut floor = Floor::new(plan.clone(), seed, 0);
    for p in &plan.pools {
        floor.set_hit_odds(&p.pool_id, 1_500);
    }
    let machines: Vec<_> = plan.machines.iter().map(|m| m.machine_id.clone()).collect();
    let pools: Vec<&PoolConfigured> = plan.pools.iter().collect();
    let mut events = floor.setup();
    for (step, &(kind, r)) in actions.iter().enumerate() {
        events.extend(floor.play(games));
        let r = r as usize;
        let machine = &machines[r % machines.len()];
        let pool = pools[r % pools.len()];
        let other = pools[(r / 3 + 1 + r % pools.len()) % pools.len()];
        match kind {
            0 => {
                let error = [0, 0, 250, -130][r / 7 % 4];
                events.extend(floor.report_captive(&pool.pool_id, error));
            }
            1 => {
                let winner = if r.is_multiple_of(3) {
                    machine.clone()
                } else {
                    pool.member_machine_ids[r % pool.member_machine_ids.len()].clone()
                };
                let short = [0, 0, 75][r / 5 % 3];
                events.extend(floor.award_events(&pool.pool_id, &winner, step as u64, short));
            }
            2 => {
                events.extend(floor.backwards_reading(machine, 5_000));
                events.extend(floor.restore(machine, "meters verified"));
            }
            3 => {
                events.extend(floor.fail(machine, "destroyed", true));
                if let Some(src) = pools
                    .iter()
                    .find(|p| p.member_machine_ids.contains(machine))
                    && src.pool_id != other.pool_id
                {
                    events.extend(floor.transfer(
                        &format!("T{step}"),
                        &src.pool_id,
                        &other.pool_id,
                        None,
                    ));
                }
                events.extend(floor.restore(machine, "replaced"));
            }
            4 if pool.pool_id != other.pool_id => {
                events.extend(floor.transfer(
                    &format!("T{step}"),
                    &pool.pool_id,
                    &other.pool_id,
                    None,
                ));
            }
            _ => {}
        }
    }
    (floor, events)
}

async fn head(url: &str) -> u64 {
    QueryClient::new(ledger_agent::connect(url).await.expect("connect"))
        .get_head(v1::GetHeadRequest {})
        .await
        .expect("GetHead")
        .into_inner()
        .index
}

async fn run_case(
    shape: Vec<MachineShape>,
    seed: u64,
    games: u32,
    actions: Vec<(u8, u16)>,
    snapshot_first: bool,
) {
    let plan = floor_plan(&shape);
    let (floor, events) = session(&plan, seed, games, &actions);

    let dir = tempdir();
    let cfg = write_config_with_regulator(dir.path());
    let data = dir.path().join("data");
    let started = Instant::now();
    let mut l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let addr = l.addr.clone();
    let url = l.url();
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
    let envs: Vec<v1::Envelope> = events
        .iter()
        .filter_map(|e| {
            let payload = ledger_convert::to_proto::jackpot_event(&e.event)?;
            Some(
                signers
                    .get_mut(signer_id(&e.signer))
                    .expect("signer")
                    .sign(now_ms(), payload),
            )
        })
        .collect();
    assert!(envs.len() >= 1_500, "a few thousand events: {}", envs.len());

    // Part one. In every other case, give the live audit time to snapshot once it sees more,
    // so the restart resumes from a snapshot (committed findings after it are dropped and
    // replayed); otherwise it resumes from genesis (every committed finding dropped).
    let split = envs.len() * 2 / 5;
    let first = submit(&url, &envs[..split]).await;
    if let Some(bad) = first
        .iter()
        .position(|r| st(r) != v1::ReceiptStatus::Accepted)
    {
        panic!(
            "event {bad} of the first part was not stored: {:?}",
            first[bad]
        );
    }
    wait_caught_up(&url).await;
    if snapshot_first {
        let due = ledger_audit::live::SNAPSHOT_EVERY + Duration::from_millis(800);
        if let Some(rest) = due.checked_sub(started.elapsed()) {
            tokio::time::sleep(rest).await;
        }
    }

    // Part two, streamed by an agent in chunks, through a kill -9 and a restart.
    let rest: Vec<v1::Envelope> = envs[split..].to_vec();
    let kill_at = first.last().unwrap().index + rest.len() as u64 / 2;
    let last_index_if_complete = first.last().unwrap().index + rest.len() as u64;
    let agent_url = url.clone();
    let agent = tokio::spawn(async move {
        let opts = ledger_agent::ClientOptions {
            max_attempts: 200,
            backoff: Duration::from_millis(50),
            ..Default::default()
        };
        let mut receipts = Vec::new();
        for chunk in rest.chunks(100) {
            receipts.extend(ledger_agent::submit_all(&agent_url, chunk, &opts).await?);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok::<_, ledger_agent::AgentError>(receipts)
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while head(&url).await < kill_at {
        assert!(Instant::now() < deadline, "the stream stalled");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let at_kill = head(&url).await;
    l.kill9();
    assert!(
        at_kill < last_index_if_complete,
        "the kill happened mid-stream"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    l = Ledgerd::start(&data, &cfg, &addr);
    let second = agent
        .await
        .unwrap()
        .expect("the agent finished after the restart");
    assert_eq!(second.len(), envs.len() - split);
    for r in &second {
        assert!(
            matches!(
                st(r),
                v1::ReceiptStatus::Accepted | v1::ReceiptStatus::Duplicate
            ),
            "{r:?}"
        );
    }
    assert_eq!(
        head(&url).await,
        last_index_if_complete,
        "every event exactly once"
    );

    // The accounts: conservation, and the floor's own computation to the 1/10,000 cent.
    let status = wait_caught_up(&url).await;
    let pools = jackpot_pools(&url).await;
    assert!(pools.conservation_holds);
    assert_eq!(pools.pools.len(), plan.pools.len());
    for p in &plan.pools {
        assert_eq!(
            captive_e4(&pools, &p.pool_id),
            floor.book().pool(&p.pool_id).unwrap().captive_e4,
            "pool {}",
            p.pool_id
        );
    }
    // The findings: numbered without a gap or a duplicate, and exactly the shadow book's.
    let findings = list_findings(&url, v1::ListFindingsRequest::default()).await;
    assert_eq!(findings.len() as u64, status.findings);
    for (i, f) in findings.iter().enumerate() {
        assert_eq!(f.seq, i as u64, "seq contiguous from 0");
    }
    let ids: BTreeSet<&str> = findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids.len(), findings.len(), "no duplicate");
    let mut got: Vec<&str> = codes(&findings);
    let mut want: Vec<&str> = floor.book().findings().iter().map(|f| &*f.code).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);

    // The live digest is the offline replay's.
    l.stop();
    let (code, out, err) = ledgerctl(&[
        "audit",
        "--from-genesis",
        "--data-dir",
        data.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let offline: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(offline["findings"], status.findings);
    assert_eq!(offline["findings_digest"], status.findings_digest.as_str());
}

async fn jackpot_pools(url: &str) -> v1::PoolList {
    v1::jackpots_client::JackpotsClient::new(ledger_agent::connect(url).await.unwrap())
        .list_pools(v1::ListPoolsRequest {})
        .await
        .unwrap()
        .into_inner()
}

static CASE: AtomicUsize = AtomicUsize::new(0);

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 4,
        max_shrink_iters: 0,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn conservation_and_exact_findings_through_a_kill9(
        shape in prop::collection::vec(
            (0u8..2, any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
            3..6,
        ),
        seed in any::<u64>(),
        games in 30u32..45,
        actions in prop::collection::vec((0u8..6, any::<u16>()), 30..40),
    ) {
        // At least two machines report their games, so the stream is a few thousand events.
        let mut shape = shape;
        shape[0].3 = true;
        shape[1].3 = true;
        let snapshot_first = CASE.fetch_add(1, Ordering::Relaxed).is_multiple_of(2);
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(run_case(shape, seed, games, actions, snapshot_first));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Whatever the floor simulator generates (mistakes included) is a well-formed event body:
    /// the ledger refuses malformed bodies, and a refused event would not be the mistake the
    /// test meant to make. (Found on CI: a short award of a pool holding less than the
    /// shortfall came out negative.) Fast, without a server, so it can try many floors.
    #[test]
    fn every_simulated_floor_event_is_well_formed(
        shape in prop::collection::vec(
            (0u8..2, any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
            3..6,
        ),
        seed in any::<u64>(),
        games in 1u32..20,
        actions in prop::collection::vec((0u8..6, any::<u16>()), 30..60),
    ) {
        let plan = floor_plan(&shape);
        let (_, events) = session(&plan, seed, games, &actions);
        for (i, e) in events.iter().enumerate() {
            let Some(payload) = ledger_convert::to_proto::jackpot_event(&e.event) else {
                continue;
            };
            let body = v1::EventBody {
                device_id: signer_id(&e.signer).to_string(),
                sequence: i as u64 + 1,
                occurred_at_ms: 1_800_000_000_000,
                payload: Some(payload),
            };
            if let Err(err) = ledger_core::Event::from_proto(body.clone()) {
                prop_assert!(false, "event {i} is malformed: {err}\n{body:?}");
            }
        }
    }
}
