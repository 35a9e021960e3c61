//! # jackpot: the accounting core of slot machines and jackpots (P217/2007 Título III)
//!
//! Slot-machine meters, return to player, jackpot, superjackpot and table-jackpot captive values,
//! and their force-majeure transfer, exact to the 1/10,000 cent. Pure: no I/O, no clock, no
//! floats, only `BTreeMap`s; the same events give byte-identical state and findings. Nothing in
//! it can panic: the crate denies `arithmetic_side_effects`, `indexing_slicing`, `unwrap`,
//! `expect`, `panic` and `unreachable` (clippy), and a property test feeds it arbitrary events.
//!
//! Source: Portaria 217/2007, annex, Título III "Máquinas automáticas", rules 1–14
//! (`shared/seeds/000_*.txt`), through the digest `shared/rules/machines.md`; table jackpots:
//! `blackjack.md` §8 and `poker-sem-descarte.md` §7. Citations read `P217/2007 T.III r.N`.
//!
//! ## Using it
//!
//! ```
//! use jackpot::*;
//!
//! let mut book = Book::new();
//! let mut at = 0;
//! let mut apply = |book: &mut Book, e: Event| {
//!     at += 1;
//!     book.apply(&e, EventCtx { ledger_index: at, at_ms: 0 })
//! };
//! apply(&mut book, Event::ModelApproved(ModelApproved {
//!     model_id: "K".into(), theoretical_rtp_bp: 9_000, bet_values_cents: vec![100],
//!     approval_ref: "IGJ-1".into() })).unwrap();
//! apply(&mut book, Event::MachineRegistered(MachineRegistered {
//!     machine_id: "m1".into(), casino_id: "A".into(), model_id: "K".into(),
//!     bet_values_cents: vec![100] })).unwrap();
//! apply(&mut book, Event::PoolConfigured(PoolConfigured {
//!     pool_id: "jp1".into(), kind: PoolKind::Jackpot, casino_ids: vec![],
//!     member_machine_ids: vec!["m1".into()], member_table_ids: vec![],
//!     contribution_bp: 120, start_value_cents: 40_000, reset_value_cents: 0 })).unwrap();
//! for coin_in in [2_000_000, 2_750_000] {
//!     apply(&mut book, Event::MeterReading(MeterReading { machine_id: "m1".into(), meters: vec![
//!         Meter::new(COIN_IN, coin_in, 0), Meter::new(COIN_OUT, 0, 0),
//!         Meter::new(TOTAL_DROP, 0, 0)] })).unwrap();
//! }
//! // W1: 40,000 + 1.2% × 750,000 = 49,000 cents.
//! assert_eq!(book.pool("jp1").unwrap().captive_e4, 49_000 * E4_PER_CENT);
//! let f = apply(&mut book, Event::CaptiveValueReported(CaptiveValueReported {
//!     pool_id: "jp1".into(), value_cents: 48_000 })).unwrap();
//! assert_eq!(f[0].code, codes::SLOT_JACKPOT_CAPTIVE_MISMATCH);
//! assert!(book.conservation().holds);
//! ```
//!
//! * [`Book::apply`]`(&Event, EventCtx) -> Result<Vec<Finding>, ApplyError>`: a rule breach is a
//!   [`Finding`]; an event the book cannot make sense of (unknown pool or machine, negative or
//!   oversized amount, meter at or above its rollover, duplicate meter, malformed pool, ledger
//!   index not after the last) is an [`ApplyError`] naming the field, and **changes nothing**.
//! * [`Book::validate_transfer`]: what `apply` would say about a transfer, for a client that
//!   must not propose an ineligible one ([`TransferRejection`]: `Malformed`, or
//!   `Ineligible(findings)`: `apply` would book it as carried out and raise these).
//! * Queries: [`Book::captive_values`], [`Book::pool`], [`Book::pool_history`],
//!   [`Book::pool_history_page`] / [`Book::pool_history_page_from`] (a pool's [`PoolStatus`]
//!   and a bounded page of its history),
//!   [`Book::machine_overviews`] (every [`MachineStatus`] with its return over a period),
//!   [`Book::reconciliation_status`], [`Book::liability`] / [`Book::trust_report`] (r.5),
//!   [`Book::machine`] (meters, status), [`Book::machine_return`] / [`Book::model_return`]
//!   (and their `_from` forms)
//!   over a [`Period`] (ledger indexes or times), [`Book::transfer_candidates`],
//!   [`Book::conservation`], [`Book::findings`], [`Book::transfers`].
//! * The per-event detail (pool history lines, meter increases) is either held by the book
//!   (the default) or handed out to the caller after every `apply` ([`Book::hand_out_detail`],
//!   [`Book::take_detail`], [`detail`]), so that the book's size is the floor's; the queries
//!   that read it take a [`DetailSource`] (`..._from`), [`Held`] for a book that holds it.
//! * [`Book::prune_before`] drops held per-reading detail older than an index (history, meter
//!   increases, findings) to bound memory; totals, captive values and conservation are kept.
//! * The state is `serde`-serialisable ([`Book`] round-trips through JSON exactly), so the
//!   daemon can snapshot it and resume.
//! * [`CHECKS`] lists every finding code with its severity, default confidence and citation.
//!
//! ## Event vocabulary and the proto mapping
//!
//! One [`Event`] per signed proto message (`proto/casino_ledger/v1/events.proto`); the
//! integration converts, this crate never sees protobuf. Fields are the proto's, by name.
//!
//! | proto `EventBody.payload` | [`Event`] | conversion |
//! |---|---|---|
//! | `DeviceRegistered` (kind `MACHINE`) | [`MachineRegistered`] | `machine_id` (the `device_id` when empty), `casino_id`, `model_id`, `bet_values_cents`. Table devices: nothing. |
//! | `MachineModelApproved` | [`ModelApproved`] | 1:1 |
//! | `PoolConfigured` | [`PoolConfigured`] | `kind`: `JACKPOT`/`SUPERJACKPOT`/`TABLE_JACKPOT` → [`PoolKind`]; `UNSPECIFIED` is malformed (refuse in the integration) |
//! | `MeterReading` | [`MeterReading`] | 1:1; money meters in **cents** (an agent reporting SAS credits multiplies by the denomination) |
//! | `GamePlayed` | [`GamePlayed`] | 1:1 |
//! | `JackpotContribution` | [`JackpotContribution`] | 1:1 |
//! | `CaptiveValueReported` | [`CaptiveValueReported`] | 1:1 |
//! | `JackpotAwarded` | [`JackpotAwarded`] | 1:1 |
//! | `MachineFault` | [`MachineFault`] | 1:1 (`pool_ids`: the fault concerns the machine's part in those pools only) |
//! | `MachineRestored` | [`MachineRestored`] | 1:1 (`pool_ids`: restores only its part in those pools) |
//! | `RamClear` | [`RamClear`] | 1:1 |
//! | `JackpotTransfer` | [`JackpotTransfer`] | `authorization_id` `""` → `None`. A client proposing one calls [`Book::validate_transfer`] first; what was carried out is booked as carried out. |
//! | `TransferAuthorized` | [`TransferAuthorized`] | 1:1; the daemon checks the signer is a regulator key |
//! | a table round's adjudication (`rules-*` engine) with `jackpot: Some(_)` | [`TableJackpotRound`] | `pool_id` = the table's `TableConfig.jackpot.pool_id`, `game` = `TableConfig.game`, `account` = `Adjudication.jackpot`, `wins` = `Adjudication.jackpot_wins`; applied at the index of the round's last event |
//! | `MachineEvent` (a machine's significant event) | [`MachineEvent`] with a [`Significant`] kind | enums → Rust enums (`UNSPECIFIED` refused at ingest), power/link actions → `on`/`up`, `authorization_id` `""` → `None`; checked by [`significant`] |
//! | `MachineChangeAuthorized` | [`ChangeAuthorized`] | 1:1 (operator-signed) |
//! | `ProgramApproved` | [`ProgramApproved`] | 1:1 (operator-signed) |
//! | `DeviceRevoked`, table-game messages | — | not accounting events of this crate |
//!
//! [`EventCtx`]: `ledger_index` = the entry's chain index (must strictly increase from one
//! applied event to the next; gaps are fine); `at_ms` = the time the daemon files it under
//! (used only for time-period queries).
//!
//! A table jackpot pool is configured by a `PoolConfigured` of kind `TABLE_JACKPOT` (members =
//! tables, `contribution_bp` = the increment share, start and reset = the approved start value),
//! whose `pool_id` the tables' `TableConfigured.jackpot.pool_id` names.
//!
//! ## Readings and choices
//!
//! * **Units** (M1, M7): money in cents; exact pool amounts in 1/10,000 cent ([`E4`], `i128`).
//!   A contribution of `bp` on `w` cents is `w × bp` e4, exactly. Declarations (captive values,
//!   awards, transfers) are whole cents compared with a tolerance strictly below one cent.
//!   Shown in cents, held money is floored; ratios and variances round half away from zero
//!   ([`amount`]).
//! * **Meters** (r.9, r.14; M2): mandatory `coin_in` (apostas), `coin_out` (prémios),
//!   `total_drop` (arrecadação); optional `jackpot`, `games_played`. A reading below the previous
//!   one is a **rollover only if the implied increase is below half the rollover modulus**
//!   (serial-number arithmetic), else the meter went back; only a `RamClear` with before and
//!   after readings may re-baseline meters. See [`meters`] for why, and for how contributions,
//!   baselines and meter faults are handled.
//! * **Return to player** (r.2, M4, M5): the approved pay table (`theoretical_rtp_bp`, not
//!   counting jackpots) must reach 8000 bp; a machine below it even counting its pools'
//!   contribution rates is `Certain`, one that reaches 80% only with them is `Review` (reading
//!   (i) of M5, "sem prejuízo da percentagem", r.3, r.4). A model approved below 80% with no
//!   machine yet is flagged on its own. The observed return is reported (per machine or model,
//!   any period), and only raises an `Info`/`Review` statistical alert past a volume threshold
//!   ([`Settings`]). See [`report`].
//! * **Contributions** (r.3, r.4): credited at each reading to every pool the machine feeds at
//!   that moment, from the machine's reliable Δcoin_in; a machine joining a pool contributes
//!   from its first reading after joining (its earlier play belongs to no pool).
//! * **Captive value** (r.5, M6): start + contributions − awards ± transfers; an award releases
//!   the whole exact value and the pool restarts at its configured reset value (0 follows the
//!   rules; a configured seed counts as a start value in the conservation). A paid amount a cent
//!   or more away, or a winner outside the pool, is a finding on an award that still happened.
//! * **Conservation**: for every pool, `seeded (start + resets) + contributed + transferred_in =
//!   captive + awarded + transferred_out`, exactly in e4; [`Book::conservation`] checks it and the
//!   tests check it after every event of long random simulations.
//! * **Trust** (r.4, r.5): a superjackpot spanning casinos is listed under **each** member casino
//!   at its full value, marked joint (the prize is due in full wherever it falls); casino totals
//!   separate sole and joint amounts, the system total counts each pool once, and each casino's
//!   contributions are shown beside it. See [`report`].
//! * **Force majeure** (r.6, M8–M13): a pool is under force majeure when every member machine
//!   is, for it: the whole machine, or only its part in that pool (`MachineFault.pool_ids`: a
//!   superjackpot's link, controller or server; the machine stays in service); "same model and
//!   bets" = same model id and same bet set; the IGJ route is open only when no such machine
//!   exists in the source's casinos, and needs a prior authorisation naming source and target.
//!   A transfer the casino carried out is **booked as carried out**: the source restarts at 0
//!   and the target is credited with the whole captive value due (r.5), whatever was declared;
//!   an ineligible, unforced, wrong-amount or repeated transfer is a finding (only the same
//!   transfer id reported again moves nothing). See [`transfer`].
//! * **Table jackpots** (blackjack r.38–50, póquer sem descarte r.3–12): the rule engine's exact
//!   contributions are added; a reset releases the whole pool and restarts it at its start value;
//!   smaller prizes come out of the pool (blackjack.md 13.12). The display a round starts from is
//!   checked against the book (`BJ_`/`PSD_JACKPOT_DISPLAY_MISMATCH`). r.6 transfers do not apply.
//!
//! ## Finding codes
//!
//! | code | severity | confidence | rule |
//! |---|---|---|---|
//! | `SLOT_METER_DECREASED` | high | certain | r.9, r.14 |
//! | `SLOT_METER_MISSING` | medium | certain | r.9 |
//! | `SLOT_PAYTABLE_RETURN_BELOW_80` | high | certain / review (M5) | r.2 (r.3, r.4) |
//! | `SLOT_JACKPOT_CAPTIVE_MISMATCH` | high | certain | r.3, r.4, r.5 |
//! | `SLOT_JACKPOT_AWARD_MISMATCH` | high | certain | r.5 (r.3, r.4) |
//! | `SLOT_AWARD_MACHINE_NOT_IN_POOL` | high | certain | r.3, r.4 |
//! | `SLOT_TRANSFER_WITHOUT_FORCE_MAJEURE` | high | certain | r.5, r.6 |
//! | `SLOT_TRANSFER_TARGET_INVALID` | high | certain | r.6 |
//! | `SLOT_TRANSFER_AMOUNT_MISMATCH` | high | certain | r.5, r.6 |
//! | `SLOT_TRANSFER_DUPLICATE` (added: same transfer id again, or a second transfer in one force-majeure episode) | high | certain | r.5, r.6 |
//! | `SLOT_PLAYED_WITH_FAULTY_METER` | medium | review | r.9 |
//! | `SLOT_PLAYED_OUT_OF_SERVICE` (added) | medium | review | record convention |
//! | `SLOT_MODEL_CHANGED_UNAPPROVED` | medium | review | r.8 |
//! | `SLOT_OBSERVED_RETURN_LOW` | info | review | r.2 (M4) |
//! | `SLOT_RAM_CLEAR_UNDOCUMENTED` (added) | high | certain | r.9, r.14; record convention |
//! | `SLOT_RAM_CLEAR_BEFORE_MISMATCH` (added) | high | certain | r.9, r.14; record convention |
//! | `SLOT_METER_GAME_MISMATCH` (added) | medium | certain | r.9, r.14 |
//! | `SLOT_JACKPOT_CONTRIBUTION_MISMATCH` (added) | medium | review | r.3, r.4 |
//! | `BJ_JACKPOT_DISPLAY_MISMATCH` / `PSD_JACKPOT_DISPLAY_MISMATCH` / `TABLE_JACKPOT_DISPLAY_MISMATCH` | high | certain | T.I C.III S.I r.40, r.41 / S.II r.3, r.4 / convention |
//! | `TABLE_JACKPOT_NOT_IN_POOL` (added) | medium | certain | record convention |
//! | `TABLE_JACKPOT_OVERDRAWN` (added) | high | review | record convention (blackjack.md 13.12) |
//! | `SLOT_METERS_MOVED_OUT_OF_SERVICE` (significant events) | medium | review | T.III silent; 25 CFR 547.10(a), GLI-11 |
//! | `SLOT_METERS_MOVED_DOOR_OPEN` (significant events) | medium | review | T.III silent; 25 CFR 547.10(b) |
//! | `SLOT_METERS_WITHOUT_GAMES` (significant events) | medium | review | r.9, r.14 (reading) |
//! | `SLOT_HANDPAY_METER_MISMATCH` (significant events) | high | review | r.13, r.14 (reading); SAS/G2S hand-paid meters |
//! | `SLOT_PROGRESSIVE_HIT_WITHOUT_AWARD` (significant events) | high | certain | r.5, r.14 (r.3, r.4) |
//! | `SLOT_AWARD_WITHOUT_HIT` (significant events) | high | review | r.14 (reading) |
//! | `SLOT_EVENTS_LOST` (significant events) | high | review | T.III silent (r.14); 25 CFR 547.10(a)(2), AGCO 11.1.2 |
//! | `SLOT_SOFTWARE_AUTH_FAILED` (significant events) | high | review | r.7, r.8 (reading); 25 CFR 547.10(a) |
//! | `SLOT_SOFTWARE_SIGNATURE_MISMATCH` (significant events) | high | review | r.7, r.8 (reading) |
//! | `SLOT_CONFIG_CHANGE_UNAUTHORIZED` (significant events) | medium | review | r.8 (reading); record convention |
#![deny(
    clippy::arithmetic_side_effects,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::unreachable,
    clippy::todo
)]

pub mod activity;
pub mod amount;
pub mod book;
pub mod detail;
pub mod error;
pub mod event;
pub mod finding;
pub mod meters;
pub mod pools;
pub mod report;
pub mod significant;
pub mod sim;
pub mod state;
pub mod transfer;

pub use activity::{ActivityBuilder, PoolActivity};
pub use amount::{E4, E4_PER_CENT, TOLERANCE_E4};
pub use book::{Book, DetailHorizon, MIN_RETURN_BP};
pub use detail::{DAY_MS, DayRunning, DeltaSum, Detail, DetailSource, Held};
pub use error::{ApplyError, QueryError};
pub use event::*;
pub use finding::{Amounts, CHECKS, Check, Finding, check_by_code, codes};
pub use report::*;
pub use significant::{
    ActiveFault, ChangeAuth, EVENT_KINDS, EventQuery, EventState, EventsReport, Hit, LoggedEvent,
    Why, Window,
};
pub use state::*;
pub use transfer::{Candidate, PoolCandidates, TransferRejection};
