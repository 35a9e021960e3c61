//! What differs between the four games, as constant descriptors (one per game module) and the
//! citations each game's findings carry.

use rules_core::GameId;

use crate::eval::{Deck, Ranking, Selection};

/// Who puts the forced bets in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forced {
    /// P217 omaha/hold'em: the mão holder posts the small blind (half the minimum), the player on
    /// his left the big blind (the minimum) (SS.II r.81–r.83).
    MaoBlinds,
    /// Online: the first and second seats left of the button post the small and big blinds
    /// (Reg806 r.20–r.22, r.48).
    ButtonBlinds,
    /// Sintético: every player posts an ante equal to the minimum bet (SS.IV r.102; P461 r.38).
    Antes,
}

/// How the common cards come and when the betting rounds are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streets {
    /// Round 1 after the hole cards, flop (3 cards), round 2, turn, round 3, river, round 4
    /// (SS.I r.36–r.46; Reg806 r.51–r.58).
    FlopTurnRiver,
    /// Five common cards one at a time, a betting round after each (SS.IV r.107, r.108; P461
    /// r.44, r.45), with the optional stardilho before the first (r.106).
    OneByOne,
}

impl Streets {
    /// Betting round index for a board of `n` common cards (0-based).
    pub fn round_for_board(self, n: usize) -> usize {
        match self {
            Streets::FlopTurnRiver => match n {
                0..=2 => 0,
                3 => 1,
                4 => 2,
                _ => 3,
            },
            Streets::OneByOne => n.min(5),
        }
    }

    /// True if the `n`-th common card (1-based) opens a new street (needs a burn before it in
    /// hold'em/omaha).
    pub fn opens_street(self, n: usize) -> bool {
        match self {
            Streets::FlopTurnRiver => matches!(n, 1 | 4 | 5),
            Streets::OneByOne => true,
        }
    }

    /// Name of betting round `r`.
    pub fn round_name(self, r: usize) -> &'static str {
        match self {
            Streets::FlopTurnRiver => match r {
                0 => "pre-flop",
                1 => "flop",
                2 => "turn",
                _ => "river",
            },
            Streets::OneByOne => match r {
                0 => "stardilho",
                1 => "round 1",
                2 => "round 2",
                3 => "round 3",
                4 => "round 4",
                _ => "round 5",
            },
        }
    }
}

/// A game's fixed rules.
#[derive(Clone, Copy, Debug)]
pub struct VariantRules {
    pub game: GameId,
    pub deck: Deck,
    pub ranking: Ranking,
    pub selection: Selection,
    /// Hole cards per player.
    pub hole_cards: usize,
    pub forced: Forced,
    pub streets: Streets,
    /// A card is burned before each street (SS.I r.41, r.43, r.45); none in sintético (r.100) and
    /// none mentioned online.
    pub burns: bool,
    /// Fewest players a hand may be dealt to (r.24; Reg806 r.7).
    pub min_players: usize,
    /// Most seats at the table (r.6; Reg806 r.4(a), r.5).
    pub max_seats: u8,
    /// Default seats when the table config does not say.
    pub default_seats: u8,
    /// Raises must add at least the table minimum (SS.II r.86).
    pub raise_min_is_table_min: bool,
    /// Fixed raise cap per betting round, unlimited heads-up (SS.II r.87, r.88).
    pub fixed_raise_cap: Option<u32>,
    /// Land-based (P217/P461): odd chips in units of the table minimum (r.67), uncontested
    /// commission not audited (digest N6).
    pub land: bool,
}

/// Citations of one game under one regulation.
#[derive(Clone, Copy, Debug)]
pub struct Cites {
    pub payout: &'static str,
    pub commission: &'static str,
    pub commission_rate: &'static str,
    pub fee: &'static str,
    pub null_hand: &'static str,
    pub wrongly_voided: &'static str,
    pub invalid_deck: &'static str,
    pub blind_seat: &'static str,
    pub button_rotation: &'static str,
    pub blind_amount: &'static str,
    pub missed_blinds: &'static str,
    pub idle_big_blind: &'static str,
    pub ante: &'static str,
    pub bet_min: &'static str,
    pub raise_min: &'static str,
    pub raise_cap: &'static str,
    pub bet_max: &'static str,
    pub stardilho_amount: &'static str,
    pub stardilho_enabled: &'static str,
    pub topup: &'static str,
    pub withdrawal: &'static str,
    pub too_few: &'static str,
    pub illegal_check: &'static str,
    pub oot_increased: &'static str,
    pub out_of_turn: &'static str,
    pub early_exposure: &'static str,
    pub burn: &'static str,
    pub hole_count: &'static str,
    pub irregular: &'static str,
    pub side_pots: &'static str,
    pub split: &'static str,
    pub ranking: &'static str,
    pub selection: &'static str,
    pub uncontested: &'static str,
    pub order_first: &'static str,
    pub order_later: &'static str,
    pub dealing_order: &'static str,
    pub exposed_hole_card: &'static str,
    pub timeout: &'static str,
    pub walk: &'static str,
    pub po: &'static str,
}

const P217_GENERAL: Cites = Cites {
    payout: "P217/2007 T.II S.II SS.I r.49, r.50, r.64-r.66",
    commission: "P217/2007 T.II S.II SS.I r.7(a), r.65",
    commission_rate: "P217/2007 T.II S.II SS.I r.7",
    fee: "P217/2007 T.II S.II SS.I r.7(b)",
    null_hand: "P217/2007 T.II S.II SS.I r.69",
    wrongly_voided: "P217/2007 T.II S.II SS.I r.70(c)",
    invalid_deck: "P217/2007 T.II S.II SS.I r.4, r.31, r.69(e); SS.II r.72",
    blind_seat: "P217/2007 T.II S.II SS.II r.81",
    button_rotation: "P217/2007 T.II S.II SS.I r.29, r.30; SS.II r.80, r.81",
    blind_amount: "P217/2007 T.II S.II SS.II r.82, r.83",
    missed_blinds: "P217/2007 T.II S.II SS.II r.90",
    idle_big_blind: "P217/2007 T.II S.II SS.II r.89",
    ante: "P217/2007 T.II S.II SS.IV r.102, r.111",
    bet_min: "P217/2007 T.II S.II SS.I r.20",
    raise_min: "P217/2007 T.II S.II SS.II r.86",
    raise_cap: "P217/2007 T.II S.II SS.II r.87, r.88; SS.I r.47",
    bet_max: "P217/2007 T.II S.II SS.I r.21",
    stardilho_amount: "P217/2007 T.II S.II SS.IV r.106(a)",
    stardilho_enabled: "P217/2007 T.II S.II SS.IV r.106",
    topup: "P217/2007 T.II S.II SS.I r.14(e)",
    withdrawal: "P217/2007 T.II S.II SS.I r.14(g), r.14(h)",
    too_few: "P217/2007 T.II S.II SS.I r.24",
    illegal_check: "P217/2007 T.II S.II SS.I r.39(b)",
    oot_increased: "P217/2007 T.II S.II SS.I r.71(f)",
    out_of_turn: "P217/2007 T.II S.II SS.I r.9(e), r.37, r.71(f)",
    early_exposure: "P217/2007 T.II S.II SS.I r.70(d)-(h)",
    burn: "P217/2007 T.II S.II SS.I r.41, r.43, r.45, r.70(g)",
    hole_count: "P217/2007 T.II S.II SS.III r.93; SS.I r.69(b)",
    irregular: "P217/2007 T.II S.II SS.I r.39(c), r.48, r.71(c), r.71(d)",
    side_pots: "P217/2007 T.II S.II SS.I r.38, r.49, r.50, r.65",
    split: "P217/2007 T.II S.II SS.I r.66, r.67",
    ranking: "P217/2007 T.II S.II SS.I r.17, r.18; SS.II r.72",
    selection: "P217/2007 T.II S.II SS.III r.93, r.94",
    uncontested: "P217/2007 T.II S.II SS.I r.51",
    order_first: "P217/2007 T.II S.II SS.II r.84",
    order_later: "P217/2007 T.II S.II SS.II r.85; SS.I r.42, r.44, r.46",
    dealing_order: "P217/2007 T.II S.II SS.I r.35, r.69(a)",
    exposed_hole_card: "P217/2007 T.II S.II SS.I r.70(c), r.69(g)",
    timeout: "P217/2007 T.II S.II SS.I r.71(a)",
    walk: "P217/2007 T.II S.II SS.I r.7(a), r.51",
    po: "P217/2007 T.II S.II SS.I r.51",
};

/// Hold'em (P217/2007 T.II S.II SS.III, with SS.I and SS.II by r.92).
pub const HOLDEM_CITES: Cites = P217_GENERAL;

/// Omaha (P217/2007 T.II S.II SS.II).
pub const OMAHA_CITES: Cites = Cites {
    hole_count: "P217/2007 T.II S.II SS.II r.77; SS.I r.69(b)",
    selection: "P217/2007 T.II S.II SS.II r.73, r.77",
    dealing_order: "P217/2007 T.II S.II SS.II r.77; SS.I r.35, r.69(a)",
    ..P217_GENERAL
};

/// Póquer sintético under P217/2007 (T.II S.II SS.IV, with SS.I by r.112).
pub const SINTETICO_CITES: Cites = Cites {
    payout: "P217/2007 T.II S.II SS.IV r.104, r.112; SS.I r.49, r.50, r.65, r.66",
    commission: "P217/2007 T.II S.II SS.I r.7(a), r.65; SS.IV r.112",
    null_hand: "P217/2007 T.II S.II SS.IV r.109",
    wrongly_voided: "P217/2007 T.II S.II SS.IV r.109, r.112",
    invalid_deck: "P217/2007 T.II S.II SS.IV r.95, r.112; SS.I r.69(e)",
    bet_min: "P217/2007 T.II S.II SS.I r.20; SS.IV r.112",
    raise_cap: "P217/2007 T.II S.II SS.I r.47; SS.IV r.112",
    hole_count: "P217/2007 T.II S.II SS.IV r.96, r.109(b)",
    ranking: "P217/2007 T.II S.II SS.IV r.95, r.103-r.105",
    selection: "P217/2007 T.II S.II SS.IV r.96, r.97",
    split: "P217/2007 T.II S.II SS.IV r.104; SS.I r.66, r.67",
    order_first: "P217/2007 T.II S.II SS.IV r.107",
    order_later: "P217/2007 T.II S.II SS.IV r.108",
    dealing_order: "P217/2007 T.II S.II SS.IV r.109(a); P461/2001 II r.42",
    exposed_hole_card: "P217/2007 T.II S.II SS.IV r.109(c), r.109(d)",
    burn: "P217/2007 T.II S.II SS.IV r.100",
    ..P217_GENERAL
};

/// Póquer sintético under P461/2001 (part II).
pub const SINTETICO_P461_CITES: Cites = Cites {
    payout: "P461/2001 II r.26, r.48, r.55, r.56",
    commission: "P461/2001 II r.55",
    commission_rate: "P461/2001 II r.55",
    fee: "P461/2001 II r.55",
    null_hand: "P461/2001 II r.62",
    wrongly_voided: "P461/2001 II r.62",
    invalid_deck: "P461/2001 II r.4, r.5",
    ante: "P461/2001 II r.38",
    bet_min: "P461/2001 II r.20, r.38",
    raise_cap: "P461/2001 II r.47(d)",
    stardilho_amount: "P461/2001 II r.43(a)",
    stardilho_enabled: "P461/2001 II r.43",
    topup: "P461/2001 II r.60",
    withdrawal: "P461/2001 II r.61",
    too_few: "P461/2001 II r.11",
    illegal_check: "P461/2001 II r.47(b)",
    oot_increased: "P461/2001 II r.47(a)",
    out_of_turn: "P461/2001 II r.47(a)",
    early_exposure: "P461/2001 II r.63-r.65",
    burn: "P461/2001 II r.9",
    hole_count: "P461/2001 II r.42, r.62(b)",
    irregular: "P461/2001 II r.47(c), r.47(d)",
    side_pots: "P461/2001 II r.48, r.55",
    split: "P461/2001 II r.26, r.56",
    ranking: "P461/2001 II r.4, r.24-r.37",
    selection: "P461/2001 II r.1",
    uncontested: "P461/2001 II r.49",
    order_first: "P461/2001 II r.44",
    order_later: "P461/2001 II r.45",
    dealing_order: "P461/2001 II r.42, r.62(a)",
    exposed_hole_card: "P461/2001 II r.62(c), r.62(d)",
    walk: "P461/2001 II r.49, r.55",
    po: "P461/2001 II r.49",
    ..SINTETICO_CITES
};

/// Hold'em online (Reg806/2015).
pub const ONLINE_CITES: Cites = Cites {
    payout: "Reg806/2015 r.27, r.33, r.36, r.62, r.63",
    commission: "Reg806/2015 r.17(a), r.18, r.19",
    commission_rate: "Reg806/2015 r.17",
    fee: "Reg806/2015 r.17(b)",
    null_hand: "Reg806/2015 r.72",
    wrongly_voided: "Reg806/2015 r.73",
    invalid_deck: "Reg806/2015 r.4(b), r.72",
    blind_seat: "Reg806/2015 r.48",
    button_rotation: "Reg806/2015 r.4(c), r.46, r.64",
    blind_amount: "Reg806/2015 r.22",
    missed_blinds: "Reg806/2015 r.21",
    idle_big_blind: "Reg806/2015 r.70(b)",
    ante: "Reg806/2015 r.21",
    bet_min: "Reg806/2015 r.23",
    raise_min: "Reg806/2015 r.23",
    raise_cap: "Reg806/2015 r.38",
    bet_max: "Reg806/2015 r.24",
    stardilho_amount: "Reg806/2015 r.34",
    stardilho_enabled: "Reg806/2015 r.34",
    topup: "Reg806/2015 r.11(b)",
    withdrawal: "Reg806/2015 r.11(a)",
    too_few: "Reg806/2015 r.7",
    illegal_check: "Reg806/2015 r.34(b)",
    oot_increased: "Reg806/2015 r.34",
    out_of_turn: "Reg806/2015 r.34, r.51, r.54",
    early_exposure: "Reg806/2015 r.53",
    burn: "Reg806/2015 r.53",
    hole_count: "Reg806/2015 r.25, r.49, r.50",
    irregular: "Reg806/2015 r.34(c), r.40, r.52",
    side_pots: "Reg806/2015 r.39-r.42, r.63",
    split: "Reg806/2015 r.33, r.62",
    ranking: "Reg806/2015 r.29-r.32",
    selection: "Reg806/2015 r.25, r.26",
    uncontested: "Reg806/2015 r.36",
    order_first: "Reg806/2015 r.51",
    order_later: "Reg806/2015 r.54, r.56, r.58",
    dealing_order: "Reg806/2015 r.49, r.50",
    exposed_hole_card: "Reg806/2015 r.2(d)",
    timeout: "Reg806/2015 r.43-r.45, r.73",
    walk: "Reg806/2015 r.18",
    po: "Reg806/2015 r.36",
};
