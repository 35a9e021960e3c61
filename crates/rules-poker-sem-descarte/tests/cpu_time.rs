//! CPU-time throughput check (ignored by default; run with
//! `cargo test --release -p rules-poker-sem-descarte --test cpu_time -- --ignored --nocapture`).
//! Criterion measures wall time, which a loaded shared machine inflates; this reads the
//! thread's own CPU time (Linux /proc/thread-self/schedstat).

use rules_core::{
    Bet, Card, Decision, Engine, EventKind, Options, Recipient, ReportedNet, Round, RoundEvent,
    Settlement, TableConfig,
};
use rules_poker_sem_descarte::{PokerSemDescarteEngine, PsdState};

include!("../benches/common/seven_seats.rs");

fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[test]
#[ignore]
fn cpu_time_per_adjudication() {
    let (cfg, round) = setup();
    let opts = Options::default();
    let n = 200_000u64;
    let Some(t0) = cpu_ns() else { return };
    for _ in 0..n {
        let mut st = PsdState::default();
        std::hint::black_box(
            PokerSemDescarteEngine::adjudicate(&cfg, &mut st, std::hint::black_box(&round), &opts)
                .unwrap(),
        );
    }
    let per = (cpu_ns().unwrap_or(t0) - t0) / n;
    println!(
        "7-seat bench round: {per} ns CPU per adjudication, {} per second",
        1_000_000_000 / per.max(1)
    );
}
