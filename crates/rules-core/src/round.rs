//! The complete record of one round, as the table reported it, in the order it happened.
//!
//! A round is a list of [`RoundEvent`]s. The same vocabulary serves every game; each engine
//! documents which events, bet types (`bet_type`), actions (`action`), roles, procedures and fault
//! codes it understands, and turns anything else into a violation or a [`crate::RoundError`],
//! never a guess. The ledger's signed table events map one to one onto these events.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Card, Cents, Id};

/// One round ("golpe", "jogada", "lance", "coup", "hand").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Round {
    /// The round's identifier, unique per table.
    pub round_id: Id,
    /// When the round was opened, in milliseconds since the Unix epoch (UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_at_ms: Option<i64>,
    /// The table jackpot's value before this round's contributions, for tables with a jackpot.
    /// The ledger's pool accounts supply it; without it the engine cannot price whole or
    /// percentage jackpot prizes and says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jackpot_before_cents: Option<Cents>,
    /// What happened, in order.
    pub events: Vec<RoundEvent>,
    /// What the casino reported it paid, if it has been reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settlement: Option<Settlement>,
}

impl Round {
    /// The bets placed in this round, with their event index.
    pub fn bets(&self) -> impl Iterator<Item = (usize, &Bet)> {
        self.events
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match &e.kind {
                EventKind::Bet(b) => Some((i, b)),
                _ => None,
            })
    }
}

/// One event of a round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundEvent {
    /// When it happened, in milliseconds since the Unix epoch (UTC), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<i64>,
    #[serde(flatten)]
    pub kind: EventKind,
}

impl RoundEvent {
    pub fn new(kind: EventKind) -> RoundEvent {
        RoundEvent { at_ms: None, kind }
    }

    pub fn at(at_ms: i64, kind: EventKind) -> RoundEvent {
        RoundEvent {
            at_ms: Some(at_ms),
            kind,
        }
    }
}

impl From<EventKind> for RoundEvent {
    fn from(kind: EventKind) -> RoundEvent {
        RoundEvent::new(kind)
    }
}

/// What happened. In JSON, an object with a `"type"` field naming the variant in snake_case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum EventKind {
    /// A bet was placed (main bets, side bets, jackpot chips, complementary bets, odds, ...).
    Bet(Bet),
    /// A bet's amount was changed to `amount_cents`.
    BetChanged { bet_id: Id, amount_cents: Cents },
    /// A bet was withdrawn.
    BetWithdrawn { bet_id: Id },
    /// The dealer's "no more bets" call ("Jogo feito. Nada mais.", cussec's "Nada mais. Vou
    /// abrir.").
    NoMoreBets,
    /// A card left the shoe or deck to `to`.
    Card {
        to: Recipient,
        card: Card,
        /// Face up (true) or face down.
        #[serde(default = "yes", skip_serializing_if = "is_true")]
        face_up: bool,
    },
    /// Dice came to rest showing these faces (1-6 each).
    Dice {
        dice: Vec<u8>,
        /// Craps: how many dice the shooter chose from (P217/2007 T.I C.II S.II r.4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chosen_from: Option<u8>,
    },
    /// The roulette ball came to rest in `pocket` (0-36).
    Ball { pocket: u8 },
    /// The roulette ball was launched.
    Launch {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ball_direction: Option<Direction>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wheel_direction: Option<Direction>,
        /// Pocket the ball was launched from (after a void spin it must be the previous number).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_pocket: Option<u8>,
        /// Which ball was used.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ball_id: Option<String>,
    },
    /// A player's (or banker's) decision: hit, stand, double, split, insurance, surrender, call,
    /// raise, fold, ... (`action` names are the engine's).
    Decision(Decision),
    /// Someone took a role for the round or from now on: `dealer`, `spinner`, `thrower`,
    /// `shooter`, `button`, `banker`, `card_holder`, ...
    Role {
        role: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player: Option<Id>,
    },
    /// A table procedure: `shuffle`, `cut`, `warning_card`, `ball_change`, `dice_set_change`,
    /// `lever_press`, `dome_covered`, `cards_to_shuffler`, ... (names are the engine's).
    Procedure {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        amount_cents: Option<Cents>,
    },
    /// A fault declared by the table (dealer, player or equipment), by the engine's fault code.
    Fault {
        code: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seat: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// The current spin, throw or coup was declared void ("golpe nulo") for `reason`. Whether that
    /// ends the round or the round goes on (roulette relaunch, craps next throw) is the game's.
    Void { reason: String },
    /// Losing bets collected by the dealer.
    Collect { bet_ids: Vec<Id> },
    /// A prize paid by the dealer (procedure order; the settlement carries the nets).
    Pay { bet_id: Id, amount_cents: Cents },
    /// The jackpot display showed this value.
    JackpotDisplay { value_cents: Cents },
}

impl EventKind {
    /// The variant's JSON `type` tag (`bet_changed`, `no_more_bets`, ...), for messages that name
    /// an event as the record does.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::Bet(_) => "bet",
            EventKind::BetChanged { .. } => "bet_changed",
            EventKind::BetWithdrawn { .. } => "bet_withdrawn",
            EventKind::NoMoreBets => "no_more_bets",
            EventKind::Card { .. } => "card",
            EventKind::Dice { .. } => "dice",
            EventKind::Ball { .. } => "ball",
            EventKind::Launch { .. } => "launch",
            EventKind::Decision(_) => "decision",
            EventKind::Role { .. } => "role",
            EventKind::Procedure { .. } => "procedure",
            EventKind::Fault { .. } => "fault",
            EventKind::Void { .. } => "void",
            EventKind::Collect { .. } => "collect",
            EventKind::Pay { .. } => "pay",
            EventKind::JackpotDisplay { .. } => "jackpot_display",
        }
    }

    /// The event in words, for sentences ("a bet change after the outcome").
    pub fn noun(&self) -> &'static str {
        match self {
            EventKind::Bet(_) => "bet",
            EventKind::BetChanged { .. } => "bet change",
            EventKind::BetWithdrawn { .. } => "bet withdrawal",
            EventKind::NoMoreBets => "no-more-bets call",
            EventKind::Card { .. } => "card",
            EventKind::Dice { .. } => "dice",
            EventKind::Ball { .. } => "ball",
            EventKind::Launch { .. } => "launch",
            EventKind::Decision(_) => "decision",
            EventKind::Role { .. } => "role",
            EventKind::Procedure { .. } => "procedure",
            EventKind::Fault { .. } => "fault",
            EventKind::Void { .. } => "void declaration",
            EventKind::Collect { .. } => "collection",
            EventKind::Pay { .. } => "payment",
            EventKind::JackpotDisplay { .. } => "jackpot display",
        }
    }
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// One bet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bet {
    /// Unique within the round (for craps, unique for the bet's whole life on the table).
    pub id: Id,
    /// The engine's bet-type id: `straight`, `pass_line`, `main`, `insurance`, `jackpot`,
    /// `ponto`, `tie`, `ante`, ...
    pub bet_type: String,
    /// Seat (box) the bet is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// The player who owns the bet (complementary bettors differ from the seat's titular).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<Id>,
    /// What the bet is on: roulette numbers covered, a dice face or total, a craps box number,
    /// ... (documented per bet type by the engine).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selection: Vec<u8>,
    /// Stake in cents.
    pub amount_cents: Cents,
    /// Number of chips, where the rules count chips (roulette series and neighbours bets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chips: Option<u32>,
    /// The bet this one rides on: craps odds on their pass/come bet, a complementary bet on the
    /// titular's main bet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_bet: Option<Id>,
    /// Rare game-specific attributes (documented by the engine), e.g. `{"standing":"true"}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attrs: BTreeMap<String, String>,
}

impl Bet {
    /// A bet with the required fields only.
    pub fn new(id: &str, bet_type: &str, amount_cents: Cents) -> Bet {
        Bet {
            id: id.into(),
            bet_type: bet_type.to_string(),
            seat: None,
            player: None,
            selection: Vec::new(),
            amount_cents,
            chips: None,
            on_bet: None,
            attrs: BTreeMap::new(),
        }
    }

    pub fn seat(mut self, seat: u8) -> Bet {
        self.seat = Some(seat);
        self
    }

    pub fn player(mut self, player: &str) -> Bet {
        self.player = Some(player.into());
        self
    }

    pub fn selection(mut self, selection: &[u8]) -> Bet {
        self.selection = selection.to_vec();
        self
    }

    pub fn chips(mut self, chips: u32) -> Bet {
        self.chips = Some(chips);
        self
    }

    pub fn on_bet(mut self, on_bet: &str) -> Bet {
        self.on_bet = Some(on_bet.into());
        self
    }

    pub fn attr(mut self, key: &str, value: &str) -> Bet {
        self.attrs.insert(key.to_string(), value.to_string());
        self
    }
}

/// A decision taken during the round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// Seat of the player (or banker) deciding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<u8>,
    /// Hand at that seat (1 = the original hand; split hands are numbered in the order they are
    /// created).
    #[serde(default = "first_hand", skip_serializing_if = "is_first_hand")]
    pub hand: u8,
    /// The player deciding, when it is not simply the seat's titular.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<Id>,
    /// The engine's action id: `hit`, `stand`, `double`, `split`, `insurance`, `even_money`,
    /// `surrender`, `check`, `bet`, `call`, `raise`, `fold`, `all_in`, `carta`, `nao`, ...
    pub action: String,
    /// Chips put in with the decision (double, split, insurance, bet, raise, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_cents: Option<Cents>,
    /// The bet the decision concerns, when a seat holds several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bet_id: Option<Id>,
}

fn first_hand() -> u8 {
    1
}

fn is_first_hand(h: &u8) -> bool {
    *h == 1
}

impl Decision {
    pub fn new(seat: u8, action: &str) -> Decision {
        Decision {
            seat: Some(seat),
            hand: 1,
            player: None,
            action: action.to_string(),
            amount_cents: None,
            bet_id: None,
        }
    }

    pub fn hand(mut self, hand: u8) -> Decision {
        self.hand = hand;
        self
    }

    pub fn amount(mut self, amount_cents: Cents) -> Decision {
        self.amount_cents = Some(amount_cents);
        self
    }

    pub fn player(mut self, player: &str) -> Decision {
        self.player = Some(player.into());
        self
    }

    pub fn bet(mut self, bet_id: &str) -> Decision {
        self.bet_id = Some(bet_id.into());
        self
    }
}

/// Direction of the roulette ball or wheel head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Clockwise,
    Counterclockwise,
}

/// Who or where a card went. In JSON a string: `"dealer"`, `"ponto"`, `"banca"`, `"board"`,
/// `"burn"`, `"discard"`, `"seat:3"` (seat 3, first hand) or `"seat:3/2"` (seat 3, hand 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Recipient {
    /// The dealer's (bank's) hand in blackjack and póquer sem descarte.
    Dealer,
    /// The ponto (player) side in baccarat.
    Ponto,
    /// The banca (banker) side in baccarat.
    Banca,
    /// The common cards in non-banked poker.
    Board,
    /// Burned.
    Burn,
    /// Straight to the discard (an annulled card).
    Discard,
    /// A seat's hand (hand 1 is the original hand).
    Seat { seat: u8, hand: u8 },
}

impl Recipient {
    pub const fn seat(seat: u8) -> Recipient {
        Recipient::Seat { seat, hand: 1 }
    }
}

impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recipient::Dealer => f.write_str("dealer"),
            Recipient::Ponto => f.write_str("ponto"),
            Recipient::Banca => f.write_str("banca"),
            Recipient::Board => f.write_str("board"),
            Recipient::Burn => f.write_str("burn"),
            Recipient::Discard => f.write_str("discard"),
            Recipient::Seat { seat, hand: 1 } => write!(f, "seat:{seat}"),
            Recipient::Seat { seat, hand } => write!(f, "seat:{seat}/{hand}"),
        }
    }
}

/// Why a recipient string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a card recipient (dealer, ponto, banca, board, burn, discard, seat:N or seat:N/H)"
)]
pub struct RecipientParseError(pub String);

impl FromStr for Recipient {
    type Err = RecipientParseError;

    fn from_str(s: &str) -> Result<Recipient, RecipientParseError> {
        let err = || RecipientParseError(s.chars().take(32).collect());
        Ok(match s {
            "dealer" => Recipient::Dealer,
            "ponto" => Recipient::Ponto,
            "banca" => Recipient::Banca,
            "board" => Recipient::Board,
            "burn" => Recipient::Burn,
            "discard" => Recipient::Discard,
            _ => {
                let rest = s.strip_prefix("seat:").ok_or_else(err)?;
                let (seat, hand) = match rest.split_once('/') {
                    Some((s, h)) => (s, h),
                    None => (rest, "1"),
                };
                let seat: u8 = seat.parse().map_err(|_| err())?;
                let hand: u8 = hand.parse().map_err(|_| err())?;
                if hand == 0 {
                    return Err(err());
                }
                Recipient::Seat { seat, hand }
            }
        })
    }
}

impl Serialize for Recipient {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Recipient {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Recipient, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What the casino reported for the round.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settlement {
    /// The casino declared the whole round void (every bet returned).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub void: bool,
    /// Net result paid or collected per bet (+prize with the stake returned, −stake lost, 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<ReportedNet>,
    /// The house's take reported for the round out of the round's own money: the poker
    /// commission taken from the pots, the chemin de fer cagnotte. Fees charged outside the pots
    /// (a poker session or entry fee) are not in it: they are `procedure` events of the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub house_cents: Option<Cents>,
}

/// One bet's reported net result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportedNet {
    pub bet_id: Id,
    pub net_cents: Cents,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipients_round_trip() {
        for r in [
            Recipient::Dealer,
            Recipient::Ponto,
            Recipient::Banca,
            Recipient::Board,
            Recipient::Burn,
            Recipient::Discard,
            Recipient::seat(3),
            Recipient::Seat { seat: 7, hand: 2 },
        ] {
            let s = r.to_string();
            assert_eq!(s.parse::<Recipient>().unwrap(), r, "{s}");
        }
        assert_eq!(Recipient::seat(3).to_string(), "seat:3");
        for bad in ["seat:", "seat:x", "seat:1/0", "Dealer", "player"] {
            assert!(bad.parse::<Recipient>().is_err(), "{bad}");
        }
    }

    #[test]
    fn json_round_format() {
        let j = r#"{
          "round_id": "r1",
          "events": [
            {"type":"bet","id":"b1","bet_type":"straight","selection":[17],"amount_cents":500,"seat":2},
            {"type":"no_more_bets","at_ms":1700000000000},
            {"type":"card","to":"seat:3/2","card":"AS","face_up":false},
            {"type":"decision","seat":3,"action":"hit"},
            {"type":"ball","pocket":17}
          ],
          "settlement": {"results":[{"bet_id":"b1","net_cents":17500}]}
        }"#;
        let r: Round = serde_json::from_str(j).unwrap();
        assert_eq!(r.events.len(), 5);
        assert_eq!(r.events[1].at_ms, Some(1_700_000_000_000));
        match &r.events[2].kind {
            EventKind::Card { to, face_up, .. } => {
                assert_eq!(*to, Recipient::Seat { seat: 3, hand: 2 });
                assert!(!face_up);
            }
            other => panic!("{other:?}"),
        }
        match &r.events[3].kind {
            EventKind::Decision(d) => assert_eq!(d.hand, 1),
            other => panic!("{other:?}"),
        }
        assert_eq!(r.bets().count(), 1);
        let back: Round = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    /// Every event's `type_name` is its JSON tag, and its noun is its own words.
    #[test]
    fn every_event_names_its_type_and_itself() {
        let events = [
            (
                r#"{"type":"bet","id":"b","bet_type":"x","amount_cents":1}"#,
                "bet",
            ),
            (
                r#"{"type":"bet_changed","bet_id":"b","amount_cents":1}"#,
                "bet change",
            ),
            (r#"{"type":"bet_withdrawn","bet_id":"b"}"#, "bet withdrawal"),
            (r#"{"type":"no_more_bets"}"#, "no-more-bets call"),
            (r#"{"type":"card","to":"dealer","card":"AS"}"#, "card"),
            (r#"{"type":"dice","dice":[1,2]}"#, "dice"),
            (r#"{"type":"ball","pocket":3}"#, "ball"),
            (r#"{"type":"launch"}"#, "launch"),
            (r#"{"type":"decision","action":"hit"}"#, "decision"),
            (r#"{"type":"role","role":"banker"}"#, "role"),
            (r#"{"type":"procedure","name":"burn"}"#, "procedure"),
            (r#"{"type":"fault","code":"misdeal"}"#, "fault"),
            (r#"{"type":"void","reason":"wheel"}"#, "void declaration"),
            (r#"{"type":"collect","bet_ids":["b"]}"#, "collection"),
            (r#"{"type":"pay","bet_id":"b","amount_cents":1}"#, "payment"),
            (
                r#"{"type":"jackpot_display","value_cents":1}"#,
                "jackpot display",
            ),
        ];
        for (json, noun) in events {
            let e: RoundEvent = serde_json::from_str(json).unwrap();
            let tag = serde_json::to_value(&e).unwrap()["type"].clone();
            assert_eq!(tag, e.kind.type_name(), "{json}");
            assert_eq!(e.kind.noun(), noun, "{json}");
        }
    }

    /// Defaults are written only when they differ: a card face down, a decision on a hand
    /// other than the first.
    #[test]
    fn defaults_are_left_out_of_the_json() {
        let card = |face_up| EventKind::Card {
            to: Recipient::Dealer,
            card: "AS".parse().unwrap(),
            face_up,
        };
        let up = serde_json::to_value(card(true)).unwrap();
        assert!(up.get("face_up").is_none(), "{up}");
        assert_eq!(serde_json::to_value(card(false)).unwrap()["face_up"], false);
        let parsed: EventKind =
            serde_json::from_str(r#"{"type":"card","to":"dealer","card":"AS"}"#).unwrap();
        assert_eq!(parsed, card(true));
        let mut d = Decision::new(1, "hit");
        assert!(serde_json::to_value(&d).unwrap().get("hand").is_none());
        d.hand = 2;
        assert_eq!(serde_json::to_value(&d).unwrap()["hand"], 2);
    }

    #[test]
    fn unknown_event_types_and_fields_are_refused() {
        let e = serde_json::from_str::<RoundEvent>(r#"{"type":"teleport"}"#).unwrap_err();
        assert!(e.to_string().contains("teleport"), "{e}");
        let e =
            serde_json::from_str::<Bet>(r#"{"id":"b","bet_type":"x","amount_cents":1,"amount":3}"#)
                .unwrap_err();
        assert!(e.to_string().contains("amount"), "{e}");
    }
}
