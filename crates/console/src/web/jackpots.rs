//! A pool's page (`/jackpot?pool=ID`, linked from Jackpots): what it holds now and how that
//! reconciles, its captive value over time (an SVG chart), its awards, its transfers with their
//! validity as the jackpot book judged them (P217/2007 T.III r.5-6), and its declarations each
//! against what the book held at that moment, over the last 30, 90 (default) or 365 days or the
//! whole history. Jackpots.GetPool (the pool's state, no history lines) and
//! Jackpots.GetPoolActivity (one pass over the period's history lines in ledgerd); both
//! casino-scoped by ledgerd.

use jackpot::activity::{Direction, TransferLine};
use jackpot::{PoolActivity, PoolHistoryPage, PoolStatus, Route};

use super::*;

/// Buckets of time the chart is cut into (ledgerd keeps at most two points a bucket).
const BUCKETS: u32 = 200;
/// Awards and declarations listed.
const ITEMS: u32 = 50;

#[derive(Deserialize, Default)]
pub struct PoolQuery {
    #[serde(default)]
    pool: String,
    /// The period: the last 30, 90 (default) or 365 days, or `all` (the whole history, a pass
    /// over every line the pool ever had).
    #[serde(default)]
    days: String,
}

/// The periods offered, in days (None: the whole history).
const PERIODS: [(&str, Option<i64>); 4] = [
    ("30", Some(30)),
    ("90", Some(90)),
    ("365", Some(365)),
    ("all", None),
];

/// `days` as a number of days (None: all), or the error naming it.
fn period_days(days: &str) -> Result<Option<i64>, String> {
    let d = if days.is_empty() { "90" } else { days };
    PERIODS
        .iter()
        .find(|(k, _)| *k == d)
        .map(|(_, n)| *n)
        .ok_or_else(|| format!("days: `{days}` is not one of 30, 90, 365, all"))
}

fn period_links(loc: Locale, pool: &str, days: Option<i64>) -> Markup {
    html! {
        nav aria-label=(tr(loc, "Period", "Período")) {
            ul.legend {
                li { (tr(loc, "Period:", "Período:")) }
                @for (k, n) in PERIODS {
                    @let label = match n {
                        Some(n) => format!("{} {n} {}", tr(loc, "last", "últimos"), tr(loc, "days", "dias")),
                        None => tr(loc, "the whole history", "todo o histórico").to_string(),
                    };
                    li {
                        @if n == days {
                            strong aria-current="true" { (label) }
                        } @else {
                            a href={"/jackpot?pool=" (url_encode(pool)) "&days=" (k)} { (label) }
                        }
                    }
                }
            }
        }
    }
}

fn cents(e4: i128) -> i64 {
    jackpot::amount::to_cents(e4)
}

fn route_text(loc: Locale, r: &Route) -> String {
    match r {
        Route::SameModelAndBets => tr(
            loc,
            "to a machine of the same model and bets (r.6)",
            "para máquina do mesmo modelo e apostas (r.6)",
        )
        .into(),
        Route::Authorized {
            authorization_id, ..
        } => format!(
            "{} {authorization_id} (r.6)",
            tr(
                loc,
                "authorised by the inspectorate:",
                "autorizada pela Inspeção-Geral de Jogos:"
            )
        ),
    }
}

fn validity(loc: Locale, t: &TransferLine) -> Markup {
    html! {
        @if t.valid {
            strong.valid { (tr(loc, "valid", "válida")) }
            @if let Some(r) = &t.route { " — " (route_text(loc, r)) }
        } @else {
            strong.differs.invalid { (tr(loc, "invalid", "inválida")) }
            @if !t.booked {
                " — " (tr(loc, "a repeat of a transfer already booked: nothing moved", "repetição de uma transferência já registada: nada foi movido"))
            } @else {
                " — " (tr(loc, "booked as carried out (r.5)", "registada como efetuada (r.5)"))
            }
            ul.reasons {
                @for r in &t.reasons {
                    li {
                        @if !r.code.is_empty() { code { (r.code) } ": " }
                        (r.check)
                        @if !r.citation.is_empty() { " (" cite { (r.citation) } ")" }
                    }
                }
            }
        }
    }
}

/// The page's body (no I/O, for the tests).
pub(super) fn pool_body(loc: Locale, tz: Tz, p: &PoolStatus, a: &PoolActivity) -> Markup {
    let when = |ms: i64| ledger_fmt::datetime(ms, tz, loc);
    let money = |c: i64| ledger_fmt::money(c, loc);
    let points: Vec<(i64, i64)> = a
        .series
        .iter()
        .map(|v| (v.at_ms, cents(v.captive_e4)))
        .collect();
    let casinos: Vec<&str> = p.casinos.iter().map(|c| &**c).collect();
    html! {
        dl.facts {
            dt { (tr(loc, "Kind", "Tipo")) } dd { (serde_json::to_value(p.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()) }
            dt { (tr(loc, "Casinos", "Casinos")) } dd { (casinos.join(", ")) }
            dt { (tr(loc, "Held now (captive value)", "Em custódia agora (valor cativo)")) }
            dd #held-now { (money(cents(p.captive_e4))) " (" (tr(loc, "exact", "exato")) " " (ledger_fmt::money_e4(p.captive_e4, loc)) ")" }
            dt { (tr(loc, "Started with, contributed", "Valor inicial, contribuições")) }
            dd { (ledger_fmt::money_e4(p.totals.seeded_e4, loc)) ", " (ledger_fmt::money_e4(p.totals.contributed_e4, loc)) }
            dt { (tr(loc, "Awarded, transferred out, transferred in", "Atribuído, transferido para fora, recebido")) }
            dd { (ledger_fmt::money_e4(p.totals.awarded_e4, loc)) ", " (ledger_fmt::money_e4(p.totals.transferred_out_e4, loc)) ", " (ledger_fmt::money_e4(p.totals.transferred_in_e4, loc)) }
        }
        h2 { (tr(loc, "Reconciliation", "Reconciliação")) }
        @match &p.last_report {
            None => p #reconciliation { (tr(loc, "Never declared: nothing to reconcile yet.", "Nunca declarado: ainda nada a reconciliar.")) }
            Some(r) => {
                @let diff = r.reported_cents.saturating_sub(cents(r.due_e4));
                p #reconciliation {
                    (tr(loc, "Last declared", "Última declaração")) " " (when(r.at_ms)) ": " strong { (money(r.reported_cents)) } "; "
                    (tr(loc, "held by the book at that moment", "em custódia segundo o registo nesse momento")) " " strong { (money(cents(r.due_e4))) }
                    " (" (ledger_fmt::money_e4(r.due_e4, loc)) "); "
                    (tr(loc, "difference", "diferença")) " " strong.differs[!r.ok] { (ledger_fmt::money_signed(diff, loc)) }
                    " — " @if r.ok { (tr(loc, "within a cent: reconciled", "dentro de um cêntimo: reconciliado")) } @else { span.differs { (tr(loc, "NOT reconciled", "NÃO reconciliado")) } }
                    "."
                }
            }
        }
        h2 #history-title { (tr(loc, "Captive value over time", "Valor cativo ao longo do tempo")) }
        @if points.is_empty() {
            p { (tr(loc, "No history yet.", "Ainda sem histórico.")) }
        } @else {
            (chart::steps(
                tr(loc, "Captive value over time", "Valor cativo ao longo do tempo"),
                "#1d4ed8",
                &points,
                &|c| ledger_fmt::money(c, loc),
                &|t| ledger_fmt::datetime(t, tz, loc),
            ))
            details {
                summary { (tr(loc, "The chart's figures", "Os números do gráfico")) " (" (points.len()) ")" }
                table #history {
                    thead { tr { th scope="col" { (tr(loc, "When", "Quando")) } th.num scope="col" { (tr(loc, "Captive value", "Valor cativo")) } } }
                    tbody { @for (t, c) in &points { tr { td { (when(*t)) } td.num { (money(*c)) } } } }
                }
            }
            p { (tr(loc, "At most two points per slice of time: the highest and the last.", "No máximo dois pontos por intervalo de tempo: o mais alto e o último.")) }
        }
        h2 { (tr(loc, "Awards", "Prémios atribuídos")) }
        @if a.awards.is_empty() {
            p #no-awards { (tr(loc, "None.", "Nenhum.")) }
        } @else {
            @if a.awards_total > a.awards.len() as u64 {
                p { (tr(loc, "The newest of", "Os mais recentes de")) " " (a.awards_total) }
            }
            table #awards {
                thead { tr {
                    th scope="col" { (tr(loc, "When", "Quando")) }
                    th scope="col" { (tr(loc, "Machine", "Máquina")) }
                    th.num scope="col" { (tr(loc, "Whole value due (released)", "Valor total devido (libertado)")) }
                    th.num scope="col" { (tr(loc, "Paid", "Pago")) }
                    th.num scope="col" { (tr(loc, "Paid − due", "Pago − devido")) }
                } }
                tbody {
                    @for w in a.awards.iter().rev() {
                        tr {
                            td { (when(w.at_ms)) }
                            td { (w.member) }
                            td.num { (ledger_fmt::money_e4(w.due_e4, loc)) }
                            td.num { (money(w.paid_cents)) }
                            td.num.differs[!w.ok] { (ledger_fmt::money_signed(w.paid_cents.saturating_sub(cents(w.due_e4)), loc)) }
                        }
                    }
                }
            }
        }
        h2 { (tr(loc, "Transfers (P217/2007 T.III r.5-6)", "Transferências (P217/2007 T.III r.5-6)")) }
        @if a.transfers.is_empty() {
            p #no-transfers { (tr(loc, "None.", "Nenhuma.")) }
        } @else {
            table #transfers {
                thead { tr {
                    th scope="col" { (tr(loc, "When", "Quando")) }
                    th scope="col" { (tr(loc, "Transfer", "Transferência")) }
                    th scope="col" { (tr(loc, "Direction", "Sentido")) }
                    th.num scope="col" { (tr(loc, "Moved in the book", "Movido no registo")) }
                    th.num scope="col" { (tr(loc, "Declared by the casino", "Declarado pelo casino")) }
                    th scope="col" { (tr(loc, "Validity", "Validade")) }
                } }
                tbody {
                    @for t in a.transfers.iter().rev() {
                        tr {
                            td { (when(t.at_ms)) }
                            td { (t.transfer_id) }
                            td { @match t.direction {
                                Direction::Out => { (tr(loc, "out to", "para")) " " (t.other_pool) }
                                Direction::In => { (tr(loc, "in from", "de")) " " (t.other_pool) }
                            } }
                            td.num { (ledger_fmt::money_e4(t.moved_e4, loc)) }
                            td.num { @if let Some(c) = t.declared_cents { (money(c)) } }
                            td.validity { (validity(loc, t)) }
                        }
                    }
                }
            }
        }
        h2 { (tr(loc, "Declarations", "Declarações")) }
        @if a.declarations.is_empty() {
            p { (tr(loc, "None.", "Nenhuma.")) }
        } @else {
            @if a.declarations_total > a.declarations.len() as u64 {
                p { (tr(loc, "The newest of", "As mais recentes de")) " " (a.declarations_total) }
            }
            table #declarations {
                thead { tr {
                    th scope="col" { (tr(loc, "When", "Quando")) }
                    th.num scope="col" { (tr(loc, "Declared", "Declarado")) }
                    th.num scope="col" { (tr(loc, "Held then", "Em custódia nesse momento")) }
                    th.num scope="col" { (tr(loc, "Declared − held", "Declarado − em custódia")) }
                } }
                tbody {
                    @for d in a.declarations.iter().rev() {
                        tr {
                            td { (when(d.at_ms)) }
                            td.num { (money(d.declared_cents)) }
                            td.num { (ledger_fmt::money_e4(d.held_e4, loc)) }
                            td.num.differs[!d.ok] { (ledger_fmt::money_signed(d.declared_cents.saturating_sub(cents(d.held_e4)), loc)) }
                        }
                    }
                }
            }
        }
    }
}

pub(super) async fn pool_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<PoolQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    if q.pool.is_empty() {
        return error_page(
            &app,
            loc,
            StatusCode::BAD_REQUEST,
            tr(
                loc,
                "pool: name a pool (/jackpot?pool=ID)",
                "pool: indique um jackpot (/jackpot?pool=ID)",
            ),
        );
    }
    let days = match period_days(&q.days) {
        Ok(d) => d,
        Err(e) => return error_page(&app, loc, StatusCode::BAD_REQUEST, &e),
    };
    let from_ms = days.map(|d| {
        chrono::Utc::now()
            .timestamp_millis()
            .saturating_sub(d.saturating_mul(86_400_000))
    });
    let title = format!("{} {}", tr(loc, "Jackpot", "Jackpot"), q.pool);
    let mut j = ctx.ledger(&app).jackpots();
    let mut j2 = j.clone();
    let (pool, activity) = tokio::join!(
        j.get_pool(v1::GetPoolRequest {
            pool_id: q.pool.clone(),
            history_before: None,
            history_limit: 1,
        }),
        j2.get_pool_activity(v1::PoolActivityRequest {
            pool_id: q.pool.clone(),
            buckets: BUCKETS,
            max_items: ITEMS,
            from_ms,
            to_ms: None,
        }),
    );
    let parsed = pool.and_then(|p| {
        let page: PoolHistoryPage = serde_json::from_str(&p.get_ref().json)
            .map_err(|e| tonic::Status::internal(format!("GetPool's answer: {e}")))?;
        let a = activity?;
        let a: PoolActivity = serde_json::from_str(&a.get_ref().json)
            .map_err(|e| tonic::Status::internal(format!("GetPoolActivity's answer: {e}")))?;
        Ok((page.pool, a))
    });
    let (status, body) = match parsed {
        Err(e) => (status_code(&e), ledger_error(loc, &e)),
        Ok((p, a)) => (StatusCode::OK, pool_body(loc, app.tz, &p, &a)),
    };
    let body = html! {
        p { a href="/jackpots" { (tr(loc, "All jackpots", "Todos os jackpots")) } }
        (period_links(loc, &q.pool, days))
        (body)
    };
    respond(&ctx, status, page(&app, &ctx, &title, body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jackpot::activity::{AwardLine, DeclarationLine, TransferReason, ValuePoint};

    fn status() -> PoolStatus {
        serde_json::from_value(serde_json::json!({
            "id": "JP-1", "kind": "jackpot", "casinos": ["lisboa"], "machines": {}, "tables": [],
            "contribution_bp": 100, "start_value_cents": 0, "reset_value_cents": 0,
            "configured_at": 1, "captive_e4": 1_234_565_000,
            "totals": {"seeded_e4": 0, "contributed_e4": 1_234_565_000, "awarded_e4": 0,
                       "transferred_in_e4": 0, "transferred_out_e4": 0},
            "contributed_by": {}, "reported": {},
            "last_report": {"index": 9, "at_ms": 1_764_000_000_000i64, "reported_cents": 120_000,
                            "due_e4": 1_215_000_000, "ok": false},
            "history_lines": 12
        }))
        .unwrap()
    }

    fn activity() -> PoolActivity {
        PoolActivity {
            pool_id: "JP-1".into(),
            from: 0,
            to: 12,
            series: vec![
                ValuePoint {
                    index: 1,
                    at_ms: 1_764_000_000_000,
                    captive_e4: 0,
                },
                ValuePoint {
                    index: 5,
                    at_ms: 1_764_000_060_000,
                    captive_e4: 1_234_565_000,
                },
            ],
            awards: vec![AwardLine {
                index: 4,
                at_ms: 1_764_000_030_000,
                member: "M-LX-07".into(),
                due_e4: 5_000_000,
                paid_cents: 500,
                ok: true,
            }],
            awards_total: 1,
            declarations: vec![DeclarationLine {
                index: 9,
                at_ms: 1_764_000_000_000,
                declared_cents: 120_000,
                held_e4: 1_215_000_000,
                ok: false,
            }],
            declarations_total: 1,
            transfers: vec![
                TransferLine {
                    index: 7,
                    at_ms: 1_764_000_040_000,
                    transfer_id: "TR-1".into(),
                    direction: Direction::Out,
                    other_pool: "SJP".into(),
                    moved_e4: 10_000,
                    declared_cents: Some(1),
                    booked: true,
                    valid: false,
                    route: None,
                    reasons: vec![TransferReason {
                        code: "SLOT_TRANSFER_TARGET_INVALID".into(),
                        citation: "P217/2007 T.III r.6".into(),
                        check: "target not of the same model".into(),
                    }],
                },
                TransferLine {
                    index: 8,
                    at_ms: 1_764_000_050_000,
                    transfer_id: "TR-2".into(),
                    direction: Direction::In,
                    other_pool: "JP-9".into(),
                    moved_e4: 20_000,
                    declared_cents: Some(2),
                    booked: true,
                    valid: true,
                    route: Some(Route::SameModelAndBets),
                    reasons: vec![],
                },
            ],
        }
    }

    #[test]
    fn the_pool_page_shows_history_awards_transfers_and_a_truthful_reconciliation() {
        let tz = ledger_fmt::DEFAULT_TZ;
        let html = pool_body(Locale::En, tz, &status(), &activity()).into_string();
        // The chart: one step from 0 to the value, and its figures.
        assert!(
            html.contains("<svg") && html.contains("<path d=\"M90 "),
            "{html}"
        );
        assert!(html.contains("€1,234.56"), "the value held now: {html}");
        // The award: when, machine, amount.
        assert!(html.contains("<td>M-LX-07</td>"), "{html}");
        assert!(html.contains("<td class=\"num\">€5.00</td>"), "{html}");
        // The invalid transfer with its reason and citation; the valid one with its route.
        assert!(
            html.contains("<strong class=\"differs invalid\">invalid</strong>"),
            "{html}"
        );
        assert!(
            html.contains("<code>SLOT_TRANSFER_TARGET_INVALID</code>"),
            "{html}"
        );
        assert!(html.contains("<cite>P217/2007 T.III r.6</cite>"), "{html}");
        assert!(
            html.contains(
                "<strong class=\"valid\">valid</strong> — to a machine of the same model and bets"
            ),
            "{html}"
        );
        assert!(
            html.contains("out to SJP") && html.contains("in from JP-9"),
            "{html}"
        );
        // The reconciliation compares the declaration with what was held then (1,215.00), not
        // with what is held now (1,234.5650).
        assert!(
            html.contains("held by the book at that moment <strong>€1,215.00</strong>"),
            "{html}"
        );
        assert!(html.contains("-€15.00"), "{html}");
        assert!(
            !html.contains("-€34.56"),
            "not compared with the value held now: {html}"
        );
        assert!(html.contains("NOT reconciled"), "{html}");
        let pt = pool_body(Locale::PtPt, tz, &status(), &activity()).into_string();
        assert!(
            pt.contains("inválida") && pt.contains("Prémios atribuídos"),
            "{pt}"
        );
        assert!(pt.contains("234,56"), "{pt}");
    }

    #[test]
    fn the_period_is_30_90_365_days_or_all() {
        assert_eq!(period_days("").unwrap(), Some(90));
        assert_eq!(period_days("365").unwrap(), Some(365));
        assert_eq!(period_days("all").unwrap(), None);
        let e = period_days("7").unwrap_err();
        assert!(e.starts_with("days: `7`"), "{e}");
        let links = period_links(Locale::En, "JP 1", Some(90)).into_string();
        assert!(
            links.contains(r#"<strong aria-current="true">last 90 days</strong>"#),
            "{links}"
        );
        assert!(
            links.contains(r#"href="/jackpot?pool=JP%201&amp;days=all""#),
            "{links}"
        );
    }

    #[test]
    fn a_pool_without_activity_says_so() {
        let mut s = status();
        s.last_report = None;
        let a = PoolActivity {
            series: vec![],
            awards: vec![],
            awards_total: 0,
            declarations: vec![],
            declarations_total: 0,
            transfers: vec![],
            ..activity()
        };
        let html = pool_body(Locale::En, ledger_fmt::DEFAULT_TZ, &s, &a).into_string();
        assert!(html.contains("Never declared"), "{html}");
        assert!(
            html.contains("No history yet.") && !html.contains("<svg"),
            "{html}"
        );
        assert!(
            html.contains("id=\"no-awards\"") && html.contains("id=\"no-transfers\""),
            "{html}"
        );
    }
}
