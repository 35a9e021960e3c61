//! What the rules say about a round: the adjudication.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::{Cents, GameId, Id, LEDGER_CONVENTION, Settlement};

/// Static or owned text (codes, citations, reasons). Engines use `&'static str` constants on the
/// hot path; deserialised values are owned.
pub type Text = Cow<'static, str>;

/// The engine's verdict on one round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    pub round_id: Id,
    pub game: GameId,
    /// Set when the round is void as a whole (every bet returned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub void: Option<VoidInfo>,
    /// One entry per bet of the round (and, for games whose bets live across rounds, per open
    /// bet decided or still standing), in the order the bets were placed.
    pub bets: Vec<BetOutcome>,
    /// Jackpot-qualifying hands and what they win.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jackpot_wins: Vec<JackpotWin>,
    /// How the round moved the table jackpot, for tables with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jackpot: Option<JackpotAccount>,
    /// The house's take due (poker commission, chemin de fer cagnotte), separate from the bets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub house: Vec<HouseTake>,
    /// Every rule the record breaks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// Every bet whose reported result differs from the due one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discrepancies: Vec<Discrepancy>,
    /// Rule-by-rule explanation, filled only when [`crate::Options::explain`] is set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
}

impl Adjudication {
    /// An empty adjudication for `round_id`.
    pub fn new(game: GameId, round_id: Id) -> Adjudication {
        Adjudication {
            round_id,
            game,
            void: None,
            bets: Vec::new(),
            jackpot_wins: Vec::new(),
            jackpot: None,
            house: Vec::new(),
            violations: Vec::new(),
            discrepancies: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Sum of the due nets of all bets (the players' result; the house's is its negation plus
    /// any house take).
    pub fn total_due_net_cents(&self) -> Cents {
        self.bets.iter().map(|b| b.due_net_cents).sum()
    }

    /// The outcome of bet `bet_id`.
    pub fn bet(&self, bet_id: &str) -> Option<&BetOutcome> {
        self.bets.iter().find(|b| &*b.bet_id == bet_id)
    }

    /// True if a violation with `code` was recorded.
    pub fn has_violation(&self, code: &str) -> bool {
        self.violations.iter().any(|v| v.code == code)
    }

    /// Record a violation.
    pub fn violation(&mut self, v: Violation) {
        self.violations.push(v);
    }

    /// Add an explanation line (call only when explaining, or guard with `options.explain`).
    pub fn note(&mut self, citation: impl Into<Text>, text: impl Into<String>) {
        self.notes.push(Note {
            citation: citation.into(),
            text: text.into(),
        });
    }

    /// Mark the discrepancy on `bet_id` (if any) as resting on a reading, for human review.
    pub fn mark_review(&mut self, bet_id: &str) {
        for d in &mut self.discrepancies {
            if &*d.bet_id == bet_id {
                d.confidence = Confidence::Review;
            }
        }
    }

    /// Compare the reported settlement with the due results, bet by bet.
    ///
    /// * Each bet's `reported_net_cents` is filled from the settlement (a round the casino
    ///   declared void reports 0 for every bet it does not list).
    /// * Every bet whose reported net differs from its due net, or that the settlement leaves out
    ///   although something is due, becomes a [`Discrepancy`] with code `wrong_payout_code` (the
    ///   game's `XX_WRONG_PAYOUT`) and `citation`.
    /// * A reported bet id the round does not have, or one reported twice, is a violation
    ///   `SETTLEMENT_UNKNOWN_BET` / `SETTLEMENT_DUPLICATE_BET` (ledger convention). Of a bet's
    ///   several reports, the one at the bet's own position in the settlement (settlements list
    ///   bets in the order they were placed) is its result if there is one, else the first.
    ///
    /// * **One breach, one finding**: a discrepancy that a void breach already names is then
    ///   dropped ([`Adjudication::supersede_by_void_breaches`]).
    ///
    /// Engines call this last, after every bet's due result and every violation is known.
    pub fn reconcile(
        &mut self,
        settlement: Option<&Settlement>,
        wrong_payout_code: &'static str,
        citation: &'static str,
    ) {
        self.compare_settlement(settlement, wrong_payout_code, citation);
        self.supersede_by_void_breaches();
    }

    /// One breach, one finding (the rule of the common interface, every engine): when a spin,
    /// throw, round or hand is void and the casino reported non-zero results for it, or it
    /// stands and the casino voided it (returned the bets), the specific void finding (a
    /// violation whose code [`is_void_breach`]) *is* the finding; the generic wrong-payout
    /// discrepancy is not raised as well for the same bets. A void breach covers the bet it
    /// names, or every bet of the round when it names none; of a covered bet's discrepancy it
    /// takes only the void part: a non-zero net reported where nothing is due (settled although
    /// void), or nothing reported (0 or left out of a void settlement) where something is due
    /// (voided although it stands). Any other difference on the bet is a payout error of its own
    /// and stays. [`Adjudication::reconcile`] applies this; an engine that adds a void breach
    /// after reconciling calls it again (it is idempotent).
    pub fn supersede_by_void_breaches(&mut self) {
        if self.discrepancies.is_empty() {
            return;
        }
        let mut whole_round = false;
        let mut named: Vec<&Id> = Vec::new();
        for v in &self.violations {
            if is_void_breach(&v.code) {
                match &v.bet_id {
                    Some(b) => named.push(b),
                    None => whole_round = true,
                }
            }
        }
        if !whole_round && named.is_empty() {
            return;
        }
        self.discrepancies.retain(|d| {
            let covered = whole_round || named.iter().any(|b| **b == d.bet_id);
            let void_part = d.due_net_cents == 0 || d.reported_net_cents.unwrap_or(0) == 0;
            !(covered && void_part)
        });
    }

    fn compare_settlement(
        &mut self,
        settlement: Option<&Settlement>,
        wrong_payout_code: &'static str,
        citation: &'static str,
    ) {
        let Some(s) = settlement else { return };
        // Which reported results matched a bet. Settlements usually list the bets in the order
        // they were placed, so try the same position first; fall back to a scan.
        let m = s.results.len();
        let mut matched_small = 0u64;
        let mut matched_big = if m > 64 { vec![false; m] } else { Vec::new() };
        let mut mark = |i: usize| {
            if m > 64 {
                matched_big[i] = true;
            } else {
                matched_small |= 1 << i;
            }
        };
        for (j, b) in self.bets.iter_mut().enumerate() {
            let found = match s.results.get(j) {
                Some(r) if r.bet_id == b.bet_id => Some(j),
                _ => s.results.iter().position(|r| r.bet_id == b.bet_id),
            };
            if let Some(i) = found {
                mark(i);
            }
            let reported = match found {
                Some(i) => Some(s.results[i].net_cents),
                None if s.void => Some(0),
                None => None,
            };
            b.reported_net_cents = reported;
            let differs = match reported {
                Some(r) => r != b.due_net_cents,
                // Not reported: fine for a bet still open or with nothing due.
                None => b.due_net_cents != 0,
            };
            if differs {
                self.discrepancies.push(Discrepancy {
                    bet_id: b.bet_id.clone(),
                    confidence: Confidence::Certain,
                    code: Cow::Borrowed(wrong_payout_code),
                    citation: Cow::Borrowed(citation),
                    due_net_cents: b.due_net_cents,
                    reported_net_cents: reported,
                });
            }
        }
        let all_matched = if m > 64 {
            matched_big.iter().all(|&x| x)
        } else {
            m == 0 || matched_small == u64::MAX >> (64 - m)
        };
        if all_matched {
            return;
        }
        // Reported results that match no bet: a second report of a bet of the round (whichever
        // of its reports the bet matched) or of an earlier result, else an unknown bet.
        for (i, r) in s.results.iter().enumerate() {
            let was_matched = if m > 64 {
                matched_big[i]
            } else {
                matched_small & (1 << i) != 0
            };
            if was_matched {
                continue;
            }
            let repeated = self.bets.iter().any(|b| b.bet_id == r.bet_id)
                || s.results[..i].iter().any(|p| p.bet_id == r.bet_id);
            let v = if repeated {
                Violation::new(
                    "SETTLEMENT_DUPLICATE_BET",
                    Severity::High,
                    LEDGER_CONVENTION,
                    format!("bet `{}` is reported twice in the settlement", r.bet_id),
                )
            } else {
                Violation::new(
                    "SETTLEMENT_UNKNOWN_BET",
                    Severity::High,
                    LEDGER_CONVENTION,
                    format!(
                        "the settlement pays {} cents on bet `{}`, which the round does not have",
                        r.net_cents, r.bet_id
                    ),
                )
            };
            self.violations.push(v.bet(&r.bet_id));
        }
    }
}

/// Whether a violation code names a breach of a void rule: a void spin, throw, round or hand
/// settled with non-zero results (`*_VOID_*SETTLED`, e.g. `RL_VOID_SPIN_SETTLED`,
/// `CS_VOID_SETTLED`), or a round that stands declared void (`*_WRONGLY_VOIDED`, e.g.
/// `BJO_ROUND_WRONGLY_VOIDED`). Engines name their void breaches this way; the codes are the
/// interface of [`Adjudication::supersede_by_void_breaches`] (one breach, one finding).
pub fn is_void_breach(code: &str) -> bool {
    code.ends_with("_WRONGLY_VOIDED") || (code.contains("_VOID_") && code.ends_with("SETTLED"))
}

/// Why a round is void as a whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoidInfo {
    pub reason: Text,
    pub citation: Text,
}

/// How a bet ended (or that it is still standing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Won: the net is the prize; the stake stays the player's.
    Won,
    /// Lost: the net is minus the stake (or the part of it at risk).
    Lost,
    /// Neither won nor lost (tie, push, bar): net 0.
    Push,
    /// Not decided because the round (or the bet) is void: net 0.
    Void,
    /// Withdrawn (or refused as late) before a decision: net 0.
    Withdrawn,
    /// Still standing after this round (craps multi-roll bets): net 0 so far.
    Open,
    /// Lost by a rule of conduct (e.g. a player who showed his cards): net minus the stake.
    Forfeited,
}

/// The due result of one bet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BetOutcome {
    pub bet_id: Id,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// Stake at risk when the bet was decided (after doubles, splits, ...).
    pub stake_cents: Cents,
    /// Due net result in cents: +prize (the stake returned besides), −stake, or 0.
    pub due_net_cents: Cents,
    pub outcome: Outcome,
    /// What the casino reported, filled by [`Adjudication::reconcile`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_net_cents: Option<Cents>,
    /// One line: why this result (e.g. "straight 17 won at 35 to 1").
    pub reason: Text,
    /// The rule that fixes the result.
    pub citation: Text,
}

/// How serious a finding is.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Informational: a procedure the rules describe, no money at stake.
    #[default]
    Info,
    /// A breach of procedure without a settlement consequence.
    Low,
    /// A breach that can move money or hides a risk (limits, late bets).
    Medium,
    /// Money paid against the rules (wrong payout, a card drawn against the tableau).
    High,
    /// Evidence of tampering (equivocation, broken chain).
    Critical,
}

/// How certain the reading behind a finding is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// The rule's text decides the case.
    #[default]
    Certain,
    /// The finding rests on an interpretation the digest marks as a reading: for human review.
    Review,
}

fn is_certain(c: &Confidence) -> bool {
    *c == Confidence::Certain
}

/// A rule the record breaks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// Stable code from the digest's "What an auditor can check" table, e.g. `RL_LATE_BET`.
    pub code: Text,
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "is_certain")]
    pub confidence: Confidence,
    /// The rule enforced, e.g. `P217/2007 T.I C.I S.I r.20`.
    pub citation: Text,
    /// One line naming the facts, e.g. "bet b3: split 17-21 is not adjacent on the layout".
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bet_id: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// Index in `Round::events` of the event that shows the breach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_index: Option<u32>,
}

impl Violation {
    pub fn new(
        code: impl Into<Text>,
        severity: Severity,
        citation: impl Into<Text>,
        message: impl Into<String>,
    ) -> Violation {
        Violation {
            code: code.into(),
            severity,
            confidence: Confidence::Certain,
            citation: citation.into(),
            message: message.into(),
            bet_id: None,
            seat: None,
            event_index: None,
        }
    }

    pub fn bet(mut self, bet_id: &Id) -> Violation {
        self.bet_id = Some(bet_id.clone());
        self
    }

    pub fn seat(mut self, seat: u8) -> Violation {
        self.seat = Some(seat);
        self
    }

    pub fn event(mut self, index: usize) -> Violation {
        self.event_index = u32::try_from(index).ok();
        self
    }

    /// Mark as resting on a reading (for human review).
    pub fn review(mut self) -> Violation {
        self.confidence = Confidence::Review;
        self
    }
}

/// A bet whose reported result differs from the due one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discrepancy {
    pub bet_id: Id,
    /// `review` when the due result rests on a reading the digest marks as an interpretation
    /// (an engine sets it after [`Adjudication::reconcile`] with [`Adjudication::mark_review`]).
    #[serde(default, skip_serializing_if = "is_certain")]
    pub confidence: Confidence,
    /// The game's wrong-payout code, e.g. `RL_WRONG_PAYOUT`.
    pub code: Text,
    pub citation: Text,
    pub due_net_cents: Cents,
    /// `None` when the settlement does not mention the bet.
    pub reported_net_cents: Option<Cents>,
}

/// A jackpot win.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JackpotWin {
    /// The jackpot bet (chip) that wins.
    pub bet_id: Id,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// The pay-table combination, e.g. `royal_flush`.
    pub combination: Text,
    /// Prize in cents (the chip itself is never returned).
    pub prize_cents: Cents,
    pub citation: Text,
}

/// How a round moved a table jackpot. Contributions are exact: chip × increment percentage is
/// kept in ten-thousandths of a cent (`*_e4` fields), since the rules fix no rounding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JackpotAccount {
    /// Display value before the round, in cents (from [`crate::Round::jackpot_before_cents`]).
    pub value_before_cents: Cents,
    /// This round's contributions, in 1/10,000 cent.
    pub contributions_e4: i64,
    /// Prizes paid out of the jackpot this round, in cents.
    pub prizes_cents: Cents,
    /// True if a whole-jackpot award reset the display to its start value.
    pub reset: bool,
    /// Display value after the round, in 1/10,000 cent.
    pub value_after_e4: i64,
}

/// The house's take due on a round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HouseTake {
    /// `commission`, `cagnotte` (taken out of the round's money, reported in
    /// `Settlement::house_cents`), or a fee charged outside the pots, whose kind ends in `_fee`
    /// (`session_fee`, `entry_fee`: not part of the round's settlement).
    pub kind: Text,
    pub amount_cents: Cents,
    pub citation: Text,
}

impl HouseTake {
    /// Taken out of the round's own money (and so reported in `Settlement::house_cents`).
    pub fn is_from_round(&self) -> bool {
        !self.kind.ends_with("_fee")
    }
}

/// One line of a rule-by-rule explanation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub citation: Text,
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReportedNet;

    fn outcome(id: &str, due: Cents) -> BetOutcome {
        BetOutcome {
            bet_id: id.into(),
            seat: None,
            stake_cents: 100,
            due_net_cents: due,
            outcome: if due > 0 { Outcome::Won } else { Outcome::Lost },
            reported_net_cents: None,
            reason: "test".into(),
            citation: "test".into(),
        }
    }

    /// The adjudication's small accessors: the players' total due, a violation by code, notes,
    /// and review marks on exactly the named bet's discrepancy.
    #[test]
    fn totals_violations_notes_and_review_marks() {
        let mut a = Adjudication::new(GameId::RouletteFrench, "r".into());
        assert_eq!(a.total_due_net_cents(), 0);
        assert!(!a.has_violation("RL_LATE_BET"));
        a.bets.push(outcome("b1", 3500));
        a.bets.push(outcome("b2", -100));
        assert_eq!(a.total_due_net_cents(), 3400);
        a.violation(Violation::new(
            "RL_LATE_BET",
            Severity::Medium,
            "r.1",
            "late",
        ));
        assert!(a.has_violation("RL_LATE_BET"));
        assert!(!a.has_violation("RL_WRONG_PAYOUT"));
        a.note("P217/2007 r.18", "straight up pays 35 to 1");
        assert_eq!(a.notes.len(), 1);
        assert_eq!(&*a.notes[0].citation, "P217/2007 r.18");
        assert_eq!(a.notes[0].text, "straight up pays 35 to 1");
        let s = Settlement {
            void: false,
            results: vec![
                ReportedNet {
                    bet_id: "b1".into(),
                    net_cents: 1,
                },
                ReportedNet {
                    bet_id: "b2".into(),
                    net_cents: 1,
                },
            ],
            house_cents: None,
        };
        a.reconcile(Some(&s), "RL_WRONG_PAYOUT", "r.18");
        a.mark_review("b2");
        let conf: Vec<_> = a
            .discrepancies
            .iter()
            .map(|d| (&*d.bet_id, d.confidence))
            .collect();
        assert_eq!(
            conf,
            [("b1", Confidence::Certain), ("b2", Confidence::Review)]
        );
    }

    fn reported(pairs: &[(&str, Cents)]) -> Settlement {
        Settlement {
            void: false,
            results: pairs
                .iter()
                .map(|(b, n)| ReportedNet {
                    bet_id: (*b).into(),
                    net_cents: *n,
                })
                .collect(),
            house_cents: None,
        }
    }

    fn codes(a: &Adjudication) -> Vec<(String, String)> {
        a.violations
            .iter()
            .map(|v| {
                (
                    v.code.to_string(),
                    v.bet_id.as_deref().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    /// A bet of the round reported twice is a duplicate, whichever of its two reports comes
    /// first in the settlement; an id the round does not have is unknown, and its repeats
    /// duplicates.
    #[test]
    fn a_bet_reported_twice_is_a_duplicate_wherever_its_reports_are() {
        let mut a = Adjudication::new(GameId::RouletteFrench, "r".into());
        a.bets.push(outcome("b1", -100));
        a.bets.push(outcome("b2", -100));
        a.reconcile(
            Some(&reported(&[
                ("b2", -100),
                ("b2", -100),
                ("zz", 5),
                ("zz", 5),
            ])),
            "RL_WRONG_PAYOUT",
            "r.18",
        );
        assert_eq!(
            codes(&a),
            [
                ("SETTLEMENT_DUPLICATE_BET".into(), "b2".into()),
                ("SETTLEMENT_UNKNOWN_BET".into(), "zz".into()),
                ("SETTLEMENT_DUPLICATE_BET".into(), "zz".into()),
            ]
        );
        // b1 was not reported: a discrepancy of its own.
        assert_eq!(a.discrepancies.len(), 1);
        assert_eq!(&*a.discrepancies[0].bet_id, "b1");
        // Of two different reports of b2, the one at b2's position is its result.
        let mut a = Adjudication::new(GameId::RouletteFrench, "r".into());
        a.bets.push(outcome("b1", -100));
        a.bets.push(outcome("b2", -100));
        a.reconcile(
            Some(&reported(&[("b2", 500), ("b2", -100)])),
            "RL_WRONG_PAYOUT",
            "r.18",
        );
        let d: Vec<_> = a.discrepancies.iter().map(|d| &*d.bet_id).collect();
        assert_eq!(d, ["b1"]);
        assert_eq!(a.bet("b2").unwrap().reported_net_cents, Some(-100));
        assert_eq!(
            codes(&a),
            [("SETTLEMENT_DUPLICATE_BET".to_string(), "b2".to_string())]
        );
    }

    /// Settlements of 64 results and more (the bitmap's edge): every result matched is no
    /// finding, one too many is.
    #[test]
    fn settlements_at_and_past_64_results() {
        for n in [63usize, 64, 65, 130] {
            let mut a = Adjudication::new(GameId::RouletteFrench, "r".into());
            let ids: Vec<String> = (0..n).map(|i| format!("b{i}")).collect();
            for id in &ids {
                a.bets.push(outcome(id, -100));
            }
            // In reverse order: no result is at its bet's position.
            let pairs: Vec<(&str, Cents)> = ids.iter().rev().map(|i| (i.as_str(), -100)).collect();
            a.reconcile(Some(&reported(&pairs)), "RL_WRONG_PAYOUT", "r.18");
            assert!(a.violations.is_empty() && a.discrepancies.is_empty(), "{n}");
            let mut b = Adjudication::new(GameId::RouletteFrench, "r".into());
            for id in &ids[1..] {
                b.bets.push(outcome(id, -100));
            }
            b.reconcile(Some(&reported(&pairs)), "RL_WRONG_PAYOUT", "r.18");
            assert_eq!(
                codes(&b),
                [("SETTLEMENT_UNKNOWN_BET".to_string(), "b0".to_string())],
                "{n}"
            );
        }
    }

    /// A certain finding's confidence is left out of its JSON; a reading for review is kept.
    #[test]
    fn only_a_review_confidence_is_written() {
        let v = Violation::new("RL_LATE_BET", Severity::Medium, "r.1", "late");
        let j = serde_json::to_value(&v).unwrap();
        assert!(j.get("confidence").is_none(), "{j}");
        let j = serde_json::to_value(v.review()).unwrap();
        assert_eq!(j["confidence"], "review");
    }

    #[test]
    fn a_house_take_is_from_the_round_unless_it_is_a_fee() {
        let take = |kind: &str| HouseTake {
            kind: kind.to_string().into(),
            amount_cents: 5,
            citation: "r.1".into(),
        };
        assert!(take("commission").is_from_round());
        assert!(take("cagnotte").is_from_round());
        assert!(!take("session_fee").is_from_round());
        assert!(!take("entry_fee").is_from_round());
    }

    #[test]
    fn reconcile_finds_every_difference_with_both_amounts() {
        let mut a = Adjudication::new(GameId::RouletteFrench, "r".into());
        a.bets.push(outcome("b1", 3500));
        a.bets.push(outcome("b2", -100));
        a.bets.push(outcome("b3", -100));
        let s = Settlement {
            void: false,
            results: vec![
                ReportedNet {
                    bet_id: "b1".into(),
                    net_cents: 3600,
                },
                ReportedNet {
                    bet_id: "b2".into(),
                    net_cents: -100,
                },
                ReportedNet {
                    bet_id: "zz".into(),
                    net_cents: 5,
                },
            ],
            house_cents: None,
        };
        a.reconcile(Some(&s), "RL_WRONG_PAYOUT", "P217/2007 T.I C.I S.II r.18");
        assert_eq!(a.discrepancies.len(), 2);
        assert_eq!(a.discrepancies[0].due_net_cents, 3500);
        assert_eq!(a.discrepancies[0].reported_net_cents, Some(3600));
        assert_eq!(&*a.discrepancies[1].bet_id, "b3");
        assert_eq!(a.discrepancies[1].reported_net_cents, None);
        assert!(a.has_violation("SETTLEMENT_UNKNOWN_BET"));
        assert_eq!(a.bet("b2").unwrap().reported_net_cents, Some(-100));
    }

    #[test]
    fn duplicates_and_unknowns_in_any_order_and_size() {
        for n in [3usize, 70] {
            let mut a = Adjudication::new(GameId::Cussec, "r".into());
            let mut results = Vec::new();
            for i in (0..n).rev() {
                a.bets.push(outcome(&format!("b{i}"), -100));
                results.push(ReportedNet {
                    bet_id: format!("b{i}").into(),
                    net_cents: -100,
                });
            }
            results.reverse(); // not in placement order: the scan path
            results.push(ReportedNet {
                bet_id: "b1".into(),
                net_cents: 7,
            });
            results.push(ReportedNet {
                bet_id: "nope".into(),
                net_cents: 7,
            });
            let s = Settlement {
                void: false,
                results,
                house_cents: None,
            };
            a.reconcile(Some(&s), "CS_WRONG_PAYOUT", "x");
            assert!(a.discrepancies.is_empty(), "n={n}");
            let codes: Vec<&str> = a.violations.iter().map(|v| &*v.code).collect();
            assert_eq!(
                codes,
                ["SETTLEMENT_DUPLICATE_BET", "SETTLEMENT_UNKNOWN_BET"],
                "n={n}"
            );
        }
    }

    #[test]
    fn void_settlement_reports_zero() {
        let mut a = Adjudication::new(GameId::Craps, "r".into());
        a.bets.push(outcome("b1", 0));
        a.bets.push(outcome("b2", 500));
        let s = Settlement {
            void: true,
            ..Default::default()
        };
        a.reconcile(Some(&s), "CR_WRONG_PAYOUT", "x");
        assert_eq!(a.discrepancies.len(), 1);
        assert_eq!(a.discrepancies[0].reported_net_cents, Some(0));
    }

    fn void_breach(code: &'static str, bet: Option<&str>) -> Violation {
        let v = Violation::new(code, Severity::High, "x", "void breach");
        match bet {
            Some(b) => v.bet(&b.into()),
            None => v,
        }
    }

    #[test]
    fn void_breach_codes() {
        for c in [
            "RL_VOID_SPIN_SETTLED",
            "BF_VOID_THROW_SETTLED",
            "CR_VOID_THROW_SETTLED",
            "CS_VOID_SETTLED",
            "BJO_VOID_ROUND_SETTLED",
            "BJO_ROUND_WRONGLY_VOIDED",
            "PSD_VOID_ROUND_SETTLED",
            "POKER_VOID_HAND_SETTLED",
            "POKER_WRONGLY_VOIDED",
        ] {
            assert!(is_void_breach(c), "{c}");
        }
        // Both parts are needed: a void code that is not "settled", a "settled" one not void.
        for c in [
            "RL_WRONG_PAYOUT",
            "PSD_MISDEAL",
            "CF_VOID",
            "RL_LATE_BET",
            "RL_VOID_SPIN_MISSED",
            "RL_LATE_SETTLED",
        ] {
            assert!(!is_void_breach(c), "{c}");
        }
    }

    /// Issue 38, "one breach, one finding": a void round settled with non-zero nets is the void
    /// finding only; no wrong-payout discrepancy for the same bets.
    #[test]
    fn one_breach_one_finding_void_round_settled() {
        let mut a = Adjudication::new(GameId::Cussec, "r".into());
        a.bets.push(outcome("b1", 0));
        a.bets.push(outcome("b2", 0));
        a.violation(void_breach("CS_VOID_SETTLED", None));
        let s = Settlement {
            void: false,
            results: vec![
                ReportedNet {
                    bet_id: "b1".into(),
                    net_cents: 500,
                },
                ReportedNet {
                    bet_id: "b2".into(),
                    net_cents: -100,
                },
            ],
            house_cents: None,
        };
        a.reconcile(Some(&s), "CS_WRONG_PAYOUT", "x");
        assert!(a.discrepancies.is_empty(), "{:?}", a.discrepancies);
        assert_eq!(a.bet("b1").unwrap().reported_net_cents, Some(500));
    }

    /// A void breach naming one bet covers that bet only; a bet decided by a valid throw of the
    /// same round keeps its own payout discrepancy.
    #[test]
    fn one_breach_one_finding_per_bet() {
        let mut a = Adjudication::new(GameId::Craps, "r".into());
        a.bets.push(outcome("void", 0));
        a.bets.push(outcome("won", 700));
        a.violation(void_breach("CR_VOID_THROW_SETTLED", Some("void")));
        let s = Settlement {
            void: false,
            results: vec![
                ReportedNet {
                    bet_id: "void".into(),
                    net_cents: 700,
                },
                ReportedNet {
                    bet_id: "won".into(),
                    net_cents: 600,
                },
            ],
            house_cents: None,
        };
        a.reconcile(Some(&s), "CR_WRONG_PAYOUT", "x");
        assert_eq!(a.discrepancies.len(), 1);
        assert_eq!(&*a.discrepancies[0].bet_id, "won");
    }

    /// A round that stands but was voided: the wrongly-voided finding replaces the discrepancies
    /// of the bets returned (reported 0), not a wrong amount paid on another bet.
    #[test]
    fn one_breach_one_finding_wrongly_voided() {
        let mut a = Adjudication::new(GameId::BlackjackOnline, "r".into());
        a.bets.push(outcome("b1", 1000));
        a.bets.push(outcome("b2", -100));
        a.bets.push(outcome("b3", 1500));
        a.violation(void_breach("BJO_ROUND_WRONGLY_VOIDED", None));
        let s = Settlement {
            void: true,
            results: vec![ReportedNet {
                bet_id: "b3".into(),
                net_cents: 1400,
            }],
            house_cents: None,
        };
        a.reconcile(Some(&s), "BJ_WRONG_PAYOUT", "x");
        assert_eq!(a.discrepancies.len(), 1);
        assert_eq!(&*a.discrepancies[0].bet_id, "b3");
        // Idempotent.
        a.supersede_by_void_breaches();
        assert_eq!(a.discrepancies.len(), 1);
    }

    #[test]
    fn no_settlement_no_discrepancy() {
        let mut a = Adjudication::new(GameId::Craps, "r".into());
        a.bets.push(outcome("b1", 500));
        a.reconcile(None, "CR_WRONG_PAYOUT", "x");
        assert!(a.discrepancies.is_empty());
    }
}
