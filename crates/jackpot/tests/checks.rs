//! One test per rule / check, named with its citation, and the worked examples W1–W5 of
//! shared/rules/machines.md §13.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;

use common::*;
use jackpot::codes::*;
use jackpot::*;
use rules_core::{Confidence, GameId, JackpotAccount, JackpotWin};

/// Model K (1.00 bets), one machine `m1` in casino A with a 1.2% jackpot starting at 40000.
fn w1_setup() -> T {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    t.machine("m1", "A", "K", &[100]);
    t.pool("jp1", PoolKind::Jackpot, &["m1"], 120, 40_000, 0);
    t
}

// ------------------------------------------------------------------ worked examples (§13)

/// W1 – Jackpot growth (r.3, r.5).
#[test]
fn w1_jackpot_growth_and_captive_mismatch_r3_r5() {
    let mut t = w1_setup();
    assert!(t.read("m1", 2_000_000, 1_800_000, 100_000).is_empty());
    assert!(t.read("m1", 2_750_000, 2_475_000, 137_500).is_empty());
    assert_eq!(t.captive("jp1"), e4c(49_000));
    let f = t.report("jp1", 48_000);
    assert_eq!(codes(&f), [SLOT_JACKPOT_CAPTIVE_MISMATCH]);
    let a = f[0].amounts.unwrap();
    assert_eq!((a.due_cents, a.reported_cents), (49_000, 48_000));
    assert_eq!(f[0].citation, "P217/2007 T.III r.3, r.4, r.5");
    assert_eq!(f[0].machine_id.as_deref(), Some("m1"));
    assert_eq!(f[0].casino_id.as_deref(), Some("A"));
    assert!(t.report("jp1", 49_000).is_empty());
    let st = t.book.reconciliation_status();
    assert_eq!(st[0].status, ReconciliationState::Reconciled);
}

/// W2 – Superjackpot across two casinos (r.4, r.5).
#[test]
fn w2_superjackpot_two_casinos_r4_r5() {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    t.model("L", 9_200, &[200]);
    t.machine("a1", "A", "K", &[100]);
    t.machine("a2", "A", "L", &[200]);
    t.machine("b1", "B", "K", &[100]);
    t.pool(
        "sj",
        PoolKind::Superjackpot,
        &["a1", "a2", "b1"],
        80,
        300_000,
        0,
    );
    for m in ["a1", "a2", "b1"] {
        t.read(m, 1_000_000, 900_000, 50_000);
    }
    t.read("a1", 1_500_000, 1_350_000, 80_000);
    t.read("a2", 1_250_000, 1_125_000, 60_000);
    t.read("b1", 2_250_000, 2_025_000, 90_000);
    assert_eq!(t.captive("sj"), e4c(316_000));
    let p = t.book.pool("sj").unwrap();
    assert_eq!(p.contributed_by[&id("a1")], e4c(4_000));
    assert_eq!(p.contributed_by[&id("a2")], e4c(2_000));
    assert_eq!(p.contributed_by[&id("b1")], e4c(10_000));

    // Trust: listed in full under each casino, joint (r.5; see report module docs).
    let a = t.book.liability("A");
    assert_eq!(a.pools.len(), 1);
    assert!(a.pools[0].joint);
    assert_eq!(a.pools[0].captive_cents, 316_000);
    assert_eq!(a.pools[0].shared_with, vec![id("B")]);
    assert_eq!(a.pools[0].members_here, vec![id("a1"), id("a2")]);
    assert_eq!(a.pools[0].contributed_here_e4, e4c(6_000));
    assert_eq!((a.sole_cents, a.joint_cents), (0, 316_000));
    let tr = t.book.trust_report();
    assert_eq!(tr.casinos.len(), 2);
    assert_eq!(
        tr.total_cents, 316_000,
        "each pool counted once system-wide"
    );

    // Won on the casino-B machine: 316000 due, the pool restarts at 0.
    assert!(t.award("sj", "b1", 316_000).is_empty());
    assert_eq!(t.captive("sj"), 0);
    let h = t.book.pool_history("sj", Period::All).unwrap();
    let last = h.last().unwrap();
    match &last.kind {
        EntryKind::Award {
            member,
            due_e4,
            paid_cents,
            ok,
            reset_e4,
            ..
        } => {
            assert_eq!(&**member, "b1");
            assert_eq!(
                (*due_e4, *paid_cents, *ok, *reset_e4),
                (e4c(316_000), 316_000, true, Some(0))
            );
        }
        other => panic!("{other:?}"),
    }
}

/// W3 – Force majeure with IGJ fallback (r.6).
#[test]
fn w3_force_majeure_igj_fallback_r6() {
    fn setup(with_k_machine: bool) -> T {
        let mut t = T::new();
        t.model("K", 9_000, &[100]);
        t.model("L", 9_000, &[100]);
        t.machine("k1", "A", "K", &[100]);
        t.machine("l1", "A", "L", &[100]);
        if with_k_machine {
            t.machine("k2", "A", "K", &[100]);
        }
        t.pool("jk1", PoolKind::Jackpot, &["k1"], 0, 88_000, 0);
        t.pool("jl1", PoolKind::Jackpot, &["l1"], 0, 10_000, 0);
        t.fault("k1", "destroyed", true, true);
        t
    }
    // Valid: no other model-K 1.00 machine, IGJ authorised before the transfer.
    let mut t = setup(false);
    let tr = T::transfer_ev("t1", "jk1", "jl1", 88_000, Some("igj-1"));
    assert!(matches!(
        t.book.validate_transfer(&tr),
        Err(TransferRejection::Ineligible(f)) if codes(&f) == [SLOT_TRANSFER_TARGET_INVALID]
    ));
    t.auth("igj-1", "jk1", "jl1");
    assert_eq!(t.book.validate_transfer(&tr), Ok(()));
    assert!(
        t.transfer("t1", "jk1", "jl1", 88_000, Some("igj-1"))
            .is_empty()
    );
    assert_eq!(t.captive("jk1"), 0);
    assert_eq!(t.captive("jl1"), e4c(98_000));
    assert!(matches!(
        t.book.transfers()[0].route,
        Some(Route::Authorized { .. })
    ));

    // Without the authorisation: invalid, and booked as carried out (r.5: the value is where
    // the casino put it, held in trust there).
    let mut t = setup(false);
    let f = t.transfer("t1", "jk1", "jl1", 88_000, None);
    assert_eq!(codes(&f), [SLOT_TRANSFER_TARGET_INVALID]);
    assert_eq!(f[0].citation, "P217/2007 T.III r.6");
    assert_eq!(t.captive("jk1"), 0);
    assert_eq!(t.captive("jl1"), e4c(98_000));

    // While a model-K 1.00 machine exists: invalid even with the authorisation ("na sua falta").
    let mut t = setup(true);
    t.auth("igj-1", "jk1", "jl1");
    let f = t.transfer("t1", "jk1", "jl1", 88_000, Some("igj-1"));
    assert_eq!(codes(&f), [SLOT_TRANSFER_TARGET_INVALID]);
    assert!(f[0].message.contains("k2"), "{}", f[0].message);
    assert_eq!(t.captive("jk1"), 0);
    assert_eq!(t.captive("jl1"), e4c(98_000));
}

/// W4 – Meters (r.9, r.14): bets and prizes went back → one finding.
#[test]
fn w4_meters_decreased_r9_r14() {
    let mut t = w1_setup();
    assert!(t.read("m1", 900_000, 810_000, 95_000).is_empty());
    let f = t.read("m1", 880_000, 800_000, 97_000);
    assert_eq!(codes(&f), [SLOT_METER_DECREASED]);
    assert!(f[0].message.contains("coin_in 900000 → 880000"));
    assert!(f[0].message.contains("coin_out 810000 → 800000"));
    assert_eq!(f[0].evidence, vec![4, 5]);
    assert_eq!(f[0].citation, "P217/2007 T.III r.9, r.14");
    // Nothing credited for the backward step; the meter is re-baselined at its new value.
    assert_eq!(t.captive("jp1"), e4c(40_000));
    assert!(
        t.read("m1", 890_000, 805_000, 98_000)
            .iter()
            .all(|f| f.code != SLOT_METER_DECREASED)
    );
    assert_eq!(t.captive("jp1"), e4c(40_000) + 10_000 * 120);
}

/// W5 – Return (r.2): observed 81% is informational; a 79% pay table is a finding whatever the
/// meters show.
#[test]
fn w5_return_to_player_r2() {
    let mut t = T::new();
    t.model("N", 9_100, &[100]);
    t.machine("m1", "A", "N", &[100]);
    t.read("m1", 1_000_000, 900_000, 0);
    let f = t.read("m1", 5_000_000, 4_140_000, 0);
    assert!(f.is_empty(), "observed return is not a violation: {f:?}");
    let r = t.book.machine_return("m1", Period::All).unwrap();
    assert_eq!(r.coin_in_cents, 4_000_000);
    assert_eq!(r.won_cents, 3_240_000);
    assert_eq!(r.actual_bp, Some(8_100));
    assert_eq!(r.theoretical_rtp_bp, Some(9_100));
    assert_eq!(r.expected_rtp_bp, Some(9_100));
    assert_eq!(r.variance_cents, Some(-400_000));
    assert_eq!(r.variance_bp, Some(-1_000));

    let f = t.model("M79", 7_900, &[100]);
    assert_eq!(codes(&f), [SLOT_PAYTABLE_RETURN_BELOW_80]);
    assert_eq!(f[0].confidence, Confidence::Certain);
    assert_eq!(f[0].model_id.as_deref(), Some("M79"));
    let f = t.machine("m79", "A", "M79", &[100]);
    assert_eq!(codes(&f), [SLOT_PAYTABLE_RETURN_BELOW_80]);
    assert_eq!(f[0].machine_id.as_deref(), Some("m79"));
}

// ------------------------------------------------------------------------------- meters

/// r.9: at least the bets, prizes and drop meters.
#[test]
fn r9_reading_without_mandatory_meter() {
    let mut t = w1_setup();
    let f = t.meters(
        "m1",
        vec![Meter::new(COIN_IN, 10, 0), Meter::new(COIN_OUT, 5, 0)],
    );
    assert_eq!(codes(&f), [SLOT_METER_MISSING]);
    assert!(f[0].message.contains("total_drop"));
    assert_eq!(f[0].citation, "P217/2007 T.III r.9");
}

/// r.9: a missing meter credits nothing, and its next reading covers the whole gap.
#[test]
fn r9_missing_coin_in_loses_no_wager() {
    let mut t = w1_setup();
    t.read("m1", 1_000, 0, 0);
    t.meters(
        "m1",
        vec![Meter::new(COIN_OUT, 10, 0), Meter::new(TOTAL_DROP, 10, 0)],
    );
    assert_eq!(t.captive("jp1"), e4c(40_000));
    t.restore("m1");
    t.read("m1", 11_000, 20, 20);
    assert_eq!(t.captive("jp1"), e4c(40_000) + 10_000 * 120);
}

/// Rollover: a wrap below half the modulus is an increase.
#[test]
fn r9_rollover_is_an_increase() {
    let mut t = w1_setup();
    let r = 100_000_000;
    let m = |ci, co, d| {
        vec![
            Meter::new(COIN_IN, ci, r),
            Meter::new(COIN_OUT, co, r),
            Meter::new(TOTAL_DROP, d, r),
        ]
    };
    assert!(t.meters("m1", m(99_990_000, 99_000_000, 5)).is_empty());
    assert!(t.meters("m1", m(10_000, 99_018_000, 10)).is_empty());
    // +20,000 wagered at 1.2% = 240 cents.
    assert_eq!(t.captive("jp1"), e4c(40_240));
    let r = t.book.machine_return("m1", Period::All).unwrap();
    assert_eq!((r.coin_in_cents, r.coin_out_cents), (20_000, 18_000));
}

/// Rollover: a "wrap" implying more than half the modulus is a meter going back.
#[test]
fn r9_r14_implausible_rollover_is_a_decrease() {
    let mut t = w1_setup();
    let m = |ci| {
        vec![
            Meter::new(COIN_IN, ci, 1_000),
            Meter::new(COIN_OUT, 0, 1_000),
            Meter::new(TOTAL_DROP, 0, 1_000),
        ]
    };
    t.meters("m1", m(600));
    let f = t.meters("m1", m(500));
    assert_eq!(codes(&f), [SLOT_METER_DECREASED]);
    assert_eq!(t.captive("jp1"), e4c(40_000));
}

/// A meter above its own rollover is malformed: an ApplyError that changes nothing.
#[test]
fn meter_above_rollover_is_an_apply_error() {
    let mut t = w1_setup();
    let e = t.err(Event::MeterReading(MeterReading {
        machine_id: id("m1"),
        meters: vec![Meter::new(COIN_IN, 1_000, 1_000)],
    }));
    assert!(
        matches!(&e, ApplyError::Invalid { field, .. } if field == "meters[0].value"),
        "{e}"
    );
    let e = t.err(Event::MeterReading(MeterReading {
        machine_id: id("m1"),
        meters: vec![Meter::new(COIN_IN, 1, 0), Meter::new(COIN_IN, 2, 0)],
    }));
    assert!(
        matches!(&e, ApplyError::Invalid { field, .. } if field == "meters[1].name"),
        "{e}"
    );
}

/// M2: a RAM clear with before and after is the legitimate way back; the play up to "before"
/// is credited.
#[test]
fn m2_ram_clear_rebaselines() {
    let mut t = w1_setup();
    t.read("m1", 500_000, 400_000, 1_000);
    let f = t.ev(Event::RamClear(RamClear {
        machine_id: id("m1"),
        before: meters3(600_000, 480_000, 2_000),
        after: meters3(0, 0, 0),
    }));
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(t.captive("jp1"), e4c(40_000) + 100_000 * 120);
    let f = t.read("m1", 50_000, 45_000, 500);
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(t.captive("jp1"), e4c(40_000) + 150_000 * 120);
    let r = t.book.machine_return("m1", Period::All).unwrap();
    assert_eq!((r.coin_in_cents, r.coin_out_cents), (150_000, 125_000));
}

/// RAM clear without the readings before and after (r.9, r.14, record convention).
#[test]
fn r9_r14_ram_clear_undocumented() {
    let mut t = w1_setup();
    t.read("m1", 500_000, 400_000, 1_000);
    let f = t.ev(Event::RamClear(RamClear {
        machine_id: id("m1"),
        before: vec![],
        after: vec![Meter::new(COIN_IN, 0, 0)],
    }));
    assert_eq!(codes(&f), [SLOT_RAM_CLEAR_UNDOCUMENTED]);
    assert!(
        f[0].message
            .contains("'before' lacks coin_in, coin_out, total_drop")
    );
    assert!(f[0].message.contains("'after' lacks coin_out, total_drop"));
}

/// RAM clear whose "before" contradicts the last reading (r.9, r.14).
#[test]
fn r9_r14_ram_clear_before_mismatch() {
    let mut t = w1_setup();
    t.read("m1", 500_000, 400_000, 1_000);
    let f = t.ev(Event::RamClear(RamClear {
        machine_id: id("m1"),
        before: meters3(450_000, 400_000, 1_000),
        after: meters3(0, 0, 0),
    }));
    assert_eq!(codes(&f), [SLOT_RAM_CLEAR_BEFORE_MISMATCH]);
    assert_eq!(t.captive("jp1"), e4c(40_000));
}

/// r.9 "sob pena de ficar interdita a sua abertura à exploração": bets after a meter fault and
/// before a restore (Review), once per episode.
#[test]
fn r9_played_with_faulty_meter() {
    let mut t = w1_setup();
    t.read("m1", 1_000, 0, 0);
    t.fault("m1", "meter_fault", false, false);
    assert!(t.read("m1", 1_000, 0, 0).is_empty(), "no bets, no finding");
    let f = t.read("m1", 2_000, 0, 0);
    assert_eq!(codes(&f), [SLOT_PLAYED_WITH_FAULTY_METER]);
    assert_eq!(f[0].confidence, Confidence::Review);
    assert_eq!(f[0].evidence, vec![5, 7]);
    assert!(t.read("m1", 3_000, 0, 0).is_empty(), "once per episode");
    assert!(t.game("m1", 100, 0).is_empty());
    t.restore("m1");
    assert!(
        t.read("m1", 4_000, 0, 0)
            .iter()
            .all(|f| f.code != SLOT_PLAYED_WITH_FAULTY_METER)
    );
    // A game with a wager is a bet too.
    t.fault("m1", "meter_coin_in", false, false);
    assert_eq!(
        codes(&t.game("m1", 100, 0)),
        [SLOT_PLAYED_WITH_FAULTY_METER]
    );
    // A fault declared by an event is known from the event on: the first reading after it
    // counts (unlike a fault a reading shows, whose own play does not).
    let mut t = w1_setup();
    t.read("m1", 1_000, 0, 0);
    t.fault("m1", "meter_fault", false, false);
    assert_eq!(
        codes(&t.read("m1", 2_000, 0, 0)),
        [SLOT_PLAYED_WITH_FAULTY_METER]
    );
}

/// P217/2007 T.III r.9: "played with a faulty meter" is play *after* the reading that showed the
/// fault (a mandatory meter missing, a meter that went back), never the play inside that same
/// reading: that play happened before anyone could know, and the reading's own finding is the
/// breach.
#[test]
fn r9_played_with_missing_or_decreased_meter() {
    let mut t = w1_setup();
    t.read("m1", 1_000, 0, 0);
    let f = t.meters(
        "m1",
        vec![Meter::new(COIN_IN, 2_000, 0), Meter::new(COIN_OUT, 0, 0)],
    );
    assert_eq!(
        codes(&f),
        [SLOT_METER_MISSING],
        "the play inside the reading"
    );
    // Played after it, before a restore: now it is.
    let f = t.read("m1", 3_000, 0, 0);
    assert_eq!(codes(&f), [SLOT_PLAYED_WITH_FAULTY_METER]);
    assert_eq!(f[0].evidence, vec![5, 6], "the faulty reading and this one");

    // coin_in itself missing: the next increase spans the fault and cannot be told apart; the
    // one after it can.
    let mut t = w1_setup();
    t.read("m1", 1_000, 0, 0);
    let f = t.meters(
        "m1",
        vec![Meter::new(COIN_OUT, 0, 0), Meter::new(TOTAL_DROP, 0, 0)],
    );
    assert_eq!(codes(&f), [SLOT_METER_MISSING]);
    assert!(t.read("m1", 2_000, 0, 0).is_empty());
    assert_eq!(
        codes(&t.read("m1", 3_000, 0, 0)),
        [SLOT_PLAYED_WITH_FAULTY_METER]
    );
    // A game with a wager after the faulty reading is play after it.
    let mut t = w1_setup();
    t.read("m1", 1_000, 0, 0);
    t.meters(
        "m1",
        vec![Meter::new(COIN_IN, 2_000, 0), Meter::new(COIN_OUT, 0, 0)],
    );
    assert_eq!(
        codes(&t.game("m1", 100, 0)),
        [SLOT_PLAYED_WITH_FAULTY_METER]
    );

    let mut t = w1_setup();
    t.read("m1", 1_000, 500, 0);
    assert_eq!(codes(&t.read("m1", 2_000, 400, 0)), [SLOT_METER_DECREASED]);
    assert_eq!(
        codes(&t.read("m1", 3_000, 900, 0)),
        [SLOT_PLAYED_WITH_FAULTY_METER]
    );
}

/// Bets while out of service (record convention; Review).
#[test]
fn played_out_of_service() {
    let mut t = w1_setup();
    t.read("m1", 1_000, 0, 0);
    t.fault("m1", "door_open", true, false);
    let f = t.read("m1", 2_000, 0, 0);
    assert_eq!(codes(&f), [SLOT_PLAYED_OUT_OF_SERVICE]);
    assert_eq!(f[0].confidence, Confidence::Review);
}

/// r.9, r.14: game events between two readings against the meter increases.
#[test]
fn r9_r14_meter_deltas_against_games() {
    let mut t = w1_setup();
    t.meters(
        "m1",
        vec![
            Meter::new(COIN_IN, 1_000, 0),
            Meter::new(COIN_OUT, 0, 0),
            Meter::new(TOTAL_DROP, 0, 0),
            Meter::new(GAMES_PLAYED, 10, 0),
        ],
    );
    t.game("m1", 100, 0);
    t.game("m1", 100, 250);
    let ok = |ci, co, g| {
        vec![
            Meter::new(COIN_IN, ci, 0),
            Meter::new(COIN_OUT, co, 0),
            Meter::new(TOTAL_DROP, 0, 0),
            Meter::new(GAMES_PLAYED, g, 0),
        ]
    };
    assert!(t.meters("m1", ok(1_200, 250, 12)).is_empty());
    t.game("m1", 100, 0);
    let f = t.meters("m1", ok(1_400, 300, 13));
    assert_eq!(codes(&f), [SLOT_METER_GAME_MISMATCH]);
    assert!(
        f[0].message.contains("Δcoin_in 200 vs Σ wager 100"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].message.contains("Δcoin_out 50 vs Σ win 0"),
        "{}",
        f[0].message
    );
    assert!(!f[0].message.contains("games_played"), "{}", f[0].message);
}

/// r.3, r.4: contributions a machine reports against the rate × Δcoin_in (Review).
#[test]
fn r3_r4_reported_contributions() {
    let mut t = w1_setup();
    t.read("m1", 100_000, 0, 0);
    let rep = |t: &mut T, c| {
        t.ev(Event::JackpotContribution(JackpotContribution {
            pool_id: id("jp1"),
            machine_id: id("m1"),
            amount_cents: c,
        }))
    };
    // 1.2% of 10,001 = 120.012 cents: two reports of 60 are within one cent each.
    rep(&mut t, 60);
    rep(&mut t, 60);
    assert!(t.read("m1", 110_001, 0, 0).is_empty());
    let window_from = t.idx;
    rep(&mut t, 40);
    let first_report = t.idx;
    rep(&mut t, 60);
    let f = t.read("m1", 120_001, 0, 0);
    assert_eq!(codes(&f), [SLOT_JACKPOT_CONTRIBUTION_MISMATCH]);
    assert_eq!(f[0].confidence, Confidence::Review);
    assert_eq!(f[0].amounts.unwrap().due_cents, 120);
    // The evidence: the reading that opened the window and the window's first report.
    for i in [window_from, first_report] {
        assert!(f[0].evidence.contains(&i), "{i} in {:?}", f[0].evidence);
    }

    t.machine("m2", "A", "K", &[100]);
    let f = t.ev(Event::JackpotContribution(JackpotContribution {
        pool_id: id("jp1"),
        machine_id: id("m2"),
        amount_cents: 5,
    }));
    assert_eq!(codes(&f), [SLOT_JACKPOT_CONTRIBUTION_MISMATCH]);
}

/// r.2, M4: the lifetime observed return is a statistical alert only (Info, Review).
#[test]
fn r2_observed_return_low_alert() {
    let mut t = w1_setup();
    t.read("m1", 0, 0, 0);
    assert!(
        t.read("m1", 5_000_000, 3_000_000, 0).is_empty(),
        "below the volume threshold"
    );
    let f = t.read("m1", 10_000_000, 6_000_000, 0);
    assert_eq!(codes(&f), [SLOT_OBSERVED_RETURN_LOW]);
    assert_eq!(
        (f[0].severity, f[0].confidence),
        (rules_core::Severity::Info, Confidence::Review)
    );
    assert!(
        t.read("m1", 11_000_000, 6_100_000, 0).is_empty(),
        "raised once"
    );
    // Back above 80% re-arms the alert.
    t.read("m1", 31_000_000, 26_100_000, 0);
    assert_eq!(
        codes(&t.read("m1", 41_000_000, 26_100_000, 0)),
        [SLOT_OBSERVED_RETURN_LOW]
    );
}

// ----------------------------------------------------------------------- return to player

/// r.2 with r.3/r.4 "sem prejuízo", M5: below 80% only under reading (i) → Review; below even
/// counting the jackpot → Certain.
#[test]
fn r2_m5_jackpot_contributions_and_the_80_percent() {
    let mut t = T::new();
    t.model("B79", 7_900, &[100]);
    t.machine("m1", "A", "B79", &[100]);
    t.machine("m2", "A", "B79", &[100]);
    // The machines were flagged at registration (no jackpot yet): Certain.
    let f = t.pool("jp1", PoolKind::Jackpot, &["m1"], 200, 0, 0);
    assert_eq!(codes(&f), [SLOT_PAYTABLE_RETURN_BELOW_80]);
    assert_eq!(
        f[0].confidence,
        Confidence::Review,
        "79% + 2% reaches 80% only under reading (ii)"
    );
    let f = t.pool("jp2", PoolKind::Jackpot, &["m2"], 50, 0, 0);
    assert_eq!(codes(&f), [SLOT_PAYTABLE_RETURN_BELOW_80]);
    assert_eq!(
        f[0].confidence,
        Confidence::Certain,
        "79% + 0.5% is below either way"
    );
    // Re-approval at 80%: no finding, flags cleared.
    assert!(t.model("B79", 8_000, &[100]).is_empty());
}

/// r.2: actual return per machine and per model over index and time periods.
#[test]
fn r2_return_per_machine_and_model_over_periods() {
    let mut t = T::new();
    t.model("N", 9_000, &[100]);
    t.machine("m1", "A", "N", &[100]);
    t.machine("m2", "A", "N", &[100]);
    t.pool("jp1", PoolKind::Jackpot, &["m1"], 100, 0, 0); // m1 expects 91%
    t.read("m1", 0, 0, 0); // 5
    t.read("m2", 0, 0, 0); // 6
    t.read("m1", 10_000, 9_500, 0); // 7
    t.read("m2", 10_000, 8_000, 0); // 8
    t.read("m1", 20_000, 17_000, 0); // 9
    let r = t
        .book
        .machine_return("m1", Period::Indexes { from: 7, to: 8 })
        .unwrap();
    assert_eq!(
        (r.coin_in_cents, r.won_cents, r.readings),
        (10_000, 9_500, 1)
    );
    assert_eq!(r.expected_rtp_bp, Some(9_100));
    assert_eq!(r.actual_bp, Some(9_500));
    assert_eq!(r.variance_e4, Some((9_500 - 9_100) * 10_000));
    let r = t.book.model_return("N", Period::All).unwrap();
    assert_eq!((r.coin_in_cents, r.won_cents), (30_000, 25_000));
    // expected: m1 20,000 × 91% + m2 10,000 × 90% = 27,200 cents
    assert_eq!(r.expected_won_e4, Some(27_200 * 10_000));
    assert_eq!(r.expected_rtp_bp, Some(9_067)); // 27,200 / 30,000 = 90.666… → 9067
    assert_eq!(r.actual_bp, Some(8_333)); // 83.333…
    assert_eq!(r.variance_cents, Some(-2_200));
    let at8 = 1_700_000_000_000 + 8 * 1000;
    let r = t
        .book
        .model_return(
            "N",
            Period::Times {
                from_ms: at8,
                to_ms: at8 + 1,
            },
        )
        .unwrap();
    assert_eq!((r.coin_in_cents, r.won_cents), (10_000, 8_000));
    assert!(t.book.machine_return("zz", Period::All).is_err());
}

// -------------------------------------------------------------------------------- pools

/// r.5 (M6): the prize paid must be the whole captive value.
#[test]
fn r5_award_mismatch_and_reset() {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    t.machine("m1", "A", "K", &[100]);
    t.pool("jp1", PoolKind::Jackpot, &["m1"], 120, 40_000, 5_000);
    let f = t.award("jp1", "m1", 39_000);
    assert_eq!(codes(&f), [SLOT_JACKPOT_AWARD_MISMATCH]);
    let a = f[0].amounts.unwrap();
    assert_eq!((a.due_cents, a.reported_cents), (40_000, 39_000));
    // The award happened: the whole captive value is released and the pool reset.
    assert_eq!(t.captive("jp1"), e4c(5_000));
    let c = t.book.conservation();
    assert_eq!(c.awarded_e4, e4c(40_000));
    assert_eq!(c.seeded_e4, e4c(45_000));
}

/// r.3, r.4: a jackpot paid on another machine, a superjackpot outside the group.
#[test]
fn r3_r4_award_machine_not_in_pool() {
    let mut t = w1_setup();
    t.machine("m2", "A", "K", &[100]);
    let f = t.award("jp1", "m2", 40_000);
    assert_eq!(codes(&f), [SLOT_AWARD_MACHINE_NOT_IN_POOL]);
    assert!(f[0].message.contains("other than its own"));
    t.pool("sj", PoolKind::Superjackpot, &["m1"], 10, 1_000, 0);
    let f = t.award("sj", "m2", 1_000);
    assert_eq!(codes(&f), [SLOT_AWARD_MACHINE_NOT_IN_POOL]);
    assert!(f[0].message.contains("outside its group"));
}

/// M7: contributions are exact; declarations are compared within one cent.
#[test]
fn m7_exact_contributions_and_tolerance() {
    let mut t = T::new();
    t.model("K", 9_000, &[1]);
    t.machine("m1", "A", "K", &[1]);
    t.pool("jp1", PoolKind::Jackpot, &["m1"], 80, 0, 0);
    t.read("m1", 0, 0, 0);
    // 1,001 readings of +1 cent at 0.8%: 1,001 × 0.008 = 8.008 cents.
    for i in 1..=1_001 {
        t.read("m1", i, 0, 0);
    }
    assert_eq!(t.captive("jp1"), 80_080);
    assert!(t.report("jp1", 8).is_empty());
    assert!(t.report("jp1", 9).is_empty(), "within one cent");
    assert_eq!(codes(&t.report("jp1", 7)), [SLOT_JACKPOT_CAPTIVE_MISMATCH]);
    let cv = t.book.captive_values();
    assert_eq!((cv[0].captive_e4, cv[0].captive_cents), (80_080, 8));
}

/// A machine joining a pool contributes from its first reading after joining.
#[test]
fn member_baseline_after_joining() {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    t.machine("m1", "A", "K", &[100]);
    t.read("m1", 1_000_000, 0, 0);
    t.read("m1", 2_000_000, 0, 0); // played before the pool existed
    t.pool("jp1", PoolKind::Jackpot, &["m1"], 100, 0, 0);
    t.read("m1", 3_000_000, 0, 0); // includes pre-pool play: the member's baseline
    assert_eq!(t.captive("jp1"), 0);
    t.read("m1", 3_100_000, 0, 0);
    assert_eq!(t.captive("jp1"), e4c(1_000));
}

/// r.8 (Review): bets the approved model does not list; a contribution rate changed by a
/// reconfiguration.
#[test]
fn r8_model_changed_unapproved() {
    let mut t = T::new();
    t.model("K", 9_000, &[100, 200]);
    assert!(t.machine("m1", "A", "K", &[200, 100]).is_empty());
    let f = t.machine("m1", "A", "K", &[100, 500]);
    assert_eq!(codes(&f), [SLOT_MODEL_CHANGED_UNAPPROVED]);
    assert_eq!(f[0].confidence, Confidence::Review);
    assert!(
        t.machine("m1", "A", "K", &[100, 500]).is_empty(),
        "same verdict, not repeated"
    );
    // The IGJ approves the new bets: an approved change, no finding.
    assert!(t.model("K", 9_000, &[100, 200, 500]).is_empty());

    t.pool("jp1", PoolKind::Jackpot, &["m1"], 100, 0, 0);
    let f = t.pool("jp1", PoolKind::Jackpot, &["m1"], 150, 0, 0);
    assert_eq!(codes(&f), [SLOT_MODEL_CHANGED_UNAPPROVED]);
    assert_eq!(f[0].pool_id.as_deref(), Some("jp1"));
}

// ------------------------------------------------------------------------------ transfers

/// Two model-K machines with jackpots, a model-L machine, in casino A; `k1` destroyed.
fn transfer_setup() -> T {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    t.model("L", 9_000, &[100]);
    t.machine("k1", "A", "K", &[100]);
    t.machine("k2", "A", "K", &[100]);
    t.machine("k3", "A", "K", &[100, 200]);
    t.machine("l1", "A", "L", &[100]);
    t.pool("jk1", PoolKind::Jackpot, &["k1"], 100, 50_000, 0);
    t.pool("jk2", PoolKind::Jackpot, &["k2"], 100, 20_000, 0);
    t.pool("jk3", PoolKind::Jackpot, &["k3"], 100, 20_000, 0);
    t.pool("jl1", PoolKind::Jackpot, &["l1"], 100, 20_000, 0);
    t
}

/// r.6: same model and bets needs no authorisation; the whole value moves.
#[test]
fn r6_same_model_and_bets_transfer() {
    let mut t = transfer_setup();
    t.fault("k1", "destroyed", true, true);
    assert!(t.transfer("t1", "jk1", "jk2", 50_000, None).is_empty());
    assert_eq!(t.captive("jk1"), 0);
    assert_eq!(t.captive("jk2"), e4c(70_000));
    assert_eq!(t.book.transfers()[0].route, Some(Route::SameModelAndBets));
    let c = t.book.conservation();
    assert!(c.holds);
    assert_eq!(
        (c.transferred_in_e4, c.transferred_out_e4),
        (e4c(50_000), e4c(50_000))
    );
    // "mesmo modelo e apostas": same model with other bets is another machine type.
    let mut t = transfer_setup();
    t.fault("k1", "destroyed", true, true);
    assert_eq!(
        codes(&t.transfer("t1", "jk1", "jk3", 50_000, None)),
        [SLOT_TRANSFER_TARGET_INVALID]
    );
}

/// P217/2007 T.III r.5, r.6: no force majeure, no transfer; one the casino carried out all the
/// same is booked as carried out (the source restarts at 0, the target holds the whole value).
#[test]
fn r5_r6_transfer_without_force_majeure() {
    let mut t = transfer_setup();
    t.fault("k1", "door_open", true, false);
    let f = t.transfer("t1", "jk1", "jk2", 50_000, None);
    assert_eq!(codes(&f), [SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE]);
    assert_eq!(f[0].citation, "P217/2007 T.III r.5, r.6");
    assert_eq!(t.captive("jk1"), 0);
    assert_eq!(t.captive("jk2"), e4c(70_000));
    let rec = &t.book.transfers()[0];
    assert!(rec.booked);
    assert_eq!(rec.route, Some(Route::SameModelAndBets));
    assert_eq!(rec.codes, [SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE]);
    // The casino's declarations of both pools now agree with the book: nothing more to flag.
    assert!(t.report("jk1", 0).is_empty());
    assert!(t.report("jk2", 70_000).is_empty());
    // Force majeure ended by a restore: no longer transferable.
    let mut t = transfer_setup();
    t.fault("k1", "destroyed", true, true);
    t.restore("k1");
    assert_eq!(
        codes(&t.transfer("t2", "jk1", "jk2", 50_000, None)),
        [SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE]
    );
    // A superjackpot can be awarded while any member is not under force majeure.
    t.pool("sj", PoolKind::Superjackpot, &["k1", "k2"], 10, 1_000, 0);
    t.fault("k1", "destroyed", true, true);
    let f = t.transfer("t3", "sj", "jl1", 1_000, None);
    assert!(codes(&f).contains(&SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE));
    assert!(f[0].message.contains("`k2`"));
}

/// P217/2007 T.III r.5, r.6: the whole captive value is due (within one cent). A transfer of
/// another amount is booked with the whole value ("disponíveis ... por forma a serem entregues
/// aos beneficiários", r.5), the finding names both amounts, and the target's later
/// declarations showing the casino's amount are not flagged again (one breach, one finding).
#[test]
fn r5_r6_transfer_amount_mismatch() {
    let mut t = transfer_setup();
    t.fault("k1", "destroyed", true, true);
    let f = t.transfer("t1", "jk1", "jk2", 40_000, None);
    assert_eq!(codes(&f), [SLOT_TRANSFER_AMOUNT_MISMATCH]);
    let a = f[0].amounts.unwrap();
    assert_eq!((a.due_cents, a.reported_cents), (50_000, 40_000));
    assert!(f[0].message.contains("40000") && f[0].message.contains("50000"));
    assert_eq!(t.captive("jk1"), 0);
    assert_eq!(t.captive("jk2"), e4c(70_000), "the whole value due");
    assert!(t.book.transfers()[0].booked);
    let p = t.book.pool("jk2").unwrap();
    assert_eq!(p.transfer_shortfall_e4, e4c(10_000));
    // The target shows what the casino moved (60,000): the same breach, not a new finding.
    assert!(t.report("jk2", 60_000).is_empty());
    // Another difference is a new one.
    assert_eq!(
        codes(&t.report("jk2", 59_000)),
        [SLOT_JACKPOT_CAPTIVE_MISMATCH]
    );
    // Made good: the whole value shown ends the shortfall.
    assert!(t.report("jk2", 70_000).is_empty());
    assert_eq!(t.book.pool("jk2").unwrap().transfer_shortfall_e4, 0);
    assert_eq!(
        codes(&t.report("jk2", 60_000)),
        [SLOT_JACKPOT_CAPTIVE_MISMATCH]
    );
}

/// P217/2007 T.III r.5, r.6: an ineligible transfer the casino carried out (target of another
/// model, no force majeure, wrong amount: all at once) is booked as carried out, one finding per
/// breach, and every later declaration of both pools that follows the casino's books is clean.
#[test]
fn r5_r6_ineligible_transfer_booked_as_carried_out() {
    let mut t = transfer_setup();
    t.read("k1", 1_000_000, 0, 0);
    t.read("k1", 1_500_000, 0, 0); // + 1% of 500,000 = 5,000
    assert_eq!(t.captive("jk1"), e4c(55_000));
    let f = t.transfer("t1", "jk1", "jl1", 55_000, None);
    assert_eq!(
        codes(&f),
        [
            SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE,
            SLOT_TRANSFER_TARGET_INVALID
        ]
    );
    assert!(
        f.iter()
            .all(|f| f.citation.starts_with("P217/2007 T.III r."))
    );
    assert_eq!(t.captive("jk1"), 0, "the source restarts at 0");
    assert_eq!(
        t.captive("jl1"),
        e4c(75_000),
        "the target holds the whole value"
    );
    let rec = &t.book.transfers()[0];
    assert!(rec.booked && rec.route.is_none());
    assert_eq!(rec.due_e4, e4c(55_000));
    // The history says what moved and why it was flagged.
    let h = t.book.pool_history("jk1", Period::All).unwrap();
    match &h.last().unwrap().kind {
        EntryKind::TransferOut {
            amount_e4,
            route,
            codes,
            ..
        } => {
            assert_eq!(*amount_e4, e4c(55_000));
            assert!(route.is_none());
            assert_eq!(codes.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    // Later declarations on the target (and the source) are what the casino holds: clean.
    assert!(t.report("jl1", 75_000).is_empty());
    assert!(t.report("jk1", 0).is_empty());
    t.read("l1", 100_000, 0, 0);
    t.read("l1", 200_000, 0, 0); // + 1,000
    assert!(t.report("jl1", 76_000).is_empty());
    assert!(t.award("jl1", "l1", 76_000).is_empty());
    assert!(t.book.conservation().holds);
    // validate_transfer said so beforehand (what `ledgerctl jackpot transfer` refuses to
    // propose without --force).
    let t = transfer_setup();
    let ev = T::transfer_ev("t1", "jk1", "jl1", 50_000, None);
    let Err(TransferRejection::Ineligible(pre)) = t.book.validate_transfer(&ev) else {
        panic!()
    };
    assert_eq!(
        codes(&pre),
        [
            SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE,
            SLOT_TRANSFER_TARGET_INVALID
        ]
    );
    assert_eq!(t.captive("jk1"), e4c(50_000), "validation moves nothing");
}

/// P217/2007 T.III r.5, r.6: the same value cannot be transferred twice
/// (SLOT_TRANSFER_DUPLICATE, one finding per repeat).
#[test]
fn r5_r6_double_transfer() {
    let mut t = transfer_setup();
    t.fault("k1", "destroyed", true, true);
    assert!(t.transfer("t1", "jk1", "jk2", 50_000, None).is_empty());
    // The same transfer reported again: one transfer, nothing more moves, one finding.
    let f = t.transfer("t1", "jk1", "jk2", 50_000, None);
    assert_eq!(codes(&f), [SLOT_TRANSFER_DUPLICATE]);
    assert!(!t.book.transfers()[1].booked);
    assert_eq!(t.captive("jk2"), e4c(70_000));
    // Another id, same episode: the pool holds nothing more to move; the duplicate is the one
    // finding (it names both amounts), and the target's declarations that count the casino's
    // second amount are that breach, not new ones.
    let f = t.transfer("t2", "jk1", "jk2", 50_000, None);
    assert_eq!(codes(&f), [SLOT_TRANSFER_DUPLICATE]);
    let a = f[0].amounts.unwrap();
    assert_eq!((a.due_cents, a.reported_cents), (0, 50_000));
    assert!(t.book.transfers()[2].booked);
    assert_eq!(t.captive("jk2"), e4c(70_000));
    assert!(t.report("jk2", 120_000).is_empty());
    let f = t.transfer("t3", "jk1", "jk2", 0, None);
    assert_eq!(codes(&f), [SLOT_TRANSFER_DUPLICATE]);
}

/// r.6: a target that cannot award, the source itself, a table jackpot.
#[test]
fn r6_target_must_be_able_to_award() {
    let mut t = transfer_setup();
    t.fault("k1", "destroyed", true, true);
    t.fault("k2", "destroyed", true, true);
    let to_self = T::transfer_ev("t2", "jk1", "jk1", 50_000, None);
    assert!(matches!(
        t.book.validate_transfer(&to_self),
        Err(TransferRejection::Ineligible(f)) if codes(&f) == [SLOT_TRANSFER_TARGET_INVALID]
    ));
    assert_eq!(
        codes(&t.transfer("t1", "jk1", "jk2", 50_000, None)),
        [SLOT_TRANSFER_TARGET_INVALID]
    );
    // Booked all the same: the target holds it, even though it cannot award it until restored.
    assert_eq!(t.captive("jk2"), e4c(70_000));
}

/// r.6: an authorisation must name this source and target.
#[test]
fn r6_authorisation_for_another_pool() {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    t.model("L", 9_000, &[100]);
    t.machine("k1", "A", "K", &[100]);
    t.machine("l1", "A", "L", &[100]);
    t.machine("l2", "A", "L", &[100]);
    t.pool("jk1", PoolKind::Jackpot, &["k1"], 0, 1_000, 0);
    t.pool("jl1", PoolKind::Jackpot, &["l1"], 0, 0, 0);
    t.pool("jl2", PoolKind::Jackpot, &["l2"], 0, 0, 0);
    t.auth("a1", "jk1", "jl1");
    t.fault("k1", "destroyed", true, true);
    let ineligible = |t: &T, tr: JackpotTransfer| match t.book.validate_transfer(&tr) {
        Err(TransferRejection::Ineligible(f)) => f,
        other => panic!("{other:?}"),
    };
    let f = ineligible(&t, T::transfer_ev("t1", "jk1", "jl2", 1_000, Some("a1")));
    assert_eq!(codes(&f), [SLOT_TRANSFER_TARGET_INVALID]);
    assert!(f[0].message.contains("is for `jk1` → `jl1`"));
    let f = ineligible(&t, T::transfer_ev("t2", "jk1", "jl2", 1_000, Some("nope")));
    assert_eq!(codes(&f), [SLOT_TRANSFER_TARGET_INVALID]);
    // Candidates: jl1 authorised and eligible; no same-model machine.
    let c = t.book.transfer_candidates("k1").unwrap();
    assert_eq!(c.len(), 1);
    assert!(c[0].force_majeure);
    assert!(c[0].same_model_machines.is_empty());
    assert_eq!(c[0].candidates.len(), 1);
    assert_eq!(
        (c[0].candidates[0].rank, c[0].candidates[0].eligible),
        (2, true)
    );
    assert!(
        t.transfer("t3", "jk1", "jl1", 1_000, None).is_empty(),
        "authorisation found by pools"
    );
}

/// The candidates for `ledgerctl jackpot transfer-candidates <machine>`: same model and bets
/// first, then authorised targets (ineligible while same-model machines exist).
#[test]
fn r6_transfer_candidates_ranked() {
    let mut t = transfer_setup();
    t.auth("a1", "jk1", "jl1");
    t.auth("a2", "jk1", "later");
    t.fault("k1", "destroyed", true, true);
    let c = t.book.transfer_candidates("k1").unwrap();
    assert_eq!(c.len(), 1);
    let pc = &c[0];
    assert_eq!(pc.captive_cents, 50_000);
    assert!(pc.force_majeure && !pc.already_transferred);
    assert_eq!((&*pc.model_id, &pc.bet_values_cents[..]), ("K", &[100][..]));
    assert_eq!(pc.same_model_machines, vec![id("k2")]);
    let got: Vec<(u8, &str, bool)> = pc
        .candidates
        .iter()
        .map(|c| (c.rank, &*c.pool_id, c.eligible))
        .collect();
    assert_eq!(
        got,
        vec![(1, "jk2", true), (2, "jl1", false), (2, "later", false)]
    );
    assert!(
        pc.candidates[1]
            .reason
            .as_deref()
            .unwrap()
            .contains("na sua falta")
    );
    assert!(t.book.transfer_candidates("nope").is_err());
}

/// P217/2007 T.III r.6 ("do mesmo modelo e apostas"): the candidates of a failed machine are
/// compared with *its* model and bets. A superjackpot may group machines of several models
/// (r.4); a machine of another model outside it is not "of the same model and bets" as the
/// failed one, and the answer says what it compared.
#[test]
fn r6_candidates_compare_the_failed_machines_model_and_bets() {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    t.model("L", 9_000, &[100]);
    t.machine("k1", "A", "K", &[100]);
    t.machine("l1", "A", "L", &[100]);
    t.machine("l2", "A", "L", &[100]);
    t.machine("k2", "A", "K", &[100, 200]);
    t.pool("sj", PoolKind::Superjackpot, &["k1", "l1"], 50, 10_000, 0);
    t.pool("jl2", PoolKind::Jackpot, &["l2"], 100, 1_000, 0);
    t.pool("jk2", PoolKind::Jackpot, &["k2"], 100, 1_000, 0);
    t.pool_fault("k1", "link_down", &["sj"]);
    t.pool_fault("l1", "link_down", &["sj"]);
    let c = t.book.transfer_candidates("k1").unwrap();
    assert_eq!(c.len(), 1);
    let pc = &c[0];
    assert!(pc.force_majeure);
    assert_eq!((&*pc.model_id, &pc.bet_values_cents[..]), ("K", &[100][..]));
    // l2 is of model L (like the superjackpot's other member), k2 of model K with other bets:
    // neither is of k1's model and bets.
    assert!(
        pc.same_model_machines.is_empty(),
        "{:?}",
        pc.same_model_machines
    );
    assert!(
        pc.candidates.iter().all(|c| c.rank != 1),
        "{:?}",
        pc.candidates
    );
    // Asked about l1, the L machine l2 is of its model and bets.
    let c = t.book.transfer_candidates("l1").unwrap();
    assert_eq!(&*c[0].model_id, "L");
    assert_eq!(c[0].same_model_machines, vec![id("l2")]);
    assert_eq!(
        c[0].candidates
            .iter()
            .map(|c| (c.rank, &*c.pool_id))
            .collect::<Vec<_>>(),
        [(1, "jl2")]
    );
}

/// P217/2007 T.III r.6: force majeure can concern a pool (a superjackpot's link, controller or
/// server), not only a whole machine. A machine that feeds a jackpot and a superjackpot may lose
/// the superjackpot only: it stays in service, its jackpot stays its own, and the superjackpot,
/// under force majeure on every member, may be transferred.
#[test]
fn r6_force_majeure_of_a_pool() {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    for m in ["k1", "k2", "k3", "k4"] {
        t.machine(m, "A", "K", &[100]);
    }
    t.pool("jk1", PoolKind::Jackpot, &["k1"], 100, 5_000, 0);
    t.pool("sj", PoolKind::Superjackpot, &["k1", "k2"], 50, 30_000, 0);
    t.pool("sj2", PoolKind::Superjackpot, &["k3", "k4"], 50, 1_000, 0);
    t.read("k1", 10_000, 0, 0);
    // The link of `sj` is lost on k1 only: sj can still be won on k2.
    assert!(t.pool_fault("k1", "link_down", &["sj"]).is_empty());
    assert_eq!(
        codes(
            &t.book
                .clone()
                .apply(
                    &Event::JackpotTransfer(T::transfer_ev("t0", "sj", "sj2", 30_000, None)),
                    EventCtx {
                        ledger_index: 1_000,
                        at_ms: 0
                    }
                )
                .unwrap()
        ),
        [SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE]
    );
    t.pool_fault("k2", "controller_destroyed", &["sj"]);
    let m = t.book.machine("k1").unwrap();
    assert!(m.out_of_service.is_none() && m.force_majeure.is_none());
    assert!(m.pool_force_majeure.contains_key("sj"));
    // k1 still plays, with no out-of-service finding, and still feeds its own jackpot.
    assert!(t.read("k1", 20_000, 0, 0).is_empty());
    assert_eq!(t.captive("jk1"), e4c(5_100));
    // Its jackpot cannot be transferred: it can still be awarded.
    let f = t.transfer("t1", "jk1", "sj2", 5_100, None);
    assert!(
        codes(&f).contains(&SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE),
        "{f:?}"
    );
    // The superjackpot can: every member is under force majeure for it.
    let sj = t.book.transfer_candidates("k2").unwrap();
    assert!(sj[0].force_majeure);
    // Rank 1: k1's jackpot (k1 lost only sj's link) and sj2.
    assert_eq!(
        sj[0]
            .candidates
            .iter()
            .map(|c| (c.rank, &*c.pool_id, c.eligible))
            .collect::<Vec<_>>(),
        [(1, "jk1", true), (1, "sj2", true)]
    );
    let due = t.captive("sj");
    let f = t.transfer("t2", "sj", "sj2", (due / E4_PER_CENT) as i64, None);
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(t.captive("sj"), 0);
    // A target whose members lost its link cannot award it.
    t.pool_fault("k3", "link_down", &["sj2"]);
    let f = t.transfer("t3", "jk1", "sj2", 0, None);
    assert!(codes(&f).contains(&SLOT_TRANSFER_TARGET_INVALID), "{f:?}");
    // Restoring the link of one pool leaves the machine's other marks alone.
    t.fault("k1", "door_open", true, false);
    t.restore_pools("k1", &["sj"]);
    let m = t.book.machine("k1").unwrap();
    assert!(m.pool_force_majeure.is_empty() && m.out_of_service.is_some());
    // A pool the machine does not feed is malformed.
    let e = t.err(Event::MachineFault(MachineFault {
        machine_id: id("k1"),
        code: "link_down".into(),
        out_of_service: false,
        force_majeure: true,
        detail: String::new(),
        pool_ids: vec![id("sj2")],
    }));
    assert!(e.to_string().contains("pool_ids[0]"), "{e}");
}

/// validate_transfer says exactly what apply will do.
#[test]
fn validate_transfer_matches_apply() {
    let mut t = transfer_setup();
    let bad = T::transfer_ev("t1", "jk1", "jl1", 1, None);
    let Err(TransferRejection::Ineligible(pre)) = t.book.validate_transfer(&bad) else {
        panic!()
    };
    let applied = t.ev(Event::JackpotTransfer(bad));
    assert_eq!(codes(&pre), codes(&applied));
    let unknown = T::transfer_ev("t2", "jk1", "nope", 1, None);
    assert!(matches!(
        t.book.validate_transfer(&unknown),
        Err(TransferRejection::Malformed(ApplyError::Unknown { .. }))
    ));
    t.err(Event::JackpotTransfer(unknown));
}

// --------------------------------------------------------------------------- table jackpots

fn table_setup() -> T {
    let mut t = T::new();
    t.ev(Event::PoolConfigured(PoolConfigured {
        pool_id: id("bj-jp"),
        kind: PoolKind::TableJackpot,
        casino_ids: vec![id("A")],
        member_machine_ids: vec![],
        member_table_ids: vec![id("bj1")],
        contribution_bp: 7_500,
        start_value_cents: 1_500_000,
        reset_value_cents: 2_000_000,
    }));
    t
}

fn round(
    table: &str,
    round: &str,
    before: i64,
    contrib: i64,
    prizes: i64,
    reset: bool,
    wins: Vec<JackpotWin>,
) -> Event {
    Event::TableJackpotRound(TableJackpotRound {
        pool_id: id("bj-jp"),
        table_id: id(table),
        round_id: id(round),
        game: GameId::Blackjack,
        account: JackpotAccount {
            value_before_cents: before,
            contributions_e4: contrib,
            prizes_cents: prizes,
            reset,
            value_after_e4: 0,
        },
        wins,
    })
}

fn win(bet: &str, combination: &'static str, prize: i64) -> JackpotWin {
    JackpotWin {
        bet_id: bet.into(),
        seat: None,
        combination: combination.into(),
        prize_cents: prize,
        citation: "P1364/2001 r.43".into(),
    }
}

/// blackjack.md Example C (P1364/2001 r.43, r.50; P217/2007 T.I C.III S.I r.40, r.41, r.44):
/// 4 chips × 150 on 1,500,000; 5,000 to seat 2, the remainder 1,495,600 to seat 5; restart at
/// 2,000,000.
#[test]
fn table_jackpot_example_c_blackjack() {
    let mut t = table_setup();
    let f = t.ev(round(
        "bj1",
        "r1",
        1_500_000,
        4 * 150 * 10_000,
        1_500_600,
        true,
        vec![
            win("s2", "two_aces_different_suits", 5_000),
            win("s5", "four_aces_same_colour", 1_495_600),
        ],
    ));
    assert!(f.is_empty(), "{f:?}");
    assert_eq!(t.captive("bj-jp"), e4c(2_000_000));
    let c = t.book.conservation();
    assert_eq!(c.awarded_e4, e4c(1_500_600));
    assert_eq!(c.seeded_e4, e4c(3_500_000));
    // A smaller prize alone comes out of the pool (13.12).
    assert!(
        t.ev(round(
            "bj1",
            "r2",
            2_000_000,
            150 * 10_000,
            5_000,
            false,
            vec![]
        ))
        .is_empty()
    );
    assert_eq!(t.captive("bj-jp"), e4c(2_000_000 + 150 - 5_000));
}

/// The display a round starts from must be the book's value (BJ_JACKPOT_DISPLAY_MISMATCH,
/// P217/2007 T.I C.III S.I r.40, r.41), the table must be a member, the pool must not be
/// overdrawn.
#[test]
fn table_jackpot_checks() {
    let mut t = table_setup();
    let f = t.ev(round("bj1", "r1", 1_400_000, 0, 0, false, vec![]));
    assert_eq!(codes(&f), [BJ_JACKPOT_DISPLAY_MISMATCH]);
    assert_eq!(f[0].citation, "P217/2007 T.I C.III S.I r.40, r.41");
    assert_eq!(f[0].table_id.as_deref(), Some("bj1"));
    let f = t.ev(round("bj9", "r2", 1_500_000, 0, 0, false, vec![]));
    assert_eq!(codes(&f), [TABLE_JACKPOT_NOT_IN_POOL]);
    let f = t.ev(round("bj1", "r3", 1_500_000, 0, 1_600_000, false, vec![]));
    assert_eq!(codes(&f), [TABLE_JACKPOT_OVERDRAWN]);
    // A declared value for a table pool uses the game's display code.
    let f = t.report("bj-jp", 5);
    assert_eq!(codes(&f), [BJ_JACKPOT_DISPLAY_MISMATCH]);
    // Póquer sem descarte.
    let mut t = table_setup();
    let mut e = round("bj1", "r1", 1, 0, 0, false, vec![]);
    if let Event::TableJackpotRound(r) = &mut e {
        r.game = GameId::PokerSemDescarte;
    }
    let f = t.ev(e);
    assert_eq!(codes(&f), [PSD_JACKPOT_DISPLAY_MISMATCH]);
    assert_eq!(f[0].citation, "P217/2007 T.I C.III S.II r.3, r.4");
    // A transfer involving a table jackpot is outside r.6.
    t.model("K", 9_000, &[100]);
    t.machine("m1", "A", "K", &[100]);
    t.pool("jp1", PoolKind::Jackpot, &["m1"], 0, 0, 0);
    let f = t.transfer("t1", "bj-jp", "jp1", 1_500_000, None);
    assert_eq!(codes(&f), [SLOT_TRANSFER_TARGET_INVALID]);
}

// ------------------------------------------------------------------------- apply errors

/// An event the book cannot make sense of is an ApplyError naming the field, and changes
/// nothing.
#[test]
fn apply_errors_name_the_field_and_change_nothing() {
    let mut t = w1_setup();
    let e = t.err(Event::CaptiveValueReported(CaptiveValueReported {
        pool_id: id("nope"),
        value_cents: 1,
    }));
    assert!(
        matches!(&e, ApplyError::Unknown { field, what: "pool", .. } if field == "pool_id"),
        "{e}"
    );
    let e = t.err(Event::JackpotAwarded(JackpotAwarded {
        pool_id: id("jp1"),
        machine_id: id("m1"),
        amount_cents: -5,
        winner: String::new(),
        game_number: 0,
    }));
    assert!(
        matches!(&e, ApplyError::Invalid { field, .. } if field == "amount_cents"),
        "{e}"
    );
    let e = t.err(t.pool_cfg("jp2", PoolKind::Jackpot, &["m1", "m1"], 10, 0, 0));
    assert!(e.to_string().contains("exactly one machine"), "{e}");
    let e = t.err(t.pool_cfg("sj", PoolKind::Superjackpot, &["m1", "zz"], 10, 0, 0));
    assert!(
        matches!(&e, ApplyError::Unknown { field, .. } if field == "member_machine_ids[1]"),
        "{e}"
    );
    let e = t.err(t.pool_cfg("jp1", PoolKind::Superjackpot, &["m1"], 10, 0, 0));
    assert!(
        matches!(&e, ApplyError::Invalid { field, .. } if field == "kind"),
        "{e}"
    );
    let e = t.err(t.pool_cfg("jp3", PoolKind::Jackpot, &["m1"], 10_001, 0, 0));
    assert!(
        matches!(&e, ApplyError::Invalid { field, .. } if field == "contribution_bp"),
        "{e}"
    );
    let e = t.err(Event::GamePlayed(GamePlayed {
        machine_id: id("zz"),
        game_number: 1,
        wager_cents: 1,
        win_cents: 0,
    }));
    assert!(
        matches!(
            &e,
            ApplyError::Unknown {
                what: "machine",
                ..
            }
        ),
        "{e}"
    );
    let mut cfg = t.pool_cfg("sj2", PoolKind::Superjackpot, &["m1"], 10, 0, 0);
    if let Event::PoolConfigured(p) = &mut cfg {
        p.casino_ids = vec![id("B")];
    }
    let e = t.err(cfg);
    assert!(
        matches!(&e, ApplyError::Invalid { field, .. } if field == "casino_ids"),
        "{e}"
    );
    // Out of order.
    let ctx = EventCtx {
        ledger_index: 1,
        at_ms: 0,
    };
    let e = t.book.apply(
        &Event::MachineRestored(MachineRestored {
            machine_id: id("m1"),
            detail: String::new(),
            pool_ids: vec![],
        }),
        ctx,
    );
    assert!(matches!(e, Err(ApplyError::OutOfOrder { index: 1, .. })));
}

// --------------------------------------------------------------------- catalogue and replay

/// Every check of the catalogue (machines.md §10, the lower-confidence ones, and this crate's
/// additions) is raised by at least one scenario above; this test raises all of them in one
/// stream and checks the catalogue's citations.
#[test]
fn every_catalogued_check_is_reachable() {
    let mut seen = BTreeSet::new();
    let mut note = |f: Vec<Finding>| {
        for x in f {
            let c = check_by_code(&x.code).expect("catalogued");
            assert_eq!(c.citation, x.citation);
            seen.insert(x.code.to_string());
        }
    };
    let mut t = transfer_setup();
    note(t.model("LOW", 7_000, &[100]));
    note(t.machine("low", "A", "LOW", &[100, 300]));
    note(t.read("k1", 1_000, 0, 0));
    note(t.read("k1", 500, 0, 0));
    note(t.read("k1", 900, 0, 0));
    note(t.meters("k2", vec![Meter::new(COIN_IN, 5, 0)]));
    note(t.read("l1", 0, 0, 0));
    note(t.fault("l1", "door_open", true, false));
    note(t.read("l1", 10, 0, 0));
    note(t.game("k3", 10, 0));
    note(t.read("k3", 0, 0, 0));
    note(t.game("k3", 10, 0));
    note(t.read("k3", 20, 0, 0));
    note(t.ev(Event::JackpotContribution(JackpotContribution {
        pool_id: id("jk1"),
        machine_id: id("k3"),
        amount_cents: 1,
    })));
    note(t.read("k3", 20_000_000, 0, 0));
    note(t.ev(Event::RamClear(RamClear {
        machine_id: id("k3"),
        before: vec![],
        after: vec![],
    })));
    note(t.read("k3", 100, 0, 0));
    note(t.ev(Event::RamClear(RamClear {
        machine_id: id("k3"),
        before: meters3(50, 0, 0),
        after: meters3(0, 0, 0),
    })));
    note(t.report("jk2", 1));
    note(t.award("jk2", "k1", 1));
    note(t.pool("jk2", PoolKind::Jackpot, &["k2"], 300, 0, 0));
    note(t.transfer("t1", "jk1", "jl1", 1, None));
    note(t.fault("k1", "destroyed", true, true));
    note(t.transfer("t2", "jk1", "jk2", 50_004, None));
    note(t.transfer("t3", "jk1", "jk2", 0, None));
    let mut tt = table_setup();
    note(tt.ev(round("x", "r1", 0, 0, 2_000_000, false, vec![])));
    let mut e = round("bj1", "r2", 0, 0, 0, false, vec![]);
    note(tt.ev(e.clone()));
    if let Event::TableJackpotRound(r) = &mut e {
        r.game = GameId::PokerSemDescarte;
    }
    note(tt.ev(e.clone()));
    if let Event::TableJackpotRound(r) = &mut e {
        r.game = GameId::BaccaratPuntoBanco;
    }
    note(tt.ev(e));
    // Significant events (the module's own tests check each one in detail).
    let mut s = w1_setup();
    let sig = |s: &mut T, event: Significant| {
        s.ev(Event::MachineEvent(MachineEvent {
            machine_id: id("m1"),
            source_code: String::new(),
            detail: String::new(),
            event,
        }))
    };
    note(sig(
        &mut s,
        Significant::EventsLost {
            reporter: LostReporter::Agent,
            count: 4,
            from_ms: 0,
            to_ms: 0,
        },
    ));
    let auth = |sig_hex: &str, passed| Significant::SoftwareAuthenticated {
        component: "game".into(),
        algorithm: "sha256".into(),
        signature: sig_hex.into(),
        passed,
    };
    note(sig(&mut s, auth("aa", false)));
    note(s.ev(Event::ProgramApproved(ProgramApproved {
        model_id: id("K"),
        component: "game".into(),
        algorithm: "sha256".into(),
        signature: "aa".into(),
        approval_ref: String::new(),
    })));
    note(sig(&mut s, auth("bb", true)));
    note(sig(
        &mut s,
        Significant::ConfigurationChanged {
            changes: vec![OptionChange {
                option: "max_bet".into(),
                old_value: String::new(),
                new_value: "500".into(),
            }],
            authorization_id: None,
        },
    ));
    note(s.read("m1", 100, 0, 0));
    note(sig(&mut s, Significant::Power { on: false }));
    note(s.read("m1", 100, 0, 0));
    note(s.read("m1", 200, 0, 0));
    note(sig(&mut s, Significant::Power { on: true }));
    note(sig(
        &mut s,
        Significant::Door {
            door: Door::Main,
            action: DoorAction::Opened,
        },
    ));
    note(s.read("m1", 200, 0, 0));
    note(s.read("m1", 300, 0, 0));
    note(sig(
        &mut s,
        Significant::Door {
            door: Door::Main,
            action: DoorAction::Closed,
        },
    ));
    note(sig(
        &mut s,
        Significant::GameEnded {
            game_number: 1,
            wager_cents: 100,
            win_cents: 0,
        },
    ));
    note(s.read("m1", 400, 0, 0));
    note(s.read("m1", 500, 0, 0));
    note(sig(
        &mut s,
        Significant::HandPay {
            state: HandPayState::Reset,
            pay_kind: HandPayKind::CancelledCredits,
            handpay_id: String::new(),
            amount_cents: 100,
        },
    ));
    note(s.read("m1", 500, 0, 0));
    note(sig(
        &mut s,
        Significant::ProgressiveHit {
            pool_id: id("jp1"),
            amount_cents: 1,
            level: 0,
        },
    ));
    note(sig(
        &mut s,
        Significant::ProgressiveReset { pool_id: id("jp1") },
    ));
    note(s.award("jp1", "m1", 1));
    let all: BTreeSet<String> = CHECKS.iter().map(|c| c.code.to_string()).collect();
    let missing: Vec<_> = all.difference(&seen).collect();
    assert!(missing.is_empty(), "never raised: {missing:?}");
}

/// Replay determinism: the same events give byte-identical state and findings, and the state
/// survives a serde round trip.
#[test]
fn replay_is_byte_identical() {
    let run = || {
        let mut t = transfer_setup();
        t.read("k1", 0, 0, 0);
        t.read("k1", 123_457, 100_000, 50);
        t.report("jk1", 50_123);
        t.fault("k1", "destroyed", true, true);
        t.transfer("t1", "jk1", "jk2", 51_234, None);
        t.transfer("t2", "jk1", "jl1", 1, None);
        t.book
    };
    let (a, b) = (run(), run());
    let sa = serde_json::to_string(&a).unwrap();
    assert_eq!(sa, serde_json::to_string(&b).unwrap());
    assert_eq!(
        serde_json::to_string(a.findings()).unwrap(),
        serde_json::to_string(b.findings()).unwrap()
    );
    let back: Book = serde_json::from_str(&sa).unwrap();
    assert_eq!(back, a);
    assert_eq!(serde_json::to_string(&back).unwrap(), sa);
}

/// Pruning old detail keeps captive values, totals and the conservation invariant.
#[test]
fn prune_keeps_totals() {
    let mut t = transfer_setup();
    t.read("k1", 0, 0, 0);
    t.read("k1", 100_000, 90_000, 0);
    t.report("jk1", 1);
    t.fault("k1", "destroyed", true, true);
    t.transfer("t1", "jk1", "jk2", 51_000, None);
    let before = t.book.conservation();
    let captive = t.book.captive_values();
    t.book.prune_before(t.idx + 1);
    assert_eq!(t.book.conservation(), before);
    assert_eq!(t.book.captive_values(), captive);
    assert!(t.book.findings().is_empty());
    assert!(t.book.pool_history("jk1", Period::All).unwrap().is_empty());
    assert_eq!(
        t.book
            .machine_return("k1", Period::All)
            .unwrap()
            .coin_in_cents,
        0
    );
    // The accepted transfer is kept: its id cannot be reused.
    let f = t.transfer("t1", "jk1", "jk2", 0, None);
    assert!(codes(&f).contains(&SLOT_TRANSFER_DUPLICATE));
}

/// A pool's history is read a page at a time, newest first, each page oldest line first: the
/// pages put together are the whole history, and a page copies at most `limit` lines.
#[test]
fn pool_history_pages_back_from_the_newest_line() {
    let mut t = w1_setup();
    for i in 1..=25u64 {
        t.read(
            "m1",
            2_000_000 + i * 10_000,
            1_800_000 + i * 9_000,
            100_000 + i,
        );
    }
    let all: Vec<PoolEntry> = t
        .book
        .pool_history("jp1", Period::All)
        .unwrap()
        .into_iter()
        .cloned()
        .collect();
    assert!(all.len() > 20, "{}", all.len());
    let lines = all.len() as u64;
    let mut got = Vec::new();
    let mut before = None;
    loop {
        let page = t.book.pool_history_page("jp1", before, 7).unwrap();
        assert!(page.history.len() <= 7);
        assert_eq!(page.pool.history_lines, lines);
        assert_eq!(page.pool.captive_e4, t.captive("jp1"));
        let mut older = page.history.clone();
        older.extend(got);
        got = older;
        assert_eq!(page.first, lines - got.len() as u64);
        match page.next_before {
            Some(b) => before = Some(b),
            None => break,
        }
    }
    assert_eq!(got, all);
    // The newest lines by default; an empty page before position 0; nothing past the end.
    let newest = t.book.pool_history_page("jp1", None, 3).unwrap();
    assert_eq!(newest.history, all[all.len() - 3..]);
    assert_eq!(newest.next_before, Some(lines - 3));
    let none = t.book.pool_history_page("jp1", Some(0), 3).unwrap();
    assert!(none.history.is_empty() && none.next_before.is_none());
    assert_eq!(
        t.book.pool_history_page("jp1", Some(lines + 1), 3),
        Err(QueryError::BeyondHistory {
            before: lines + 1,
            lines
        })
    );
    assert!(matches!(
        t.book.pool_history_page("nope", None, 3),
        Err(QueryError::Unknown { .. })
    ));
    // The page's pool carries no history, whatever its length.
    let json = serde_json::to_value(&newest).unwrap();
    assert!(json["pool"].get("history").is_none(), "{json}");
    // Positions survive pruning; pruned lines are no longer paged.
    let cut = all[10].index;
    t.book.prune_before(cut);
    let held = all.iter().filter(|e| e.index >= cut).count() as u64;
    let page = t.book.pool_history_page("jp1", None, 1_000).unwrap();
    assert_eq!(page.pool.history_lines, lines);
    assert_eq!(page.first, lines - held);
    assert_eq!(page.next_before, None);
    assert_eq!(page.history, all[(lines - held) as usize..]);
    let page = t
        .book
        .pool_history_page("jp1", Some(lines - held), 5)
        .unwrap();
    assert!(page.history.is_empty() && page.next_before.is_none());
}

/// A machine's status carries its meters and lifetime figures, not its meter increases.
#[test]
fn machine_status_leaves_out_the_meter_increases() {
    let mut t = w1_setup();
    for i in 1..=30u64 {
        t.read(
            "m1",
            2_000_000 + i * 10_000,
            1_800_000 + i * 9_000,
            100_000 + i,
        );
    }
    let m = t.book.machine("m1").unwrap();
    assert_eq!(m.deltas.len(), 29, "the first reading is the baseline");
    let status = MachineStatus::from(m);
    assert_eq!(status.credited_readings, 29);
    assert_eq!(status.meters, m.meters);
    assert_eq!(status.lifetime_coin_in_cents, m.lifetime_coin_in_cents);
    let json = serde_json::to_value(&status).unwrap();
    assert!(json.get("deltas").is_none(), "{json}");
    assert_eq!(json["id"], "m1");
    let back: MachineStatus = serde_json::from_value(json).unwrap();
    assert_eq!(back, status);
    let list = t.book.machine_overviews(Period::All).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].machine, status);
    assert_eq!(
        list[0].return_to_player,
        Some(t.book.machine_return("m1", Period::All).unwrap())
    );
    let json = serde_json::to_value(&list).unwrap();
    assert_eq!(json[0]["return"]["readings"], 29, "{json}");
}

/// Events have a stable JSON form (the integration and fixtures may use it).
#[test]
fn events_serde() {
    let e: Event = serde_json::from_str(
        r#"{"type":"meter_reading","machine_id":"m1","meters":[{"name":"coin_in","value":5,"rollover":100}]}"#,
    )
    .unwrap();
    assert_eq!(
        e,
        Event::MeterReading(MeterReading {
            machine_id: id("m1"),
            meters: vec![Meter::new(COIN_IN, 5, 100)]
        })
    );
    let e: Event = serde_json::from_str(
        r#"{"type":"jackpot_transfer","transfer_id":"t","from_pool_id":"a","to_pool_id":"b","amount_cents":1}"#,
    )
    .unwrap();
    assert!(matches!(
        e,
        Event::JackpotTransfer(JackpotTransfer {
            authorization_id: None,
            ..
        })
    ));
}

fn e4c(cents: i64) -> E4 {
    jackpot::amount::e4(cents)
}

/// Pruned detail is said so: a return over a period that reaches before the horizon carries
/// it (its figures cover the period from there on), one after it does not; the book's state
/// shows the horizon only once pruned, and pruning back is a no-op.
#[test]
fn a_return_over_pruned_detail_names_where_the_detail_starts() {
    let mut t = w1_setup();
    for i in 1..=30u64 {
        t.read(
            "m1",
            2_000_000 + i * 10_000,
            1_800_000 + i * 9_000,
            100_000 + i,
        );
    }
    let unpruned = serde_json::to_value(&t.book).unwrap();
    assert!(unpruned.get("detail_from").is_none(), "{unpruned}");
    assert!(t.book.detail_from().is_none());
    let all = t.book.machine_return("m1", Period::All).unwrap();
    assert_eq!(all.detail_from, None);
    let d = t.book.machine("m1").unwrap().deltas[19];
    let horizon = DetailHorizon {
        index: d.index,
        at_ms: d.at_ms,
    };
    t.book.prune_detail(horizon);
    assert_eq!(t.book.detail_from(), Some(horizon));
    assert_eq!(t.book.machine("m1").unwrap().deltas.len(), 10);
    // Lifetime figures are whole; the period's figures are the held detail's, and say so.
    let r = t.book.machine_return("m1", Period::All).unwrap();
    assert_eq!(r.detail_from, Some(horizon));
    assert_eq!(r.readings, 10);
    let before = |from_ms| Period::Times {
        from_ms,
        to_ms: i64::MAX,
    };
    assert_eq!(
        t.book
            .machine_return("m1", before(d.at_ms - 1))
            .unwrap()
            .detail_from,
        Some(horizon)
    );
    assert_eq!(
        t.book
            .machine_return("m1", before(d.at_ms))
            .unwrap()
            .detail_from,
        None
    );
    let from_index = |from| Period::Indexes { from, to: u64::MAX };
    assert_eq!(
        t.book
            .machine_return("m1", from_index(d.index))
            .unwrap()
            .detail_from,
        None
    );
    assert_eq!(
        t.book
            .machine_return("m1", from_index(d.index - 1))
            .unwrap()
            .detail_from,
        Some(horizon)
    );
    // The horizon travels with the state, and never goes back.
    let json = serde_json::to_string(&t.book).unwrap();
    let back: Book = serde_json::from_str(&json).unwrap();
    assert_eq!(back, t.book);
    t.book.prune_detail(DetailHorizon { index: 1, at_ms: 0 });
    assert_eq!(t.book.detail_from(), Some(horizon));
}

// ------------------------------------------------------- decisions found by mutation (issue 45)

/// r.2 (M4, M5): a model approved with no machine installed is judged on its pay table alone,
/// with 80% (8000 bp) itself allowed; one approval below it is one finding, naming the model,
/// not repeated for the same figure, raised again for another, cleared at 80%.
#[test]
fn r2_a_model_alone_is_judged_at_the_80_percent_boundary() {
    let mut t = T::new();
    assert!(
        t.model("K", MIN_RETURN_BP, &[100]).is_empty(),
        "80% is allowed"
    );
    let f = t.model("K", MIN_RETURN_BP - 1, &[100]);
    assert_eq!(codes(&f), [SLOT_PAYTABLE_RETURN_BELOW_80]);
    assert_eq!(f[0].model_id.as_deref(), Some("K"));
    assert_eq!(f[0].machine_id, None);
    assert_eq!(f[0].citation, "P217/2007 T.III r.2 (r.3, r.4)");
    assert!(
        t.model("K", MIN_RETURN_BP - 1, &[100]).is_empty(),
        "the same figure is not flagged twice"
    );
    assert_eq!(
        codes(&t.model("K", 7_000, &[100])),
        [SLOT_PAYTABLE_RETURN_BELOW_80]
    );
    assert!(t.model("K", 9_000, &[100]).is_empty());
    assert_eq!(
        codes(&t.model("K", 7_000, &[100])),
        [SLOT_PAYTABLE_RETURN_BELOW_80],
        "a cleared flag is raised again"
    );
}

/// r.2 (M5): re-approving a model re-judges its installed machines (each with its pools'
/// contributions), not the machines of other models.
#[test]
fn r2_a_reapproved_model_rejudges_its_own_machines() {
    let mut t = T::new();
    t.model("K", 9_000, &[100]);
    t.model("L", 9_000, &[100]);
    t.machine("k1", "A", "K", &[100]);
    t.machine("l1", "A", "L", &[100]);
    let f = t.model("K", 7_900, &[100]);
    assert_eq!(codes(&f), [SLOT_PAYTABLE_RETURN_BELOW_80]);
    assert_eq!(f[0].machine_id.as_deref(), Some("k1"));
    assert_eq!(f[0].confidence, Confidence::Certain, "no pool to count");
    assert!(t.model("L", 9_000, &[100]).is_empty());
}

/// r.4, r.5: a pool's casinos cover its members, so a member machine registered again in
/// another casino puts the pool under that casino's liability too (the prize is due where the
/// machine stands).
#[test]
fn r5_a_member_moved_to_another_casino_brings_the_pool_with_it() {
    let mut t = w1_setup();
    t.read("m1", 2_000_000, 1_800_000, 100_000);
    assert!(t.book.liability("B").pools.is_empty());
    t.machine("m1", "B", "K", &[100]);
    let p = t.book.pool("jp1").unwrap();
    assert!(p.casinos.contains(&id("B")), "{:?}", p.casinos);
    let b = t.book.liability("B");
    assert_eq!(b.pools.len(), 1);
    assert_eq!(b.pools[0].members_here, vec![id("m1")]);
    assert_eq!(b.total_cents, 40_000);
}

/// Pruning at an index keeps exactly what was recorded at or after it: history lines, meter
/// increases, significant events, findings and repeated (unbooked) transfers; booked
/// transfers are kept whatever their index (a transfer id cannot be reused, r.5, r.6).
#[test]
fn prune_before_an_index_keeps_what_is_at_or_after_it() {
    let mut t = transfer_setup();
    let battery = |m: &str| {
        Event::MachineEvent(MachineEvent {
            machine_id: id(m),
            source_code: String::new(),
            detail: String::new(),
            event: Significant::BatteryLow,
        })
    };
    t.ev(battery("k2"));
    t.read("k2", 0, 0, 0);
    t.read("k2", 100_000, 90_000, 0);
    assert_eq!(codes(&t.report("jk2", 1)), [SLOT_JACKPOT_CAPTIVE_MISMATCH]);
    t.fault("k1", "destroyed", true, true);
    assert!(t.transfer("t1", "jk1", "jk2", 50_000, None).is_empty());
    assert_eq!(
        codes(&t.transfer("t1", "jk1", "jk2", 50_000, None)),
        [SLOT_TRANSFER_DUPLICATE]
    );
    let history_before = t.book.pool_history("jk2", Period::All).unwrap().len();

    let cut = t.idx + 1;
    t.ev(battery("k2"));
    t.read("k2", 150_000, 135_000, 0);
    let late = t.report("jk2", 1);
    assert_eq!(codes(&late), [SLOT_JACKPOT_CAPTIVE_MISMATCH]);
    let repeat = t.transfer("t1", "jk1", "jk2", 50_000, None);
    assert_eq!(codes(&repeat), [SLOT_TRANSFER_DUPLICATE]);
    let history_after = t.book.pool_history("jk2", Period::All).unwrap().len() - history_before;
    let (before, captive) = (t.book.conservation(), t.book.captive_values());

    t.book.prune_before(cut);
    assert_eq!(t.book.conservation(), before);
    assert_eq!(t.book.captive_values(), captive);
    let kept: Vec<_> = t
        .book
        .findings()
        .iter()
        .map(|f| f.evidence.clone())
        .collect();
    let late: Vec<_> = late
        .iter()
        .chain(&repeat)
        .map(|f| f.evidence.clone())
        .collect();
    assert_eq!(kept, late, "the findings at or after the cut, only");
    let h = t.book.pool_history("jk2", Period::All).unwrap();
    assert_eq!(h.len(), history_after);
    assert!(h.iter().all(|l| l.index >= cut));
    let pool = t.book.pool("jk2").unwrap();
    assert_eq!(pool.history_pruned, history_before as u64);
    let k2 = t.book.machine("k2").unwrap();
    assert_eq!(k2.deltas.len(), 1);
    assert!(k2.deltas[0].index >= cut);
    let ev = k2.events.as_ref().unwrap();
    assert_eq!(ev.log.len(), 1);
    assert!(ev.log[0].index >= cut);
    assert_eq!(ev.logged_out, 1);
    let tr: Vec<_> = t
        .book
        .transfers()
        .iter()
        .map(|r| (r.booked, r.index >= cut))
        .collect();
    assert_eq!(tr, [(true, false), (false, true)]);
}

/// The detail horizon moves forward only: pruning further on moves it, pruning back does not.
#[test]
fn the_detail_horizon_moves_forward() {
    let mut t = w1_setup();
    for i in 1..=4u64 {
        t.read("m1", 2_000_000 + i * 10_000, 1_800_000 + i * 9_000, 100_000);
    }
    let d = t.book.machine("m1").unwrap().deltas.clone();
    let at = |i: usize| DetailHorizon {
        index: d[i].index,
        at_ms: d[i].at_ms,
    };
    t.book.prune_detail(at(1));
    t.book.prune_detail(at(2));
    assert_eq!(t.book.detail_from(), Some(at(2)));
    assert_eq!(t.book.machine("m1").unwrap().deltas.len(), d.len() - 2);
    t.book.prune_detail(at(1));
    assert_eq!(t.book.detail_from(), Some(at(2)));
}

/// r.2, M4: the observed-return alert's volume and threshold are the book's [`Settings`] (part
/// of the state, so a replay uses the same ones), not the defaults.
#[test]
fn r2_observed_return_alert_follows_the_books_settings() {
    let settings = Settings {
        observed_return_min_coin_in_cents: 100_000,
        observed_return_alert_bp: 9_500,
    };
    let play = |book: Book| {
        let mut t = T { book, idx: 0 };
        t.model("K", 9_000, &[100]);
        t.machine("m1", "A", "K", &[100]);
        t.read("m1", 0, 0, 0);
        (t.read("m1", 200_000, 180_000, 0), t.book)
    };
    let (f, book) = play(Book::with_settings(settings.clone()));
    assert_eq!(
        codes(&f),
        [SLOT_OBSERVED_RETURN_LOW],
        "90% < 95% past 1,000 euros"
    );
    assert_eq!(book.settings(), &settings);
    let (f, _) = play(Book::new());
    assert!(f.is_empty(), "below the default volume");
}
