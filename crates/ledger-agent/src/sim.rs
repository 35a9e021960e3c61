//! A small, realistic simulated casino session for the demo: a French roulette, a blackjack and
//! a punto banco table playing by their rules (payouts, blackjack's dealer drawing to 17,
//! baccarat's third-card tableau), and slot machines whose meters only ever go up.
//!
//! The generator yields unsigned payloads per device, in time order; the agent signs and streams
//! them. A later issue replaces it with a rules-driven simulator that injects known mistakes, so
//! nothing downstream depends on what is in here. Deterministic for a given seed.

use ledger_core::DeviceKind;
use ledger_core::proto::{self as v1, event_body::Payload as P};

/// A device to register.
#[derive(Clone, Debug)]
pub struct DeviceSpec {
    pub device_id: String,
    pub kind: DeviceKind,
    pub casino_id: String,
    pub table_ids: Vec<String>,
    pub machine_id: String,
    pub model_id: String,
    pub bet_values_cents: Vec<i64>,
    pub description: String,
}

/// One unsigned event.
#[derive(Clone, Debug)]
pub struct SimEvent {
    pub device_id: String,
    pub occurred_at_ms: i64,
    pub payload: P,
}

/// splitmix64: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

const CASINO: &str = "casino-lisboa";
const RED: [u32; 18] = [
    1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36,
];
const SLOT_MODEL: &str = "AZTEC-GOLD-5";
const SLOT_BETS: [i64; 4] = [10, 20, 50, 100];

/// The simulated casino.
pub struct CasinoSim {
    rng: Rng,
    machines: usize,
}

/// The devices of the session.
pub fn devices(machines: usize) -> Vec<DeviceSpec> {
    let table = |id: &str, table: &str, what: &str| DeviceSpec {
        device_id: id.into(),
        kind: DeviceKind::Table,
        casino_id: CASINO.into(),
        table_ids: vec![table.into()],
        machine_id: String::new(),
        model_id: String::new(),
        bet_values_cents: Vec::new(),
        description: what.into(),
    };
    let mut v = vec![
        table("table-roulette-1", "RF-01", "French roulette, main floor"),
        table(
            "table-blackjack-1",
            "BJ-01",
            "Blackjack, 6 decks, main floor",
        ),
        table(
            "table-baccarat-1",
            "PB-01",
            "Punto banco, 8 decks, salon privé",
        ),
    ];
    for m in 1..=machines {
        let id = format!("slot-{m:02}");
        v.push(DeviceSpec {
            device_id: id.clone(),
            kind: DeviceKind::Machine,
            casino_id: CASINO.into(),
            table_ids: Vec::new(),
            machine_id: id,
            model_id: SLOT_MODEL.into(),
            bet_values_cents: SLOT_BETS.to_vec(),
            description: format!("slot bank A, position {m}"),
        });
    }
    v
}

struct Out<'a> {
    events: &'a mut Vec<SimEvent>,
    device: &'a str,
    t: i64,
}

impl Out<'_> {
    fn push(&mut self, gap_ms: i64, payload: P) {
        self.t += gap_ms;
        self.events.push(SimEvent {
            device_id: self.device.to_string(),
            occurred_at_ms: self.t,
            payload,
        });
    }
}

fn card(i: u8) -> String {
    const R: &[u8] = b"A23456789TJQK";
    const S: &[u8] = b"SHDC";
    format!(
        "{}{}",
        R[(i % 13) as usize] as char,
        S[((i / 13) % 4) as usize] as char
    )
}

fn bj_value(cards: &[u8]) -> u32 {
    let mut total = 0;
    let mut aces = 0;
    for &c in cards {
        let r = (c % 13) as u32 + 1;
        total += match r {
            1 => {
                aces += 1;
                11
            }
            11..=13 => 10,
            n => n,
        };
    }
    while total > 21 && aces > 0 {
        total -= 10;
        aces -= 1;
    }
    total
}

fn bac_value(cards: &[u8]) -> u32 {
    cards
        .iter()
        .map(|&c| match (c % 13) as u32 + 1 {
            n @ 1..=9 => n,
            _ => 0,
        })
        .sum::<u32>()
        % 10
}

struct Shoe {
    cards: Vec<u8>,
}

impl Shoe {
    fn new(rng: &mut Rng, decks: usize) -> Shoe {
        let mut cards: Vec<u8> = (0..decks).flat_map(|_| 0..52u8).collect();
        for i in (1..cards.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            cards.swap(i, j);
        }
        Shoe { cards }
    }
    fn draw(&mut self, rng: &mut Rng, decks: usize) -> u8 {
        if self.cards.len() < 20 {
            *self = Shoe::new(rng, decks);
        }
        self.cards.pop().unwrap_or(0)
    }
}

impl CasinoSim {
    pub fn new(seed: u64, machines: usize) -> CasinoSim {
        CasinoSim {
            rng: Rng(seed),
            machines,
        }
    }

    /// The devices to register before the session.
    pub fn devices(&self) -> Vec<DeviceSpec> {
        devices(self.machines)
    }

    /// A session starting at `start_ms`: `rounds` rounds per table and `games` games per machine,
    /// all devices interleaved in time order.
    pub fn session(&mut self, start_ms: i64, rounds: usize, games: usize) -> Vec<SimEvent> {
        let mut all = Vec::new();
        self.roulette(&mut all, start_ms, rounds);
        self.blackjack(&mut all, start_ms + 700, rounds);
        self.baccarat(&mut all, start_ms + 1300, rounds);
        for m in 1..=self.machines {
            self.slot(
                &mut all,
                start_ms + 100 * m as i64,
                &format!("slot-{m:02}"),
                games,
            );
        }
        // Stable sort: each device's own order is kept.
        all.sort_by_key(|e| e.occurred_at_ms);
        all
    }

    fn configure(
        out: &mut Out,
        table: &str,
        game: &str,
        min: i64,
        max: i64,
        commission: &str,
        decks: Option<u32>,
    ) {
        out.push(
            0,
            P::TableConfigured(v1::TableConfigured {
                table_id: table.into(),
                casino_id: CASINO.into(),
                game: game.into(),
                regulation: "P217/2007".into(),
                min_bet_cents: Some(min),
                max_bet_cents: Some(max),
                commission: commission.into(),
                decks,
                seats: Some(7),
                ..Default::default()
            }),
        );
    }

    fn roulette(&mut self, events: &mut Vec<SimEvent>, t: i64, rounds: usize) {
        let table = "RF-01";
        let mut out = Out {
            events,
            device: "table-roulette-1",
            t,
        };
        Self::configure(&mut out, table, "roulette_french", 200, 500_000, "", None);
        let mut last_pocket = 0;
        for r in 1..=rounds {
            let rid = format!("RF-01-{r:05}");
            let tr = |round_id: &str| (table.to_string(), round_id.to_string());
            let (tid, round_id) = tr(&rid);
            out.push(
                2_000,
                P::RoundOpened(v1::RoundOpened {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                }),
            );
            let mut bets = Vec::new();
            for b in 1..=(2 + self.rng.below(5)) {
                let bet_id = format!("b{b}");
                let seat = 1 + self.rng.below(7) as u32;
                let amount = 100 * (2 + self.rng.below(49)) as i64;
                let (bet_type, selection) = match self.rng.below(5) {
                    0 | 1 => ("straight", vec![self.rng.below(37) as u32]),
                    2 => ("red", Vec::new()),
                    3 => ("black", Vec::new()),
                    _ => ("even", Vec::new()),
                };
                out.push(
                    1_500 + self.rng.below(3_000) as i64,
                    P::BetPlaced(v1::BetPlaced {
                        table_id: tid.clone(),
                        round_id: round_id.clone(),
                        bet_id: bet_id.clone(),
                        bet_type: bet_type.into(),
                        seat: Some(seat),
                        player_id: format!("p{seat}"),
                        selection: selection.clone(),
                        amount_cents: amount,
                        ..Default::default()
                    }),
                );
                bets.push((bet_id, bet_type, selection, amount));
            }
            out.push(
                3_000,
                P::BallLaunched(v1::BallLaunched {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                    ball_direction: v1::Direction::Counterclockwise as i32,
                    wheel_direction: v1::Direction::Clockwise as i32,
                    from_pocket: Some(last_pocket),
                    ball_id: "ball-1".into(),
                }),
            );
            out.push(
                8_000,
                P::BetsClosed(v1::BetsClosed {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                }),
            );
            let pocket = self.rng.below(37) as u32;
            last_pocket = pocket;
            out.push(
                10_000,
                P::BallLanded(v1::BallLanded {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                    pocket,
                }),
            );
            let mut results = Vec::new();
            let mut losers = Vec::new();
            let mut paid = Vec::new();
            for (bet_id, bet_type, sel, amount) in &bets {
                let wins = match *bet_type {
                    "straight" => sel.first() == Some(&pocket),
                    "red" => RED.contains(&pocket),
                    "black" => pocket != 0 && !RED.contains(&pocket),
                    _ => pocket != 0 && pocket.is_multiple_of(2),
                };
                // French roulette: even chances lose half on zero ("la partage").
                let net = if wins {
                    if *bet_type == "straight" {
                        amount * 35
                    } else {
                        *amount
                    }
                } else if pocket == 0 && *bet_type != "straight" {
                    -amount / 2
                } else {
                    -amount
                };
                if net > 0 {
                    paid.push((bet_id.clone(), amount + net));
                } else {
                    losers.push(bet_id.clone());
                }
                results.push(v1::BetResult {
                    bet_id: bet_id.clone(),
                    net_cents: net,
                });
            }
            out.push(
                4_000,
                P::BetsCollected(v1::BetsCollected {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                    bet_ids: losers,
                }),
            );
            for (bet_id, amount) in paid {
                out.push(
                    3_000,
                    P::PrizePaid(v1::PrizePaid {
                        table_id: tid.clone(),
                        round_id: round_id.clone(),
                        bet_id,
                        amount_cents: amount,
                    }),
                );
            }
            out.push(
                1_000,
                P::RoundSettled(v1::RoundSettled {
                    table_id: tid,
                    round_id,
                    results,
                    house_cents: None,
                }),
            );
        }
    }

    fn blackjack(&mut self, events: &mut Vec<SimEvent>, t: i64, rounds: usize) {
        let table = "BJ-01";
        let mut out = Out {
            events,
            device: "table-blackjack-1",
            t,
        };
        Self::configure(&mut out, table, "blackjack", 500, 200_000, "", Some(6));
        let mut shoe = Shoe::new(&mut self.rng, 6);
        out.push(
            5_000,
            P::TableProcedure(v1::TableProcedure {
                table_id: table.into(),
                round_id: "BJ-01-00001".into(),
                name: "shuffle".into(),
                ..Default::default()
            }),
        );
        for r in 1..=rounds {
            let (tid, round_id) = (table.to_string(), format!("BJ-01-{r:05}"));
            out.push(
                3_000,
                P::RoundOpened(v1::RoundOpened {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                }),
            );
            let seats: Vec<u32> = (1..=(1 + self.rng.below(3) as u32)).collect();
            let mut stakes = Vec::new();
            for &s in &seats {
                let amount = 500 * (1 + self.rng.below(20)) as i64;
                out.push(
                    2_000,
                    P::BetPlaced(v1::BetPlaced {
                        table_id: tid.clone(),
                        round_id: round_id.clone(),
                        bet_id: format!("s{s}-main"),
                        bet_type: "main".into(),
                        seat: Some(s),
                        player_id: format!("p{s}"),
                        amount_cents: amount,
                        ..Default::default()
                    }),
                );
                stakes.push(amount);
            }
            out.push(
                2_000,
                P::BetsClosed(v1::BetsClosed {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                }),
            );
            let mut hands: Vec<Vec<u8>> = vec![Vec::new(); seats.len()];
            let mut dealer = Vec::new();
            let deal = |out: &mut Out, c: u8, to: String, up: bool| {
                out.push(
                    1_500,
                    P::CardDealt(v1::CardDealt {
                        table_id: tid.clone(),
                        round_id: round_id.clone(),
                        recipient: to,
                        card: card(c),
                        face_up: up,
                    }),
                );
            };
            for pass in 0..2 {
                for (i, &s) in seats.iter().enumerate() {
                    let c = shoe.draw(&mut self.rng, 6);
                    hands[i].push(c);
                    deal(&mut out, c, format!("seat:{s}"), true);
                }
                let c = shoe.draw(&mut self.rng, 6);
                dealer.push(c);
                deal(&mut out, c, "dealer".into(), pass == 0);
            }
            for (i, &s) in seats.iter().enumerate() {
                while bj_value(&hands[i]) < 17
                    && !(hands[i].len() == 2 && bj_value(&hands[i]) == 21)
                {
                    out.push(
                        2_000,
                        P::PlayerDecision(v1::PlayerDecision {
                            table_id: tid.clone(),
                            round_id: round_id.clone(),
                            seat: Some(s),
                            hand: 1,
                            action: "hit".into(),
                            ..Default::default()
                        }),
                    );
                    let c = shoe.draw(&mut self.rng, 6);
                    hands[i].push(c);
                    deal(&mut out, c, format!("seat:{s}"), true);
                }
                if bj_value(&hands[i]) <= 21 {
                    out.push(
                        1_500,
                        P::PlayerDecision(v1::PlayerDecision {
                            table_id: tid.clone(),
                            round_id: round_id.clone(),
                            seat: Some(s),
                            hand: 1,
                            action: "stand".into(),
                            ..Default::default()
                        }),
                    );
                }
            }
            while bj_value(&dealer) < 17 {
                let c = shoe.draw(&mut self.rng, 6);
                dealer.push(c);
                deal(&mut out, c, "dealer".into(), true);
            }
            let d = bj_value(&dealer);
            let d_bj = dealer.len() == 2 && d == 21;
            let mut results = Vec::new();
            for (i, &s) in seats.iter().enumerate() {
                let p = bj_value(&hands[i]);
                let p_bj = hands[i].len() == 2 && p == 21;
                let stake = stakes[i];
                let net = if p > 21 {
                    -stake
                } else if p_bj && !d_bj {
                    stake * 3 / 2
                } else if d_bj && !p_bj {
                    -stake
                } else if d > 21 || p > d {
                    stake
                } else if p == d {
                    0
                } else {
                    -stake
                };
                results.push(v1::BetResult {
                    bet_id: format!("s{s}-main"),
                    net_cents: net,
                });
            }
            out.push(
                4_000,
                P::RoundSettled(v1::RoundSettled {
                    table_id: tid,
                    round_id,
                    results,
                    house_cents: None,
                }),
            );
        }
    }

    fn baccarat(&mut self, events: &mut Vec<SimEvent>, t: i64, rounds: usize) {
        let table = "PB-01";
        let mut out = Out {
            events,
            device: "table-baccarat-1",
            t,
        };
        Self::configure(
            &mut out,
            table,
            "baccarat_punto_banco",
            1_000,
            1_000_000,
            "5pct",
            Some(8),
        );
        let mut shoe = Shoe::new(&mut self.rng, 8);
        for r in 1..=rounds {
            let (tid, round_id) = (table.to_string(), format!("PB-01-{r:05}"));
            out.push(
                3_000,
                P::RoundOpened(v1::RoundOpened {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                }),
            );
            let mut bets = Vec::new();
            for b in 1..=(1 + self.rng.below(4)) {
                let kind = *self.rng.pick(&["ponto", "banca", "banca", "ponto", "tie"]);
                let amount = 1_000 * (1 + self.rng.below(50)) as i64;
                let seat = b as u32;
                out.push(
                    2_000,
                    P::BetPlaced(v1::BetPlaced {
                        table_id: tid.clone(),
                        round_id: round_id.clone(),
                        bet_id: format!("b{b}"),
                        bet_type: kind.into(),
                        seat: Some(seat),
                        player_id: format!("p{seat}"),
                        amount_cents: amount,
                        ..Default::default()
                    }),
                );
                bets.push((format!("b{b}"), kind, amount));
            }
            out.push(
                2_000,
                P::BetsClosed(v1::BetsClosed {
                    table_id: tid.clone(),
                    round_id: round_id.clone(),
                }),
            );
            let (mut ponto, mut banca) = (Vec::new(), Vec::new());
            let mut deal = |out: &mut Out, rng: &mut Rng, to: &str, hand: &mut Vec<u8>| {
                let c = shoe.draw(rng, 8);
                hand.push(c);
                out.push(
                    1_500,
                    P::CardDealt(v1::CardDealt {
                        table_id: tid.clone(),
                        round_id: round_id.clone(),
                        recipient: to.into(),
                        card: card(c),
                        face_up: true,
                    }),
                );
                c
            };
            for _ in 0..2 {
                deal(&mut out, &mut self.rng, "ponto", &mut ponto);
                deal(&mut out, &mut self.rng, "banca", &mut banca);
            }
            let (p2, b2) = (bac_value(&ponto), bac_value(&banca));
            if p2 < 8 && b2 < 8 {
                let mut ponto_third = None;
                if p2 <= 5 {
                    let c = deal(&mut out, &mut self.rng, "ponto", &mut ponto);
                    ponto_third = Some(match (c % 13) as u32 + 1 {
                        n @ 1..=9 => n,
                        _ => 0,
                    });
                }
                let banca_draws = match ponto_third {
                    None => b2 <= 5,
                    Some(t) => match b2 {
                        0..=2 => true,
                        3 => t != 8,
                        4 => (2..=7).contains(&t),
                        5 => (4..=7).contains(&t),
                        6 => (6..=7).contains(&t),
                        _ => false,
                    },
                };
                if banca_draws {
                    deal(&mut out, &mut self.rng, "banca", &mut banca);
                }
            }
            let (p, b) = (bac_value(&ponto), bac_value(&banca));
            let results = bets
                .iter()
                .map(|(id, kind, amount)| {
                    let net = match (*kind, p.cmp(&b)) {
                        ("tie", std::cmp::Ordering::Equal) => amount * 8,
                        ("tie", _) => -amount,
                        (_, std::cmp::Ordering::Equal) => 0,
                        ("ponto", std::cmp::Ordering::Greater) => *amount,
                        ("banca", std::cmp::Ordering::Less) => amount * 95 / 100,
                        _ => -amount,
                    };
                    v1::BetResult {
                        bet_id: id.clone(),
                        net_cents: net,
                    }
                })
                .collect();
            out.push(
                4_000,
                P::RoundSettled(v1::RoundSettled {
                    table_id: tid,
                    round_id,
                    results,
                    house_cents: None,
                }),
            );
        }
    }

    fn slot(&mut self, events: &mut Vec<SimEvent>, t: i64, machine: &str, games: usize) {
        let mut out = Out {
            events,
            device: machine,
            t,
        };
        let (mut coin_in, mut coin_out, mut played, mut drop) = (0u64, 0u64, 0u64, 0u64);
        let meters = |ci: u64, co: u64, gp: u64, dr: u64| {
            vec![
                v1::Meter {
                    name: "coin_in".into(),
                    value: ci,
                    rollover: 100_000_000,
                },
                v1::Meter {
                    name: "coin_out".into(),
                    value: co,
                    rollover: 100_000_000,
                },
                v1::Meter {
                    name: "total_drop".into(),
                    value: dr,
                    rollover: 100_000_000,
                },
                v1::Meter {
                    name: "games_played".into(),
                    value: gp,
                    rollover: 100_000_000,
                },
            ]
        };
        out.push(
            0,
            P::MeterReading(v1::MeterReading {
                machine_id: machine.into(),
                meters: meters(0, 0, 0, 0),
            }),
        );
        let mut credit = 0i64;
        for g in 1..=games as u64 {
            let wager = *self.rng.pick(&SLOT_BETS);
            if credit < wager {
                credit += 2_000; // a €20 note
                drop += 2_000;
            }
            // About 92% return: mostly nothing, sometimes small wins, rarely a big one.
            let roll = self.rng.below(1_000);
            let win = match roll {
                0..=1 => wager * 100,
                2..=40 => wager * 5,
                41..=300 => wager * 2,
                _ => 0,
            };
            credit += win - wager;
            coin_in += wager as u64;
            coin_out += win as u64;
            played += 1;
            out.push(
                3_000 + self.rng.below(4_000) as i64,
                P::GamePlayed(v1::GamePlayed {
                    machine_id: machine.into(),
                    game_number: g,
                    wager_cents: wager,
                    win_cents: win,
                }),
            );
            if g % 10 == 0 {
                out.push(
                    500,
                    P::MeterReading(v1::MeterReading {
                        machine_id: machine.into(),
                        meters: meters(coin_in, coin_out, played, drop),
                    }),
                );
            }
        }
        out.push(
            500,
            P::MeterReading(v1::MeterReading {
                machine_id: machine.into(),
                meters: meters(coin_in, coin_out, played, drop),
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_structurally_valid_and_meters_never_go_down() {
        let mut sim = CasinoSim::new(7, 4);
        let evs = sim.session(1_800_000_000_000, 30, 50);
        let mut last: std::collections::HashMap<(String, String), u64> = Default::default();
        for e in &evs {
            let body = v1::EventBody {
                device_id: e.device_id.clone(),
                sequence: 1,
                occurred_at_ms: e.occurred_at_ms,
                payload: Some(e.payload.clone()),
            };
            ledger_core::Event::from_proto(body).unwrap_or_else(|err| panic!("{err}: {e:?}"));
            if let P::MeterReading(m) = &e.payload {
                for x in &m.meters {
                    let k = (m.machine_id.clone(), x.name.clone());
                    assert!(x.value >= *last.get(&k).unwrap_or(&0));
                    last.insert(k, x.value);
                }
            }
        }
        assert!(
            evs.windows(2)
                .all(|w| w[0].occurred_at_ms <= w[1].occurred_at_ms)
        );
        for d in [
            "table-roulette-1",
            "table-blackjack-1",
            "table-baccarat-1",
            "slot-04",
        ] {
            assert!(evs.iter().any(|e| e.device_id == d), "{d}");
        }
    }

    #[test]
    fn deterministic() {
        let a = CasinoSim::new(1, 2).session(0, 5, 5);
        let b = CasinoSim::new(1, 2).session(0, 5, 5);
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}
