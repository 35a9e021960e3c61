//! Table limits: the ponto e banca variants side by side, and the chemin de fer bank and bets.
//!
//! * Ponto e banca (S.III): each chance has a minimum and a maximum in fixed proportions, 70 ×
//!   on ponto and banca, 15 × on the tie, 8 × on each pair (r.21); standing bettors only
//!   complement the adjacent seat's bet (r.12).
//! * Ponto e banca/Macau (S.IV): no individual or per-chance maximum (r.21); the IGJ's cap M on
//!   the difference between the ponto and banca totals (r.22, r.23), the ties at most 10 % of M
//!   (r.24), each pair at most 8 % of M (r.25); one player on both ponto and banca keeps a
//!   difference of at least the table minimum (r.11); standing bettors bet freely (r.12).
//! * Both: at most (seats − 1) standing bettors per tabuleiro, in the gaps between seats (r.2,
//!   r.12: 5-6 per side on a double table of 6-7 seats, 6-8 on a simple table of 7-9 seats).
//!
//! Every accepted bet that breaks a limit is settled as accepted and flagged (digest note 7).

use rules_core::{Adjudication, Cents, ConfigError, Severity, TableConfig, Violation};

use crate::punto_banco::{Chance, PbBet, PbConfig, Variant, pb_cite};
use crate::util::SeatExt;

/// The limits of a ponto e banca table, per chance (indexed by [`Chance`] as usize).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PbLimits {
    /// Minimum stake per chance (the chance's own limit, else the table minimum).
    pub min: [Option<Cents>; 5],
    /// Maximum stake per chance (S.III only; S.IV r.21 has none and ignores any configured).
    pub max: [Option<Cents>; 5],
    /// The table minimum ("valor mínimo de aposta nessa banca", S.IV r.11).
    pub table_min: Option<Cents>,
    /// Macau's M (S.IV r.22): the largest allowed difference between the ponto and banca totals.
    pub max_exposure: Option<Cents>,
    /// Most standing bettors allowed (r.2, r.12), when the seats are configured.
    pub standing_capacity: Option<u32>,
}

/// S.III r.21: max = 70 × min on ponto and banca, 15 × on the tie, 8 × on each pair.
pub const PB_RATIO: [i64; 5] = [70, 70, 15, 8, 8];

/// Parse the limits of a ponto e banca table and check the S.III r.21 proportions.
pub fn pb_configure(
    table: &TableConfig,
    variant: Variant,
    pairs_offered: bool,
    violations: &mut Vec<Violation>,
) -> Result<PbLimits, ConfigError> {
    for (name, v) in [
        ("min_bet_cents", table.min_bet_cents),
        ("max_bet_cents", table.max_bet_cents),
    ] {
        if let Some(v) = v
            && !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&v)
        {
            return Err(ConfigError::field(
                name,
                "must be positive and at most MAX_AMOUNT_CENTS",
            ));
        }
    }
    let mut own_min: [Option<Cents>; 5] = [None; 5];
    let mut own_max: [Option<Cents>; 5] = [None; 5];
    let mut seen = [false; 5];
    for l in &table.limits {
        let c = Chance::parse(&l.chance).ok_or_else(|| {
            ConfigError::field(
                "limits",
                format!(
                    "`{}` is not a ponto e banca chance (ponto, banca, tie, pair_ponto, pair_banca)",
                    crate::util::clip(&l.chance)
                ),
            )
        })?;
        if std::mem::replace(&mut seen[c as usize], true) {
            return Err(ConfigError::field(
                "limits",
                format!("chance `{}` is listed twice", c.as_str()),
            ));
        }
        for v in [l.min_cents, l.max_cents].into_iter().flatten() {
            if !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&v) {
                return Err(ConfigError::field(
                    "limits",
                    format!(
                        "chance `{}`: limits must be positive and at most MAX_AMOUNT_CENTS",
                        c.as_str()
                    ),
                ));
            }
        }
        if let (Some(a), Some(b)) = (l.min_cents, l.max_cents)
            && a > b
        {
            return Err(ConfigError::field(
                "limits",
                format!("chance `{}`: minimum above maximum", c.as_str()),
            ));
        }
        own_min[c as usize] = l.min_cents;
        own_max[c as usize] = l.max_cents;
    }
    let mut limits = PbLimits {
        table_min: table.min_bet_cents,
        ..PbLimits::default()
    };
    for c in Chance::ALL {
        let i = c as usize;
        limits.min[i] = own_min[i].or(table.min_bet_cents);
        if variant == Variant::Plain {
            limits.max[i] = own_max[i].or(table.max_bet_cents);
        }
    }
    if variant == Variant::Plain {
        // S.III r.21: "o valor máximo de aposta é 70 vezes superior ao valor mínimo; no empate 15
        // vezes; no par do ponto ou no par da banca, 8 vezes." Read as a cap (digest note 8).
        for c in Chance::ALL {
            if c.is_pair() && !pairs_offered {
                continue;
            }
            let i = c as usize;
            if let (Some(min), Some(max)) = (limits.min[i], limits.max[i]) {
                let k = PB_RATIO[i];
                let cap = i128::from(min) * i128::from(k);
                if i128::from(max) > cap {
                    violations.push(Violation::new(
                        "PB_LIMIT_RATIO_INVALID",
                        Severity::Medium,
                        "P217/2007 T.I C.III S.III r.21",
                        format!(
                            "{}: maximum {max} cents is above {k} × the minimum {min} cents",
                            c.as_str()
                        ),
                    ));
                } else if i128::from(max) < cap {
                    violations.push(
                        Violation::new(
                            "PB_LIMIT_RATIO_INVALID",
                            Severity::Low,
                            "P217/2007 T.I C.III S.III r.21",
                            format!(
                                "{}: maximum {max} cents is below the {k} × proportion of the minimum {min} cents (digest note 8)",
                                c.as_str()
                            ),
                        )
                        .review(),
                    );
                }
            }
        }
    } else {
        // S.IV r.22: M, fixed by the IGJ on the operator's proposal.
        let m = table.opt_int_setting("max_exposure_cents")?.ok_or_else(|| {
            ConfigError::setting(
                "max_exposure_cents",
                "is required for baccarat_macau: the IGJ's cap on the ponto/banca difference (P217/2007 T.I C.III S.IV r.22)",
            )
        })?;
        if !(1..=rules_core::MAX_AMOUNT_CENTS).contains(&m) {
            return Err(ConfigError::setting(
                "max_exposure_cents",
                "must be positive and at most MAX_AMOUNT_CENTS",
            ));
        }
        limits.max_exposure = Some(m);
    }
    let double = table.bool_setting("double_table", false)?;
    if let Some(seats) = table.seats {
        // r.2 / r.12: standing bettors stand in the gaps between the marked seats.
        let per = if double {
            u32::from(seats).saturating_sub(2)
        } else {
            u32::from(seats).saturating_sub(1)
        };
        limits.standing_capacity = Some(per);
    }
    let _ = pb_cite!(variant, "r.21");
    Ok(limits)
}

/// Check every accepted bet against the limits of its variant.
pub(crate) fn pb_check_bets(cfg: &PbConfig, bets: &[PbBet<'_>], adj: &mut Adjudication) {
    let v = cfg.variant;
    let l = &cfg.limits;
    let mut standing_count = 0u32;
    let mut sums = [0i128; 5];
    for (k, b) in bets.iter().enumerate() {
        if b.late {
            adj.violation(
                Violation::new(
                    "PB_LATE_BET",
                    Severity::Medium,
                    pb_cite!(v, "r.12"),
                    format!("bet `{}` was placed after \"nada mais\"", b.bet.id),
                )
                .bet(&b.bet.id)
                .event(b.event_index)
                .tap_seat(b.bet.seat),
            );
        }
        if b.withdrawn {
            continue;
        }
        let i = b.chance as usize;
        sums[i] += i128::from(b.amount);
        if b.chance.is_pair() && !cfg.pairs_offered {
            adj.violation(
                Violation::new(
                    "PB_PAIR_NOT_OFFERED",
                    Severity::Medium,
                    pb_cite!(v, "r.11"),
                    format!(
                        "bet `{}` on {} at a table that does not offer pairs",
                        b.bet.id,
                        b.chance.as_str()
                    ),
                )
                .bet(&b.bet.id)
                .event(b.event_index)
                .tap_seat(b.bet.seat),
            );
        }
        if let Some(min) = l.min[i]
            && b.amount < min
        {
            adj.violation(
                Violation::new(
                    "PB_BET_BELOW_MIN",
                    Severity::Medium,
                    match v {
                        Variant::Plain => "P217/2007 T.I C.III S.III r.21",
                        Variant::Macau => "P217/2007 T.I C.III S.IV r.11",
                    },
                    format!(
                        "bet `{}`: {} cents on {} is below the minimum {min}",
                        b.bet.id,
                        b.amount,
                        b.chance.as_str()
                    ),
                )
                .bet(&b.bet.id)
                .event(b.event_index)
                .tap_seat(b.bet.seat),
            );
        }
        if v == Variant::Plain
            && let Some(max) = l.max[i]
            && b.amount > max
        {
            adj.violation(
                Violation::new(
                    "PB_BET_ABOVE_MAX",
                    Severity::Medium,
                    "P217/2007 T.I C.III S.III r.21",
                    format!(
                        "bet `{}`: {} cents on {} is above the maximum {max}",
                        b.bet.id,
                        b.amount,
                        b.chance.as_str()
                    ),
                )
                .bet(&b.bet.id)
                .event(b.event_index)
                .tap_seat(b.bet.seat),
            );
        }
        if b.standing {
            let first = !bets[..k]
                .iter()
                .any(|o| o.standing && !o.withdrawn && same_bettor(o, b));
            if first {
                standing_count += 1;
            }
            if v == Variant::Plain {
                check_standing(cfg, bets, b, adj);
            }
        }
    }
    if let Some(cap) = l.standing_capacity
        && standing_count > cap
    {
        adj.violation(Violation::new(
            "PB_STANDING_OVER_CAPACITY",
            Severity::Medium,
            pb_cite!(v, "r.12"),
            format!(
                "{standing_count} standing bettors; the table's gaps between seats allow {cap}"
            ),
        ));
    }
    if v == Variant::Plain {
        check_complements(cfg, bets, adj);
    }
    if v == Variant::Macau {
        macau_checks(cfg, bets, &sums, adj);
    }
}

fn same_bettor(a: &PbBet<'_>, b: &PbBet<'_>) -> bool {
    match (&a.bet.player, &b.bet.player) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// S.III r.12: "não é permitido fazer aposta contra a marcação feita pelo ocupante do respectivo
/// lugar". Only ponto against banca counts (digest note 9).
fn check_standing(cfg: &PbConfig, bets: &[PbBet<'_>], b: &PbBet<'_>, adj: &mut Adjudication) {
    let opposite = match b.chance {
        Chance::Ponto => Chance::Banca,
        Chance::Banca => Chance::Ponto,
        _ => return,
    };
    let against = match &b.bet.on_bet {
        Some(on) => bets
            .iter()
            .find(|o| o.bet.id == *on)
            .is_some_and(|o| !o.withdrawn && o.chance == opposite),
        None => b.bet.seat.is_some_and(|seat| {
            bets.iter().any(|o| {
                !o.standing && !o.withdrawn && o.bet.seat == Some(seat) && o.chance == opposite
            })
        }),
    };
    if against {
        adj.violation(
            Violation::new(
                "PB_STANDING_BET_AGAINST_SEAT",
                Severity::Medium,
                "P217/2007 T.I C.III S.III r.12",
                format!(
                    "standing bet `{}` on {} is against the adjacent seat's bet on {}",
                    b.bet.id,
                    b.chance.as_str(),
                    opposite.as_str()
                ),
            )
            .bet(&b.bet.id)
            .event(b.event_index),
        );
    }
    let _ = cfg;
}

/// S.III r.12: standing bettors complement the seated bet "até ao limite máximo": the seated and
/// standing stakes on one chance at one seat together stay within the chance's maximum.
fn check_complements(cfg: &PbConfig, bets: &[PbBet<'_>], adj: &mut Adjudication) {
    for (k, b) in bets.iter().enumerate() {
        if !b.standing || b.withdrawn {
            continue;
        }
        let Some(seat) = b.bet.seat else { continue };
        // Report each (seat, chance) once, at its first standing bet.
        if bets[..k]
            .iter()
            .any(|o| o.standing && !o.withdrawn && o.bet.seat == Some(seat) && o.chance == b.chance)
        {
            continue;
        }
        let Some(max) = cfg.limits.max[b.chance as usize] else {
            continue;
        };
        let total: i128 = bets
            .iter()
            .filter(|o| !o.withdrawn && o.bet.seat == Some(seat) && o.chance == b.chance)
            .map(|o| i128::from(o.amount))
            .sum();
        if total > i128::from(max) {
            adj.violation(
                Violation::new(
                    "PB_STANDING_COMPLEMENT_EXCEEDS_MAX",
                    Severity::Medium,
                    "P217/2007 T.I C.III S.III r.12",
                    format!(
                        "seat {seat}: seated and standing stakes on {} total {total} cents, above the maximum {max}",
                        b.chance.as_str()
                    ),
                )
                .bet(&b.bet.id)
                .seat(seat)
                .event(b.event_index),
            );
        }
    }
}

/// S.IV r.11, r.22-r.25.
fn macau_checks(cfg: &PbConfig, bets: &[PbBet<'_>], sums: &[i128; 5], adj: &mut Adjudication) {
    let l = &cfg.limits;
    // r.11: one player on both ponto and banca keeps a difference of at least the table minimum.
    if let Some(min) = l.table_min {
        for (k, b) in bets.iter().enumerate() {
            if b.withdrawn || !matches!(b.chance, Chance::Ponto | Chance::Banca) {
                continue;
            }
            let key = bettor_key(b);
            let Some(key) = key else { continue };
            if bets[..k].iter().any(|o| {
                !o.withdrawn
                    && matches!(o.chance, Chance::Ponto | Chance::Banca)
                    && bettor_key(o) == Some(key)
            }) {
                continue; // this player was already checked
            }
            let (mut p, mut q) = (0i128, 0i128);
            for o in bets
                .iter()
                .filter(|o| !o.withdrawn && bettor_key(o) == Some(key))
            {
                match o.chance {
                    Chance::Ponto => p += i128::from(o.amount),
                    Chance::Banca => q += i128::from(o.amount),
                    _ => {}
                }
            }
            if p > 0 && q > 0 && (p - q).abs() < i128::from(min) {
                let mut viol = Violation::new(
                    "PB_MACAU_BOTH_SIDES_DIFF_BELOW_MIN",
                    Severity::Medium,
                    "P217/2007 T.I C.III S.IV r.11",
                    format!(
                        "{}: {p} cents on ponto and {q} on banca differ by less than the table minimum {min}",
                        match key {
                            BettorKey::Player(id) => format!("player `{id}`"),
                            BettorKey::Seat(s) => format!("seat {s}"),
                        }
                    ),
                )
                .bet(&b.bet.id);
                if let Some(s) = b.bet.seat {
                    viol = viol.seat(s);
                }
                adj.violation(viol);
            }
        }
    }
    let Some(m) = l.max_exposure else { return };
    let m = i128::from(m);
    let diff = (sums[Chance::Ponto as usize] - sums[Chance::Banca as usize]).abs();
    // r.22, r.23: |Σponto − Σbanca| ≤ M.
    if diff > m {
        adj.violation(Violation::new(
            "PB_MACAU_EXPOSURE_EXCEEDED",
            Severity::Medium,
            "P217/2007 T.I C.III S.IV r.23",
            format!(
                "ponto total {} and banca total {} cents differ by {diff}, above M = {m}",
                sums[Chance::Ponto as usize],
                sums[Chance::Banca as usize]
            ),
        ));
    }
    // r.24: Σtie ≤ 10 % of M.
    let tie = sums[Chance::Tie as usize];
    if tie * 100 > m * 10 {
        adj.violation(Violation::new(
            "PB_MACAU_TIE_TOTAL_EXCEEDED",
            Severity::Medium,
            "P217/2007 T.I C.III S.IV r.24",
            format!("tie bets total {tie} cents, above 10% of M = {m}"),
        ));
    }
    // r.25: each pair chance ≤ 8 % of M (read per chance, digest note 6).
    for c in [Chance::PairPonto, Chance::PairBanca] {
        let s = sums[c as usize];
        if s * 100 > m * 8 {
            adj.violation(Violation::new(
                "PB_MACAU_PAIR_TOTAL_EXCEEDED",
                Severity::Medium,
                "P217/2007 T.I C.III S.IV r.25",
                format!("{} bets total {s} cents, above 8% of M = {m}", c.as_str()),
            ));
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BettorKey<'a> {
    Player(&'a str),
    Seat(u8),
}

fn bettor_key<'a>(b: &PbBet<'a>) -> Option<BettorKey<'a>> {
    match (&b.bet.player, b.bet.seat, b.standing) {
        (Some(p), _, _) => Some(BettorKey::Player(p)),
        (None, Some(s), false) => Some(BettorKey::Seat(s)),
        _ => None,
    }
}
