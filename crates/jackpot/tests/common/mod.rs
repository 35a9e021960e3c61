//! Test helpers: a book with an auto-incrementing ledger index and event shorthands.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use jackpot::*;
use rules_core::Id;

pub struct T {
    pub book: Book,
    pub idx: u64,
}

pub fn id(s: &str) -> Id {
    s.into()
}

pub fn codes(f: &[Finding]) -> Vec<&str> {
    f.iter().map(|f| f.code.as_ref()).collect()
}

pub fn meters3(coin_in: u64, coin_out: u64, drop: u64) -> Vec<Meter> {
    vec![
        Meter::new(COIN_IN, coin_in, 0),
        Meter::new(COIN_OUT, coin_out, 0),
        Meter::new(TOTAL_DROP, drop, 0),
    ]
}

impl Default for T {
    fn default() -> Self {
        T::new()
    }
}

impl T {
    pub fn new() -> T {
        T {
            book: Book::new(),
            idx: 0,
        }
    }

    pub fn ctx(&mut self) -> EventCtx {
        self.idx += 1;
        EventCtx {
            ledger_index: self.idx,
            at_ms: 1_700_000_000_000 + (self.idx as i64) * 1000,
        }
    }

    /// Apply; panic on an ApplyError; check conservation after every event.
    pub fn ev(&mut self, e: Event) -> Vec<Finding> {
        let ctx = self.ctx();
        let f = self
            .book
            .apply(&e, ctx)
            .unwrap_or_else(|err| panic!("apply {e:?}: {err}"));
        assert!(
            self.book.conservation().holds,
            "conservation broken after {e:?}"
        );
        f
    }

    /// Apply expecting an ApplyError; check the book did not change.
    pub fn err(&mut self, e: Event) -> ApplyError {
        let before = serde_json::to_string(&self.book).unwrap();
        let ctx = self.ctx();
        let err = self
            .book
            .apply(&e, ctx)
            .expect_err("expected an ApplyError");
        assert_eq!(
            before,
            serde_json::to_string(&self.book).unwrap(),
            "book changed on error"
        );
        err
    }

    pub fn model(&mut self, model: &str, rtp_bp: u32, bets: &[i64]) -> Vec<Finding> {
        self.ev(Event::ModelApproved(ModelApproved {
            model_id: id(model),
            theoretical_rtp_bp: rtp_bp,
            bet_values_cents: bets.to_vec(),
            approval_ref: format!("IGJ/{model}"),
        }))
    }

    pub fn machine(&mut self, m: &str, casino: &str, model: &str, bets: &[i64]) -> Vec<Finding> {
        self.ev(Event::MachineRegistered(MachineRegistered {
            machine_id: id(m),
            casino_id: id(casino),
            model_id: id(model),
            bet_values_cents: bets.to_vec(),
        }))
    }

    pub fn pool_cfg(
        &self,
        p: &str,
        kind: PoolKind,
        machines: &[&str],
        bp: u32,
        start: i64,
        reset: i64,
    ) -> Event {
        Event::PoolConfigured(PoolConfigured {
            pool_id: id(p),
            kind,
            casino_ids: vec![],
            member_machine_ids: machines.iter().map(|m| id(m)).collect(),
            member_table_ids: vec![],
            contribution_bp: bp,
            start_value_cents: start,
            reset_value_cents: reset,
        })
    }

    pub fn pool(
        &mut self,
        p: &str,
        kind: PoolKind,
        machines: &[&str],
        bp: u32,
        start: i64,
        reset: i64,
    ) -> Vec<Finding> {
        let e = self.pool_cfg(p, kind, machines, bp, start, reset);
        self.ev(e)
    }

    pub fn read(&mut self, m: &str, coin_in: u64, coin_out: u64, drop: u64) -> Vec<Finding> {
        self.meters(m, meters3(coin_in, coin_out, drop))
    }

    pub fn meters(&mut self, m: &str, meters: Vec<Meter>) -> Vec<Finding> {
        self.ev(Event::MeterReading(MeterReading {
            machine_id: id(m),
            meters,
        }))
    }

    pub fn game(&mut self, m: &str, wager: i64, win: i64) -> Vec<Finding> {
        self.ev(Event::GamePlayed(GamePlayed {
            machine_id: id(m),
            game_number: self.idx + 1,
            wager_cents: wager,
            win_cents: win,
        }))
    }

    pub fn fault(&mut self, m: &str, code: &str, oos: bool, fm: bool) -> Vec<Finding> {
        self.ev(Event::MachineFault(MachineFault {
            machine_id: id(m),
            code: code.into(),
            out_of_service: oos,
            force_majeure: fm,
            detail: String::new(),
            pool_ids: vec![],
        }))
    }

    /// Force majeure of `m`'s part in `pools` only (their link, controller or server).
    pub fn pool_fault(&mut self, m: &str, code: &str, pools: &[&str]) -> Vec<Finding> {
        self.ev(Event::MachineFault(MachineFault {
            machine_id: id(m),
            code: code.into(),
            out_of_service: false,
            force_majeure: true,
            detail: String::new(),
            pool_ids: pools.iter().map(|p| id(p)).collect(),
        }))
    }

    pub fn restore(&mut self, m: &str) -> Vec<Finding> {
        self.ev(Event::MachineRestored(MachineRestored {
            machine_id: id(m),
            detail: String::new(),
            pool_ids: vec![],
        }))
    }

    /// Restore `m`'s part in `pools` only.
    pub fn restore_pools(&mut self, m: &str, pools: &[&str]) -> Vec<Finding> {
        self.ev(Event::MachineRestored(MachineRestored {
            machine_id: id(m),
            detail: String::new(),
            pool_ids: pools.iter().map(|p| id(p)).collect(),
        }))
    }

    pub fn report(&mut self, p: &str, cents: i64) -> Vec<Finding> {
        self.ev(Event::CaptiveValueReported(CaptiveValueReported {
            pool_id: id(p),
            value_cents: cents,
        }))
    }

    pub fn award(&mut self, p: &str, m: &str, cents: i64) -> Vec<Finding> {
        self.ev(Event::JackpotAwarded(JackpotAwarded {
            pool_id: id(p),
            machine_id: id(m),
            amount_cents: cents,
            winner: "ticket-1".into(),
            game_number: 0,
        }))
    }

    pub fn auth(&mut self, a: &str, from: &str, to: &str) -> Vec<Finding> {
        self.ev(Event::TransferAuthorized(TransferAuthorized {
            authorization_id: id(a),
            from_pool_id: id(from),
            to_pool_id: id(to),
            reference: "IGJ despacho".into(),
        }))
    }

    pub fn transfer_ev(
        t: &str,
        from: &str,
        to: &str,
        amount: i64,
        auth: Option<&str>,
    ) -> JackpotTransfer {
        JackpotTransfer {
            transfer_id: id(t),
            from_pool_id: id(from),
            to_pool_id: id(to),
            amount_cents: amount,
            reason: "fire".into(),
            authorization_id: auth.map(id),
        }
    }

    pub fn transfer(
        &mut self,
        t: &str,
        from: &str,
        to: &str,
        amount: i64,
        auth: Option<&str>,
    ) -> Vec<Finding> {
        self.ev(Event::JackpotTransfer(T::transfer_ev(
            t, from, to, amount, auth,
        )))
    }

    pub fn captive(&self, p: &str) -> E4 {
        self.book.pool(p).expect("pool").captive_e4
    }
}
