//! Violation codes (the digest's "What an auditor can check" table, section 9, plus two engine
//! codes for betting records no digest code names) and the citations they carry.

use rules_core::Severity;

/// Reported net per seat differs from the recomputed settlement (discrepancy code; also a
/// `review` violation when the due result rests on a reading). r.49, r.50, r.64–r.66, r.104;
/// P461 r.48, r.55, r.56; Reg806 r.27, r.33, r.45, r.63.
pub const PAYOUT_MISMATCH: &str = "POKER_PAYOUT_MISMATCH";
/// Reported house commission differs from the recomputed one. r.7(a), r.65; P461 r.55;
/// Reg806 r.17–r.19.
pub const COMMISSION_WRONG: &str = "POKER_COMMISSION_WRONG";
/// Table's fixed rate outside the legal range (configuration). r.7; P461 r.55; Reg806 r.17.
pub const COMMISSION_RATE_ILLEGAL: &str = "POKER_COMMISSION_RATE_ILLEGAL";
/// A null hand settled with chips changing hands. r.69, r.109, r.112; Reg806 r.72.
pub const VOID_HAND_SETTLED: &str = "POKER_VOID_HAND_SETTLED";
/// A hand that must stand was voided/refunded. Reg806 r.73; r.70(c).
pub const WRONGLY_VOIDED: &str = "POKER_WRONGLY_VOIDED";
/// A card outside the variant's deck, or the same card twice. r.4, r.31, r.69(e), r.95, r.112;
/// Reg806 r.4(b).
pub const INVALID_DECK: &str = "POKER_INVALID_DECK";
/// Blinds not posted by the right seats (and, as a reading, a mão/button that did not rotate).
/// r.81; Reg806 r.48.
pub const BLIND_WRONG_SEAT: &str = "POKER_BLIND_WRONG_SEAT";
/// Small blind ≠ half the minimum or big blind ≠ the minimum. r.82, r.83; Reg806 r.22.
pub const BLIND_AMOUNT_WRONG: &str = "POKER_BLIND_AMOUNT_WRONG";
/// A returning player who owes missed blinds plays without posting them (r.90); also, as a
/// reading, the big blind owed under r.89 not posted.
pub const MISSED_BLINDS_NOT_POSTED: &str = "POKER_MISSED_BLINDS_NOT_POSTED";
/// Sintético ante other than the minimum bet. r.102, r.111; P461 r.38.
pub const ANTE_WRONG: &str = "POKER_ANTE_WRONG";
/// Opening bet below the table minimum, not all-in. r.20; Reg806 r.23.
pub const BET_BELOW_MIN: &str = "POKER_BET_BELOW_MIN";
/// Omaha/hold'em raise increment below the table minimum, not all-in. r.86.
pub const RAISE_BELOW_MIN: &str = "POKER_RAISE_BELOW_MIN";
/// A raise beyond the cap in one betting round. r.87, r.88, r.47; Reg806 r.38.
pub const RAISE_CAP_EXCEEDED: &str = "POKER_RAISE_CAP_EXCEEDED";
/// Online pot-limit opening bet larger than the pot. Reg806 r.24(b).
pub const BET_OVER_MAX: &str = "POKER_BET_OVER_MAX";
/// Wrong stardilho amounts. r.106(a); P461 r.43(a).
pub const STARDILHO_AMOUNT_WRONG: &str = "POKER_STARDILHO_AMOUNT_WRONG";
/// Chips added to a cave during a hand. r.14(e); Reg806 r.11(b).
pub const CAVE_TOPUP_DURING_HAND: &str = "POKER_CAVE_TOPUP_DURING_HAND";
/// Chips taken off a cave while seated. Reg806 r.11(a); P461 r.61.
pub const CAVE_WITHDRAWAL: &str = "POKER_CAVE_WITHDRAWAL";
/// Lower confidence: hand dealt with fewer than 4 players (r.24), online fewer than 2 (Reg806 r.7).
pub const TOO_FEW_PLAYERS: &str = "POKER_TOO_FEW_PLAYERS";
/// Lower confidence: check facing a bet. r.39(b); Reg806 r.34(b).
pub const ILLEGAL_CHECK: &str = "POKER_ILLEGAL_CHECK";
/// Lower confidence: an out-of-turn bettor raised when his turn came. r.71(f).
pub const OUT_OF_TURN_INCREASED: &str = "POKER_OUT_OF_TURN_INCREASED";
/// Lower confidence: raise by a player who had not bet before a common card was exposed early.
/// r.70(h); P461 r.65.
pub const RAISE_AFTER_EARLY_EXPOSURE: &str = "POKER_RAISE_AFTER_EARLY_EXPOSURE";
/// Lower confidence: stardilho at a table where the concessionaire did not enable it. r.106;
/// P461 r.43.
pub const STARDILHO_NOT_ENABLED: &str = "POKER_STARDILHO_NOT_ENABLED";
/// Lower confidence: no burn card before flop, turn or river. r.41, r.43, r.45 (r.70(g)).
pub const BURN_MISSING: &str = "POKER_BURN_MISSING";
/// Lower confidence: a player dealt the wrong number of hole cards. r.77, r.93, r.96
/// (sintético: the hand is null, r.109(b)).
pub const HOLE_CARD_COUNT: &str = "POKER_HOLE_CARD_COUNT";
/// Engine code (not in the digest's table): a player acted out of turn. The act stands
/// (r.71(f)); the dealer must announce whose turn it is and stop acts out of time (r.9(e), r.37;
/// Reg806 r.34, r.51).
pub const OUT_OF_TURN: &str = "POKER_OUT_OF_TURN";
/// Engine code (not in the digest's table): a betting record the rules forbid that no digest
/// code names: a call that does not match the bet (r.39(c), r.48; Reg806 r.34(c), r.40), a call
/// putting in more than the bet (r.71(d): counts as a call, the excess is returned), a betting
/// round closed before every active player matched (r.48), a bet or raise labelled as what it
/// is not.
pub const BETTING_IRREGULAR: &str = "POKER_BETTING_IRREGULAR";

/// Engine code: a session fee on the table maximum (P217 r.7(b) "do máximo da mesa") is
/// charged at a table whose configuration states no maximum: the fee cannot be checked. Raised
/// when the case arises, not by refusing the configuration.
pub const SESSION_FEE_BASE_MISSING: &str = "POKER_SESSION_FEE_BASE_MISSING";

/// Every code this engine can emit as a violation, with its severity.
pub const ALL: [(&str, Severity); 27] = [
    (PAYOUT_MISMATCH, Severity::High),
    (COMMISSION_WRONG, Severity::High),
    (COMMISSION_RATE_ILLEGAL, Severity::High),
    (VOID_HAND_SETTLED, Severity::High),
    (WRONGLY_VOIDED, Severity::High),
    (INVALID_DECK, Severity::Medium),
    (BLIND_WRONG_SEAT, Severity::Medium),
    (BLIND_AMOUNT_WRONG, Severity::Medium),
    (MISSED_BLINDS_NOT_POSTED, Severity::Medium),
    (ANTE_WRONG, Severity::Medium),
    (BET_BELOW_MIN, Severity::Medium),
    (RAISE_BELOW_MIN, Severity::Medium),
    (RAISE_CAP_EXCEEDED, Severity::Medium),
    (BET_OVER_MAX, Severity::Medium),
    (STARDILHO_AMOUNT_WRONG, Severity::Medium),
    (CAVE_TOPUP_DURING_HAND, Severity::Medium),
    (CAVE_WITHDRAWAL, Severity::Medium),
    (TOO_FEW_PLAYERS, Severity::Low),
    (ILLEGAL_CHECK, Severity::Medium),
    (OUT_OF_TURN_INCREASED, Severity::Medium),
    (RAISE_AFTER_EARLY_EXPOSURE, Severity::Medium),
    (STARDILHO_NOT_ENABLED, Severity::Low),
    (BURN_MISSING, Severity::Low),
    (HOLE_CARD_COUNT, Severity::Low),
    (OUT_OF_TURN, Severity::Low),
    (BETTING_IRREGULAR, Severity::Medium),
    (SESSION_FEE_BASE_MISSING, Severity::Low),
];

/// Severity of `code` (Info for an unknown code, which never happens).
pub fn severity(code: &str) -> Severity {
    ALL.iter()
        .find(|(c, _)| *c == code)
        .map(|(_, s)| *s)
        .unwrap_or(Severity::Info)
}
