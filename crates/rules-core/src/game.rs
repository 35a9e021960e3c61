//! Game identifiers, exactly as the rule digests in `shared/rules/*.md` name them. The same ids
//! appear in table configurations on the ledger, in the JSON round format and in reports.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Every game of the regulations the product covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameId {
    /// P217/2007 T.I C.I S.I
    RouletteAmerican,
    /// P217/2007 T.I C.I S.II
    RouletteFrench,
    /// R807/2015
    RouletteFrenchOnline,
    /// P217/2007 T.I C.II S.I
    BancaFrancesa,
    /// P217/2007 T.I C.II S.II
    Craps,
    /// P217/2007 T.I C.II S.III
    Cussec,
    /// P217/2007 T.I C.III S.I (and P1364/2001)
    Blackjack,
    /// ROBJ/2015 (online blackjack/21)
    BlackjackOnline,
    /// P217/2007 T.I C.III S.II (and P461/2001)
    PokerSemDescarte,
    /// P217/2007 T.I C.III S.III
    BaccaratPuntoBanco,
    /// P217/2007 T.I C.III S.IV
    BaccaratMacau,
    /// P217/2007 T.II S.I
    BaccaratCheminDeFer,
    /// P217/2007 T.II S.II SS.III
    PokerHoldem,
    /// P217/2007 T.II S.II SS.II
    PokerOmaha,
    /// P217/2007 T.II S.II SS.IV (and P461/2001)
    PokerSintetico,
    /// Reg806/2015
    PokerHoldemOnline,
    /// P217/2007 T.III (machines are audited by the jackpot crate, not by a round engine)
    SlotMachine,
}

impl GameId {
    /// Every game id.
    pub const ALL: [GameId; 17] = [
        GameId::RouletteAmerican,
        GameId::RouletteFrench,
        GameId::RouletteFrenchOnline,
        GameId::BancaFrancesa,
        GameId::Craps,
        GameId::Cussec,
        GameId::Blackjack,
        GameId::BlackjackOnline,
        GameId::PokerSemDescarte,
        GameId::BaccaratPuntoBanco,
        GameId::BaccaratMacau,
        GameId::BaccaratCheminDeFer,
        GameId::PokerHoldem,
        GameId::PokerOmaha,
        GameId::PokerSintetico,
        GameId::PokerHoldemOnline,
        GameId::SlotMachine,
    ];

    /// The snake_case id used everywhere outside Rust.
    pub const fn as_str(self) -> &'static str {
        match self {
            GameId::RouletteAmerican => "roulette_american",
            GameId::RouletteFrench => "roulette_french",
            GameId::RouletteFrenchOnline => "roulette_french_online",
            GameId::BancaFrancesa => "banca_francesa",
            GameId::Craps => "craps",
            GameId::Cussec => "cussec",
            GameId::Blackjack => "blackjack",
            GameId::BlackjackOnline => "blackjack_online",
            GameId::PokerSemDescarte => "poker_sem_descarte",
            GameId::BaccaratPuntoBanco => "baccarat_punto_banco",
            GameId::BaccaratMacau => "baccarat_macau",
            GameId::BaccaratCheminDeFer => "baccarat_chemin_de_fer",
            GameId::PokerHoldem => "poker_holdem",
            GameId::PokerOmaha => "poker_omaha",
            GameId::PokerSintetico => "poker_sintetico",
            GameId::PokerHoldemOnline => "poker_holdem_online",
            GameId::SlotMachine => "slot_machine",
        }
    }

    /// True for the games played at a table in rounds (every game but the slot machine).
    pub const fn is_table_game(self) -> bool {
        !matches!(self, GameId::SlotMachine)
    }
}

impl fmt::Display for GameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown game id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown game id `{0}` (known: roulette_american, roulette_french, roulette_french_online, banca_francesa, craps, cussec, blackjack, blackjack_online, poker_sem_descarte, baccarat_punto_banco, baccarat_macau, baccarat_chemin_de_fer, poker_holdem, poker_omaha, poker_sintetico, poker_holdem_online, slot_machine)"
)]
pub struct UnknownGame(pub String);

impl FromStr for GameId {
    type Err = UnknownGame;

    fn from_str(s: &str) -> Result<GameId, UnknownGame> {
        GameId::ALL
            .iter()
            .copied()
            .find(|g| g.as_str() == s)
            .ok_or_else(|| UnknownGame(s.chars().take(64).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_str_and_serde() {
        for g in GameId::ALL {
            assert_eq!(g.as_str().parse::<GameId>().unwrap(), g);
            let j = serde_json::to_string(&g).unwrap();
            assert_eq!(j, format!("\"{}\"", g.as_str()));
            assert_eq!(serde_json::from_str::<GameId>(&j).unwrap(), g);
        }
        assert!("roulette".parse::<GameId>().is_err());
    }

    #[test]
    fn every_game_but_the_slot_machine_is_a_table_game() {
        for g in GameId::ALL {
            assert_eq!(g.is_table_game(), g != GameId::SlotMachine, "{g}");
        }
    }
}
