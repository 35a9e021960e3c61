//! At least 100,000 honest simulated rounds across every table game (and the slot floor with its
//! jackpots and superjackpot), streamed over real gRPC into the real ledgerd: the live audit finds
//! nothing at all, and its digest (of no finding) covers the whole chain.
//!
//! The events are signed before streaming (on both cores) and streamed by one agent per table
//! and one for the floor, concurrently. `E2E_HONEST_ROUNDS` changes the number of rounds (the
//! default is the requirement: 100,000).

#[path = "support/play.rs"]
mod play;

use std::time::{Duration, Instant};

use casino_play::sim;
use e2e::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_honest_rounds_give_no_finding() {
    let t0 = Instant::now();
    let rounds: usize = std::env::var("E2E_HONEST_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let plan = sim::standard_plan(
        7,
        0,
        rounds.div_ceil(16),
        false,
        play::OPERATOR,
        "inspectorate",
    );
    let tables = plan.tables.len();
    let session = sim::generate(&plan).expect("generate");
    assert!(session.rounds >= rounds && session.honest_rounds == session.rounds);
    assert!(session.expected.is_empty());
    let gen_secs = t0.elapsed().as_secs_f64();
    let t = Instant::now();
    let signed = play::sign(&session, 7);
    let events = signed.events();
    let floor: usize = signed
        .groups
        .iter()
        .filter(|g| g.name == "floor")
        .map(|g| g.envelopes.len())
        .sum();
    let sign_secs = t.elapsed().as_secs_f64();
    drop(session);

    let dir = tempdir();
    // The session is dated weeks back (it ends a minute ago): a backlog, older than the default
    // age limit of seven days.
    let cfg = write_config(dir.path(), "[ingest]\nmax_past_age_ms = 0\n");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let t = Instant::now();
    play::register_and_open(&url, &signed).await;
    play::stream(&url, &signed, &Default::default()).await;
    let stream_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let status = play::wait_caught_up(&url, Duration::from_secs(1800)).await;
    let catch_up_secs = t.elapsed().as_secs_f64();
    let found = play::findings(&url).await;
    assert!(
        found.is_empty(),
        "\n{}",
        play::describe(&found[..found.len().min(20)])
    );
    assert_eq!(status.findings, 0);
    assert_eq!(status.open_rounds, 0, "every round settled and audited");
    assert!(status.position as u64 >= events as u64);
    eprintln!(
        "{} honest rounds at {tables} tables, {events} events ({floor} of the slot floor): generated in {gen_secs:.1} s, signed in {sign_secs:.1} s, streamed in {stream_secs:.1} s ({:.0} events/s), audit caught up {catch_up_secs:.1} s later; no finding; test took {:.1} s",
        rounds.div_ceil(16) * 16,
        events as f64 / stream_secs,
        t0.elapsed().as_secs_f64()
    );
    l.stop();
}
