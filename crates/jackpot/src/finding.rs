//! Findings: rule breaches, each with a stable code and the citation of the rule it enforces.

use std::borrow::Cow;

use rules_core::adjudication::Text;
use rules_core::{Cents, Confidence, GameId, Id, LEDGER_CONVENTION, Severity};
use serde::{Deserialize, Serialize};

use crate::amount::{E4, to_cents};

/// A rule the record breaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable code, see [`codes`] and [`CHECKS`].
    pub code: Text,
    pub severity: Severity,
    #[serde(default)]
    pub confidence: Confidence,
    /// The rule enforced, e.g. `P217/2007 T.III r.6`.
    pub citation: Text,
    /// One line naming the facts.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_id: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_id: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub casino_id: Option<Id>,
    /// What was due and what was reported, when money is compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amounts: Option<Amounts>,
    /// Ledger indexes of the events that show the breach (the event being applied last).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<u64>,
}

/// Due and reported amounts of a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Amounts {
    /// Exact due amount, in 1/10,000 cent.
    pub due_e4: E4,
    /// The due amount in whole cents (floored).
    pub due_cents: Cents,
    /// What the record says, in cents.
    pub reported_cents: Cents,
}

impl Amounts {
    pub fn new(due_e4: E4, reported_cents: Cents) -> Amounts {
        Amounts {
            due_e4,
            due_cents: to_cents(due_e4),
            reported_cents,
        }
    }
}

impl Finding {
    /// A finding of a catalogued check (severity, confidence and citation from [`CHECKS`]).
    pub fn new(check: &'static Check, message: impl Into<String>) -> Finding {
        Finding {
            code: Cow::Borrowed(check.code),
            severity: check.severity,
            confidence: check.confidence,
            citation: Cow::Borrowed(check.citation),
            message: message.into(),
            machine_id: None,
            table_id: None,
            model_id: None,
            pool_id: None,
            casino_id: None,
            amounts: None,
            evidence: Vec::new(),
        }
    }

    pub fn machine(mut self, id: &Id) -> Finding {
        self.machine_id = Some(id.clone());
        self
    }
    pub fn table(mut self, id: &Id) -> Finding {
        self.table_id = Some(id.clone());
        self
    }
    pub fn model(mut self, id: &Id) -> Finding {
        self.model_id = Some(id.clone());
        self
    }
    pub fn pool(mut self, id: &Id) -> Finding {
        self.pool_id = Some(id.clone());
        self
    }
    pub fn casino(mut self, id: &Id) -> Finding {
        self.casino_id = Some(id.clone());
        self
    }
    pub fn amounts(mut self, due_e4: E4, reported_cents: Cents) -> Finding {
        self.amounts = Some(Amounts::new(due_e4, reported_cents));
        self
    }
    /// Add evidence indexes (kept sorted and unique).
    pub fn evidence(mut self, indexes: impl IntoIterator<Item = u64>) -> Finding {
        self.evidence.extend(indexes);
        self.evidence.sort_unstable();
        self.evidence.dedup();
        self
    }
    pub fn confidence(mut self, c: Confidence) -> Finding {
        self.confidence = c;
        self
    }
    /// Replace code and citation (table-jackpot checks, whose code depends on the game).
    pub fn coded(mut self, code: &'static str, citation: &'static str) -> Finding {
        self.code = Cow::Borrowed(code);
        self.citation = Cow::Borrowed(citation);
        self
    }
}

/// One check of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    pub code: &'static str,
    pub severity: Severity,
    /// Default confidence (a few checks lower or raise it case by case, documented there).
    pub confidence: Confidence,
    pub citation: &'static str,
    /// What is checked.
    pub check: &'static str,
}

/// The stable finding codes.
pub mod codes {
    pub const SLOT_METER_DECREASED: &str = "SLOT_METER_DECREASED";
    pub const SLOT_METER_MISSING: &str = "SLOT_METER_MISSING";
    pub const SLOT_PAYTABLE_RETURN_BELOW_80: &str = "SLOT_PAYTABLE_RETURN_BELOW_80";
    pub const SLOT_JACKPOT_CAPTIVE_MISMATCH: &str = "SLOT_JACKPOT_CAPTIVE_MISMATCH";
    pub const SLOT_JACKPOT_AWARD_MISMATCH: &str = "SLOT_JACKPOT_AWARD_MISMATCH";
    pub const SLOT_AWARD_MACHINE_NOT_IN_POOL: &str = "SLOT_AWARD_MACHINE_NOT_IN_POOL";
    pub const SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE: &str = "SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE";
    pub const SLOT_TRANSFER_TARGET_INVALID: &str = "SLOT_TRANSFER_TARGET_INVALID";
    pub const SLOT_TRANSFER_AMOUNT_MISMATCH: &str = "SLOT_TRANSFER_AMOUNT_MISMATCH";
    pub const SLOT_TRANSFER_DUPLICATE: &str = "SLOT_TRANSFER_DUPLICATE";
    pub const SLOT_PLAYED_WITH_FAULTY_METER: &str = "SLOT_PLAYED_WITH_FAULTY_METER";
    pub const SLOT_PLAYED_OUT_OF_SERVICE: &str = "SLOT_PLAYED_OUT_OF_SERVICE";
    pub const SLOT_MODEL_CHANGED_UNAPPROVED: &str = "SLOT_MODEL_CHANGED_UNAPPROVED";
    pub const SLOT_OBSERVED_RETURN_LOW: &str = "SLOT_OBSERVED_RETURN_LOW";
    pub const SLOT_RAM_CLEAR_UNDOCUMENTED: &str = "SLOT_RAM_CLEAR_UNDOCUMENTED";
    pub const SLOT_RAM_CLEAR_BEFORE_MISMATCH: &str = "SLOT_RAM_CLEAR_BEFORE_MISMATCH";
    pub const SLOT_METER_GAME_MISMATCH: &str = "SLOT_METER_GAME_MISMATCH";
    pub const SLOT_JACKPOT_CONTRIBUTION_MISMATCH: &str = "SLOT_JACKPOT_CONTRIBUTION_MISMATCH";
    pub const TABLE_JACKPOT_DISPLAY_MISMATCH: &str = "TABLE_JACKPOT_DISPLAY_MISMATCH";
    pub const BJ_JACKPOT_DISPLAY_MISMATCH: &str = "BJ_JACKPOT_DISPLAY_MISMATCH";
    pub const PSD_JACKPOT_DISPLAY_MISMATCH: &str = "PSD_JACKPOT_DISPLAY_MISMATCH";
    pub const TABLE_JACKPOT_NOT_IN_POOL: &str = "TABLE_JACKPOT_NOT_IN_POOL";
    pub const TABLE_JACKPOT_OVERDRAWN: &str = "TABLE_JACKPOT_OVERDRAWN";
    pub const SLOT_METERS_MOVED_OUT_OF_SERVICE: &str = "SLOT_METERS_MOVED_OUT_OF_SERVICE";
    pub const SLOT_METERS_MOVED_DOOR_OPEN: &str = "SLOT_METERS_MOVED_DOOR_OPEN";
    pub const SLOT_METERS_WITHOUT_GAMES: &str = "SLOT_METERS_WITHOUT_GAMES";
    pub const SLOT_HANDPAY_METER_MISMATCH: &str = "SLOT_HANDPAY_METER_MISMATCH";
    pub const SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD: &str = "SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD";
    pub const SLOT_AWARD_WITHOUT_HIT: &str = "SLOT_AWARD_WITHOUT_HIT";
    pub const SLOT_EVENTS_LOST: &str = "SLOT_EVENTS_LOST";
    pub const SLOT_SOFTWARE_AUTH_FAILED: &str = "SLOT_SOFTWARE_AUTH_FAILED";
    pub const SLOT_SOFTWARE_SIGNATURE_MISMATCH: &str = "SLOT_SOFTWARE_SIGNATURE_MISMATCH";
    pub const SLOT_CONFIG_CHANGE_UNAUTHORIZED: &str = "SLOT_CONFIG_CHANGE_UNAUTHORIZED";
}

use codes::*;

const fn check(
    code: &'static str,
    severity: Severity,
    confidence: Confidence,
    citation: &'static str,
    check: &'static str,
) -> Check {
    Check {
        code,
        severity,
        confidence,
        citation,
        check,
    }
}

const C: Confidence = Confidence::Certain;
const R: Confidence = Confidence::Review;

pub static METER_DECREASED: Check = check(
    SLOT_METER_DECREASED,
    Severity::High,
    C,
    "P217/2007 T.III r.9, r.14",
    "a meter reading lower than the previous one without a RAM clear, and not a plausible rollover",
);
pub static METER_MISSING: Check = check(
    SLOT_METER_MISSING,
    Severity::Medium,
    C,
    "P217/2007 T.III r.9",
    "a reading without one of the three mandatory meters (coin_in, coin_out, total_drop)",
);
pub static PAYTABLE_RETURN_BELOW_80: Check = check(
    SLOT_PAYTABLE_RETURN_BELOW_80,
    Severity::High,
    C,
    "P217/2007 T.III r.2 (r.3, r.4)",
    "approved pay-table return below 80%; Certain when below even counting the machine's jackpot \
     contributions, Review when only the base pay table is below (machines.md M5)",
);
pub static CAPTIVE_MISMATCH: Check = check(
    SLOT_JACKPOT_CAPTIVE_MISMATCH,
    Severity::High,
    C,
    "P217/2007 T.III r.3, r.4, r.5",
    "declared captive value differs by a cent or more from start + contributions − awards ± transfers",
);
pub static AWARD_MISMATCH: Check = check(
    SLOT_JACKPOT_AWARD_MISMATCH,
    Severity::High,
    C,
    "P217/2007 T.III r.5 (r.3, r.4)",
    "prize paid differs by a cent or more from the captive value at the award",
);
pub static AWARD_NOT_IN_POOL: Check = check(
    SLOT_AWARD_MACHINE_NOT_IN_POOL,
    Severity::High,
    C,
    "P217/2007 T.III r.3, r.4",
    "a jackpot paid on a machine other than its own, or a superjackpot outside its group",
);
pub static TRANSFER_WITHOUT_FM: Check = check(
    SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE,
    Severity::High,
    C,
    "P217/2007 T.III r.5, r.6",
    "captive values moved from a pool whose members are not all under force majeure for it (the \
     transfer is booked as carried out)",
);
pub static TRANSFER_TARGET_INVALID: Check = check(
    SLOT_TRANSFER_TARGET_INVALID,
    Severity::High,
    C,
    "P217/2007 T.III r.6",
    "target not of the same model and bets while such machines exist, or of another model without a \
     prior IGJ authorisation, or not a machine pool able to award (the transfer is booked as carried \
     out: the target holds the whole value)",
);
pub static TRANSFER_AMOUNT_MISMATCH: Check = check(
    SLOT_TRANSFER_AMOUNT_MISMATCH,
    Severity::High,
    C,
    "P217/2007 T.III r.5, r.6",
    "amount declared moved differs by a cent or more from the whole captive value (both amounts \
     given; the book credits the target with the whole value, and the target's later declarations \
     short by just that difference are not flagged again)",
);
pub static TRANSFER_DUPLICATE: Check = check(
    SLOT_TRANSFER_DUPLICATE,
    Severity::High,
    C,
    "P217/2007 T.III r.5, r.6",
    "a transfer id already booked (nothing more moves), or a second transfer out of a pool in the \
     same force-majeure episode (its captive value was already moved)",
);
pub static PLAYED_WITH_FAULTY_METER: Check = check(
    SLOT_PLAYED_WITH_FAULTY_METER,
    Severity::Medium,
    R,
    "P217/2007 T.III r.9",
    "bets recorded after the fault event or reading that showed a meter fault (missing or \
     decreasing meter) and before a restore; not the play inside that reading",
);
pub static PLAYED_OUT_OF_SERVICE: Check = check(
    SLOT_PLAYED_OUT_OF_SERVICE,
    Severity::Medium,
    R,
    LEDGER_CONVENTION,
    "bets recorded while the machine is out of service (MachineFault.out_of_service or \
     force_majeure) and before a restore",
);
pub static MODEL_CHANGED_UNAPPROVED: Check = check(
    SLOT_MODEL_CHANGED_UNAPPROVED,
    Severity::Medium,
    R,
    "P217/2007 T.III r.8",
    "a machine offering bets its approved model does not list, or a pool's contribution rate \
     changed by a reconfiguration (no approval event)",
);
pub static OBSERVED_RETURN_LOW: Check = check(
    SLOT_OBSERVED_RETURN_LOW,
    Severity::Info,
    R,
    "P217/2007 T.III r.2",
    "statistical alert only (M4): a machine's lifetime observed return below 80% once its coin-in \
     passes the book's threshold",
);
pub static RAM_CLEAR_UNDOCUMENTED: Check = check(
    SLOT_RAM_CLEAR_UNDOCUMENTED,
    Severity::High,
    C,
    "P217/2007 T.III r.9, r.14; casino-ledger record convention",
    "a RAM clear without the three mandatory meters both before and after",
);
pub static RAM_CLEAR_BEFORE_MISMATCH: Check = check(
    SLOT_RAM_CLEAR_BEFORE_MISMATCH,
    Severity::High,
    C,
    "P217/2007 T.III r.9, r.14; casino-ledger record convention",
    "a RAM clear whose 'before' meters are lower than the last reading",
);
pub static METER_GAME_MISMATCH: Check = check(
    SLOT_METER_GAME_MISMATCH,
    Severity::Medium,
    C,
    "P217/2007 T.III r.9, r.14",
    "games reported between two readings disagree with the meter increases (Σ wager vs Δcoin_in, \
     Σ win vs Δcoin_out, count vs Δgames_played)",
);
pub static CONTRIBUTION_MISMATCH: Check = check(
    SLOT_JACKPOT_CONTRIBUTION_MISMATCH,
    Severity::Medium,
    R,
    "P217/2007 T.III r.3, r.4",
    "contributions a machine reported between two readings differ from the rate × Δcoin_in by at \
     least one cent per report, or are reported for a pool the machine does not feed",
);
pub static TABLE_DISPLAY_MISMATCH: Check = check(
    TABLE_JACKPOT_DISPLAY_MISMATCH,
    Severity::High,
    C,
    LEDGER_CONVENTION,
    "table jackpot display (value before a round, or a declared value) differs by a cent or more \
     from the book's captive value; coded BJ_/PSD_JACKPOT_DISPLAY_MISMATCH for blackjack and \
     póquer sem descarte",
);
pub static TABLE_NOT_IN_POOL: Check = check(
    TABLE_JACKPOT_NOT_IN_POOL,
    Severity::Medium,
    C,
    LEDGER_CONVENTION,
    "a table round moved a pool the table is not a member of",
);
pub static TABLE_OVERDRAWN: Check = check(
    TABLE_JACKPOT_OVERDRAWN,
    Severity::High,
    R,
    LEDGER_CONVENTION,
    "a table round paid more out of the jackpot than it held (reading: smaller prizes come out of \
     the pool, blackjack.md 13.12)",
);

pub static METERS_MOVED_OUT_OF_SERVICE: Check = check(
    SLOT_METERS_MOVED_OUT_OF_SERVICE,
    Severity::Medium,
    R,
    "P217/2007 T.III silent; follows 25 CFR 547.10(a) (play ceases on a fault) and GLI-11 error \
     conditions",
    "play meters (coin_in, coin_out, games_played) went up over a reading window the machine spent \
     powered off or under a play-disabling tilt or device fault, or a game was recorded meanwhile \
     (machines that report significant events; faults of MachineFault and meter faults keep \
     their own checks)",
);
pub static METERS_MOVED_DOOR_OPEN: Check = check(
    SLOT_METERS_MOVED_DOOR_OPEN,
    Severity::Medium,
    R,
    "P217/2007 T.III silent; follows 25 CFR 547.10(b) (play disabled while a door is open)",
    "play meters went up over a reading window the machine spent with a door open, or a game was \
     recorded while a door was open",
);
pub static METERS_WITHOUT_GAMES: Check = check(
    SLOT_METERS_WITHOUT_GAMES,
    Severity::Medium,
    R,
    "P217/2007 T.III r.9, r.14 (reading: the machine's records must explain its meters)",
    "play meters went up between two readings of a machine that reports its games, and no game \
     was reported in between",
);
pub static HANDPAY_METER_MISMATCH: Check = check(
    SLOT_HANDPAY_METER_MISMATCH,
    Severity::High,
    R,
    "P217/2007 T.III r.13, r.14 (reading: a hand pay \"pelo caixa da sala, mediante guia\" must \
     show in the machine's records); SAS/G2S hand-paid meters",
    "the hand pays reset between two readings differ from the hand_paid meter's increase, or the \
     reading lacks the hand_paid meter",
);
pub static PROGRESSIVE_HIT_WITHOUT_AWARD: Check = check(
    SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD,
    Severity::High,
    C,
    "P217/2007 T.III r.5, r.14 (r.3, r.4)",
    "a progressive hit the machine recorded was reset, or hit again, with no JackpotAwarded for \
     its pool on that machine in between",
);
pub static AWARD_WITHOUT_HIT: Check = check(
    SLOT_AWARD_WITHOUT_HIT,
    Severity::High,
    R,
    "P217/2007 T.III r.14 (reading: a prize is established by the machine's records)",
    "a jackpot awarded on a machine that reports significant events, with no progressive hit of \
     that pool recorded by the machine and not yet awarded",
);
pub static EVENTS_LOST: Check = check(
    SLOT_EVENTS_LOST,
    Severity::High,
    R,
    "P217/2007 T.III silent (r.14 relies on the machine's records); follows 25 CFR 547.10(a)(2) \
     (events must be recorded) and the AGCO standard 11.1.2 (buffer full)",
    "the machine or its agent declared that events were lost before they could be reported (an \
     event buffer overflow): a gap in the record",
);
pub static SOFTWARE_AUTH_FAILED: Check = check(
    SLOT_SOFTWARE_AUTH_FAILED,
    Severity::High,
    R,
    "P217/2007 T.III r.7, r.8 (reading); follows 25 CFR 547.10(a) (program storage medium fault)",
    "the machine reported that its program failed authentication",
);
pub static SOFTWARE_SIGNATURE_MISMATCH: Check = check(
    SLOT_SOFTWARE_SIGNATURE_MISMATCH,
    Severity::High,
    R,
    "P217/2007 T.III r.7, r.8 (reading: the certified program is a characteristic of the approved \
     model)",
    "a program signature (component, algorithm, signature) that none of the model's \
     ProgramApproved events lists, for a model with approved programs",
);
pub static CONFIG_CHANGE_UNAUTHORIZED: Check = check(
    SLOT_CONFIG_CHANGE_UNAUTHORIZED,
    Severity::Medium,
    R,
    "P217/2007 T.III r.8 (reading); casino-ledger record convention",
    "a configuration change that cites no operator MachineChangeAuthorized, an unknown one, one \
     for another machine, or one already used",
);

/// Every check the book runs, for legends and documentation.
pub static CHECKS: [&Check; 33] = [
    &METER_DECREASED,
    &METER_MISSING,
    &PAYTABLE_RETURN_BELOW_80,
    &CAPTIVE_MISMATCH,
    &AWARD_MISMATCH,
    &AWARD_NOT_IN_POOL,
    &TRANSFER_WITHOUT_FM,
    &TRANSFER_TARGET_INVALID,
    &TRANSFER_AMOUNT_MISMATCH,
    &TRANSFER_DUPLICATE,
    &PLAYED_WITH_FAULTY_METER,
    &PLAYED_OUT_OF_SERVICE,
    &MODEL_CHANGED_UNAPPROVED,
    &OBSERVED_RETURN_LOW,
    &RAM_CLEAR_UNDOCUMENTED,
    &RAM_CLEAR_BEFORE_MISMATCH,
    &METER_GAME_MISMATCH,
    &CONTRIBUTION_MISMATCH,
    &TABLE_DISPLAY_MISMATCH,
    &TABLE_DISPLAY_BJ,
    &TABLE_DISPLAY_PSD,
    &TABLE_NOT_IN_POOL,
    &TABLE_OVERDRAWN,
    &METERS_MOVED_OUT_OF_SERVICE,
    &METERS_MOVED_DOOR_OPEN,
    &METERS_WITHOUT_GAMES,
    &HANDPAY_METER_MISMATCH,
    &PROGRESSIVE_HIT_WITHOUT_AWARD,
    &AWARD_WITHOUT_HIT,
    &EVENTS_LOST,
    &SOFTWARE_AUTH_FAILED,
    &SOFTWARE_SIGNATURE_MISMATCH,
    &CONFIG_CHANGE_UNAUTHORIZED,
];

pub static TABLE_DISPLAY_BJ: Check = check(
    BJ_JACKPOT_DISPLAY_MISMATCH,
    Severity::High,
    C,
    "P217/2007 T.I C.III S.I r.40, r.41",
    "blackjack jackpot display before a round (or declared) ≠ previous value + Σ(chip × increment) \
     − prizes, as the book kept it across rounds",
);
pub static TABLE_DISPLAY_PSD: Check = check(
    PSD_JACKPOT_DISPLAY_MISMATCH,
    Severity::High,
    C,
    "P217/2007 T.I C.III S.II r.3, r.4",
    "póquer sem descarte jackpot display before a round (or declared) ≠ previous value + Σ(chip × \
     increment) − prizes, as the book kept it across rounds",
);

/// The display-mismatch check for a table jackpot of `game`.
pub(crate) fn table_display_check(game: Option<GameId>) -> &'static Check {
    match game {
        Some(GameId::Blackjack) => &TABLE_DISPLAY_BJ,
        Some(GameId::PokerSemDescarte) => &TABLE_DISPLAY_PSD,
        _ => &TABLE_DISPLAY_MISMATCH,
    }
}

/// Look a check up by code.
pub fn check_by_code(code: &str) -> Option<&'static Check> {
    CHECKS.iter().copied().find(|c| c.code == code)
}
