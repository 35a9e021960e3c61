//! The human rendering of an adjudication, rule by rule: what `ledgerctl adjudicate --explain`
//! and `ledgerctl round --explain` print for a compliance officer.

use std::fmt::Write;

use rules_core::{Adjudication, Outcome, Violation};

fn euros(cents: i64) -> String {
    ledger_fmt::money(cents, ledger_fmt::Locale::En)
}

fn signed_euros(cents: i64) -> String {
    ledger_fmt::money_signed(cents, ledger_fmt::Locale::En)
}

fn outcome(o: Outcome) -> &'static str {
    match o {
        Outcome::Won => "won",
        Outcome::Lost => "lost",
        Outcome::Push => "push",
        Outcome::Void => "void",
        Outcome::Withdrawn => "withdrawn",
        Outcome::Open => "still open",
        Outcome::Forfeited => "forfeited",
    }
}

fn violation_line(out: &mut String, v: &Violation) {
    let review = match v.confidence {
        rules_core::Confidence::Review => " [reading: for review]",
        rules_core::Confidence::Certain => "",
    };
    let _ = writeln!(
        out,
        "  {:<8} {}  {}{}\n           rule: {}",
        format!("{:?}", v.severity).to_lowercase(),
        v.code,
        v.message,
        review,
        v.citation
    );
}

/// Render `adj` (and the configuration's own violations) as text.
pub fn render(adj: &Adjudication, config_violations: &[Violation]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Round {} ({})", adj.round_id, adj.game);
    if let Some(v) = &adj.void {
        let _ = writeln!(out, "  VOID: {}  [{}]", v.reason, v.citation);
    }
    if !adj.notes.is_empty() {
        let _ = writeln!(out, "\nHow the rules apply:");
        for n in &adj.notes {
            let _ = writeln!(out, "  - {}\n      [{}]", n.text, n.citation);
        }
    }
    let _ = writeln!(out, "\nBets:");
    for b in &adj.bets {
        let reported = match b.reported_net_cents {
            Some(r) if r == b.due_net_cents => "  reported: same".to_string(),
            Some(r) => format!("  reported: {}  <-- DIFFERS", signed_euros(r)),
            None => String::new(),
        };
        let seat = b.seat.map(|s| format!(" seat {s}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}{}: stake {}, {}, due {}{}\n      {}  [{}]",
            b.bet_id,
            seat,
            euros(b.stake_cents),
            outcome(b.outcome),
            signed_euros(b.due_net_cents),
            reported,
            b.reason,
            b.citation
        );
    }
    for w in &adj.jackpot_wins {
        let _ = writeln!(
            out,
            "  jackpot: bet {} wins {} with {}  [{}]",
            w.bet_id,
            euros(w.prize_cents),
            w.combination,
            w.citation
        );
    }
    for h in &adj.house {
        let _ = writeln!(
            out,
            "  house {}: {}  [{}]",
            h.kind,
            euros(h.amount_cents),
            h.citation
        );
    }
    let total: i64 = adj.bets.iter().map(|b| b.due_net_cents).sum();
    let _ = writeln!(out, "  players' due net: {}", signed_euros(total));
    if config_violations.is_empty() && adj.violations.is_empty() && adj.discrepancies.is_empty() {
        let _ = writeln!(out, "\nFindings: none.");
        return out;
    }
    let _ = writeln!(out, "\nFindings:");
    for v in config_violations {
        violation_line(&mut out, v);
    }
    for v in &adj.violations {
        violation_line(&mut out, v);
    }
    for d in &adj.discrepancies {
        let reported = d
            .reported_net_cents
            .map(signed_euros)
            .unwrap_or_else(|| "nothing".to_string());
        let _ = writeln!(
            out,
            "  high     {}  bet {}: due {}, reported {}\n           rule: {}",
            d.code,
            d.bet_id,
            signed_euros(d.due_net_cents),
            reported,
            d.citation
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euros_format() {
        assert_eq!(euros(0), "€0.00");
        assert_eq!(euros(-1505), "-€15.05");
        assert_eq!(signed_euros(17500), "+€175.00");
        assert_eq!(euros(-123_456), "-€1,234.56");
    }

    fn bet(id: &str, seat: Option<u8>, stake: i64, due: i64, o: Outcome) -> rules_core::BetOutcome {
        rules_core::BetOutcome {
            bet_id: id.into(),
            seat,
            stake_cents: stake,
            due_net_cents: due,
            outcome: o,
            reported_net_cents: None,
            reason: format!("{id} reason").into(),
            citation: format!("r.{id}").into(),
        }
    }

    /// What a compliance officer reads: the notes, each bet with its outcome, due and whether
    /// the reported result agrees, the total, and every finding with its severity, whether it
    /// rests on a reading, and its rule.
    #[test]
    fn render_shows_every_part_of_an_adjudication() {
        use rules_core::{Discrepancy, GameId, Note, Severity};
        let mut adj = Adjudication::new(GameId::BaccaratPuntoBanco, "r1".into());
        adj.notes.push(Note {
            citation: "r.10".into(),
            text: "the banker draws".into(),
        });
        let mut won = bet("b1", Some(2), 1_000, 950, Outcome::Won);
        won.reported_net_cents = Some(950);
        let mut lost = bet("b2", None, 500, -500, Outcome::Lost);
        lost.reported_net_cents = Some(-400);
        adj.bets = vec![won, lost];
        adj.violations
            .push(Violation::new("X_LATE_BET", Severity::Medium, "r.30", "a late bet").review());
        adj.discrepancies.push(Discrepancy {
            bet_id: "b2".into(),
            confidence: rules_core::Confidence::Certain,
            code: "X_WRONG_PAYOUT".into(),
            citation: "r.b2".into(),
            due_net_cents: -500,
            reported_net_cents: Some(-400),
        });
        let config = [Violation::new(
            "X_LIMITS",
            Severity::Low,
            "r.40",
            "limit ratio",
        )];
        assert_eq!(
            render(&adj, &config),
            format!(
                "Round r1 ({})\n\
                 \nHow the rules apply:\n\
                 \x20 - the banker draws\n      [r.10]\n\
                 \nBets:\n\
                 \x20 b1 seat 2: stake €10.00, won, due +€9.50  reported: same\n      b1 reason  [r.b1]\n\
                 \x20 b2: stake €5.00, lost, due -€5.00  reported: -€4.00  <-- DIFFERS\n      b2 reason  [r.b2]\n\
                 \x20 players' due net: +€4.50\n\
                 \nFindings:\n\
                 \x20 low      X_LIMITS  limit ratio\n           rule: r.40\n\
                 \x20 medium   X_LATE_BET  a late bet [reading: for review]\n           rule: r.30\n\
                 \x20 high     X_WRONG_PAYOUT  bet b2: due -€5.00, reported -€4.00\n           rule: r.b2\n",
                GameId::BaccaratPuntoBanco
            )
        );
        // No notes, no finding: said so. A configuration's violation alone is a finding.
        let mut plain = Adjudication::new(GameId::BaccaratPuntoBanco, "r2".into());
        plain.bets = vec![bet("b3", None, 200, -200, Outcome::Lost)];
        let text = render(&plain, &[]);
        assert!(!text.contains("How the rules apply"), "{text}");
        assert!(text.ends_with("\nFindings: none.\n"), "{text}");
        let text = render(&plain, &config);
        assert!(text.contains("\nFindings:\n  low      X_LIMITS"), "{text}");
    }
}
