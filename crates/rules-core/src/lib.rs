//! # rules-core: the one interface every rule engine serves
//!
//! The casino-ledger rule engines are pure, deterministic libraries: the same input gives the same
//! output on every machine, forever. This crate holds the vocabulary they share and nothing else:
//!
//! * [`TableConfig`]: the table configuration in force (game id, regulation version, limits,
//!   commission option, jackpot settings, and game-specific [`Setting`]s);
//! * [`Round`]: the complete record of one round, as an ordered list of [`RoundEvent`]s (bets,
//!   cards, dice, ball, decisions, faults, procedures) plus, optionally, the [`Settlement`] the
//!   casino reported;
//! * [`Adjudication`]: what the rules say was due: for every bet its net result in integer cents,
//!   whether the round is void and why, jackpot wins, the house's take, and every [`Violation`]
//!   and [`Discrepancy`], each with a stable code and the citation of the rule it enforces;
//! * [`Engine`]: the trait every game engine implements.
//!
//! Money is always integer cents ([`Cents`]). No floats anywhere.
//!
//! What this crate must never know about: protobuf, gRPC, sled, files, clocks. The ledger turns its
//! signed events into these types in exactly one place (the audit crate).

pub mod adjudication;
pub mod card;
pub mod config;
pub mod engine;
pub mod game;
pub mod round;
pub mod sim;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use adjudication::{
    Adjudication, BetOutcome, Confidence, Discrepancy, HouseTake, JackpotAccount, JackpotWin, Note,
    Outcome, Severity, Violation, VoidInfo, is_void_breach,
};
pub use card::{Card, CardCounts, Rank, Suit};
pub use config::{Award, ChanceLimit, JackpotConfig, JackpotPrize, Setting, TableConfig};
pub use engine::{ConfigError, Configured, Engine, Options, RoundError, RoundInput};
pub use game::GameId;
pub use round::{
    Bet, Decision, Direction, EventKind, Recipient, ReportedNet, Round, RoundEvent, Settlement,
};
pub use sim::{MistakeSpec, SimError, SimRng, Simulate, honest_settlement};

/// Money in integer euro cents. Signed: a net result is negative on a loss.
pub type Cents = i64;

/// Identifier of a bet, player or round. Cheap to clone (reference counted), serialised as a
/// plain JSON string.
pub type Id = std::sync::Arc<str>;

/// The largest stake or amount any engine accepts: 10^12 cents (ten billion euros). Every payout
/// multiple in the regulations is far below 10^6, so products of an accepted amount and a multiple
/// never overflow `i64`. Larger amounts are a [`RoundError`], never a wrap-around.
pub const MAX_AMOUNT_CENTS: Cents = 1_000_000_000_000;

/// Check a recorded stake: positive and at most [`MAX_AMOUNT_CENTS`].
pub fn check_stake(round: &Round, bet_id: &str, amount_cents: Cents) -> Result<(), RoundError> {
    if amount_cents <= 0 {
        return Err(RoundError::bet(
            round,
            bet_id,
            format!("amount_cents must be positive, got {amount_cents}"),
        ));
    }
    if amount_cents > MAX_AMOUNT_CENTS {
        return Err(RoundError::bet(
            round,
            bet_id,
            format!(
                "amount_cents {amount_cents} is above the ledger's ceiling of {MAX_AMOUNT_CENTS}"
            ),
        ));
    }
    Ok(())
}

/// Check an amount carried over in the table state from an earlier round (an open bet's stake):
/// in 1..=[`MAX_AMOUNT_CENTS`], as it was when its bet was placed. A state read from a file can
/// say anything; the error names the bet and the field.
pub fn check_carried_amount(
    round: &Round,
    bet_id: &str,
    field: &str,
    amount_cents: Cents,
) -> Result<(), RoundError> {
    if amount_cents <= 0 || amount_cents > MAX_AMOUNT_CENTS {
        return Err(RoundError::bet(
            round,
            bet_id,
            format!(
                "in the table state: {field} must be in 1..={MAX_AMOUNT_CENTS}, got {amount_cents}"
            ),
        ));
    }
    Ok(())
}

/// Check an amount carried by an event (a decision's chips, a procedure's amount): positive and at
/// most [`MAX_AMOUNT_CENTS`]; the error names the event.
pub fn check_event_amount(
    round: &Round,
    event_index: usize,
    amount_cents: Cents,
) -> Result<(), RoundError> {
    if amount_cents <= 0 || amount_cents > MAX_AMOUNT_CENTS {
        return Err(RoundError::event(
            round,
            event_index,
            format!("amount_cents must be in 1..={MAX_AMOUNT_CENTS}, got {amount_cents}"),
        ));
    }
    Ok(())
}

/// Citation of the ledger's own conventions (not a rule of the regulations), used by checks that
/// enforce the consistency of the record itself rather than a rule of the game.
pub const LEDGER_CONVENTION: &str = "casino-ledger record convention";

#[cfg(test)]
mod tests {
    use super::*;

    fn round() -> Round {
        Round {
            round_id: "R7".into(),
            opened_at_ms: None,
            jackpot_before_cents: None,
            events: vec![],
            settlement: None,
        }
    }

    /// The amount checks accept exactly 1..=MAX_AMOUNT_CENTS, and their errors name the round,
    /// the bet or event and the field.
    #[test]
    fn amounts_are_checked_at_both_bounds() {
        let r = round();
        for ok in [1, 2, MAX_AMOUNT_CENTS - 1, MAX_AMOUNT_CENTS] {
            assert_eq!(check_stake(&r, "b1", ok), Ok(()), "{ok}");
            assert_eq!(
                check_carried_amount(&r, "b1", "stake_cents", ok),
                Ok(()),
                "{ok}"
            );
            assert_eq!(check_event_amount(&r, 3, ok), Ok(()), "{ok}");
        }
        for bad in [i64::MIN, -1, 0, MAX_AMOUNT_CENTS + 1, i64::MAX] {
            assert!(
                matches!(check_stake(&r, "b1", bad), Err(RoundError::Bet { ref round, ref bet_id, .. }) if round == "R7" && bet_id == "b1"),
                "{bad}"
            );
            let e = check_carried_amount(&r, "b1", "stake_cents", bad).unwrap_err();
            assert!(
                matches!(&e, RoundError::Bet { bet_id, reason, .. } if bet_id == "b1" && reason.contains("stake_cents")),
                "{bad}: {e:?}"
            );
            assert!(
                matches!(
                    check_event_amount(&r, 3, bad),
                    Err(RoundError::Event { index: 3, .. })
                ),
                "{bad}"
            );
        }
        let e = check_stake(&r, "b1", 0).unwrap_err();
        assert!(e.to_string().contains("must be positive, got 0"), "{e}");
        let e = check_stake(&r, "b1", MAX_AMOUNT_CENTS + 1).unwrap_err();
        assert!(e.to_string().contains("above the ledger's ceiling"), "{e}");
    }
}
