//! CPU-time throughput check (ignored by default; run with
//! `cargo test --release -p rules-blackjack --test cpu_time -- --ignored --nocapture`).
//! Criterion measures wall time, which a loaded shared machine inflates; this reads the
//! thread's own CPU time (Linux /proc/thread-self/schedstat).

use rules_blackjack::{BlackjackEngine, BlackjackState};
use rules_core::{Engine, Options, Round, RoundInput};

fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

include!("../benches/common/seven_seats.rs");

#[test]
#[ignore]
fn cpu_time_per_adjudication() {
    let input: RoundInput =
        serde_json::from_str(include_str!("../../../docs/rounds/blackjack.json")).unwrap();
    let cfg = BlackjackEngine::configure(&input.table).unwrap().config;
    let opts = Options::default();
    let n = 300_000u64;
    let Some(t0) = cpu_ns() else { return };
    for _ in 0..n {
        let mut st = BlackjackState::default();
        std::hint::black_box(
            BlackjackEngine::adjudicate(&cfg, &mut st, std::hint::black_box(&input.round), &opts)
                .unwrap(),
        );
    }
    let t1 = cpu_ns().unwrap_or(t0);
    let per = (t1 - t0) / n;
    println!(
        "docs/rounds/blackjack.json (3 seats): {per} ns CPU per adjudication, {} per second",
        1_000_000_000 / per.max(1)
    );
    let (cfg, round) = seven_seat_round();
    let t0 = cpu_ns().unwrap_or(0);
    for _ in 0..n {
        let mut st = BlackjackState::default();
        std::hint::black_box(
            BlackjackEngine::adjudicate(&cfg, &mut st, std::hint::black_box(&round), &opts)
                .unwrap(),
        );
    }
    let per = (cpu_ns().unwrap_or(t0) - t0) / n;
    println!(
        "7-seat bench round: {per} ns CPU per adjudication, {} per second",
        1_000_000_000 / per.max(1)
    );
}
