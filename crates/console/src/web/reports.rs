//! The Reports page: the table games per casino, table and game by gaming day, month and year to
//! date, a chart of hold per gaming day, the slot machines per machine and casino (wagered, won,
//! takings, return against the approved model's), and the same figures as CSV and XLSX. Everything comes
//! from one `Audit.GetReport` (ledgerd's reporting module, the one `ledgerctl report` reads), so
//! the gaming days are the ledger's (`[reports]`) and a casino-scoped account gets its casinos'
//! rows only.

use super::*;

/// Gaming days in the chart of hold.
pub const CHART_DAYS: u32 = 30;

#[derive(Deserialize, Default)]
pub struct ReportQuery {
    #[serde(default)]
    day: String,
}

/// The gaming day asked for, or today's: the console's time zone with the day starting at 06:00
/// (the ledgerd default; the page shows the ledger's rule).
fn day_asked(app: &App, q: &ReportQuery) -> Result<NaiveDate, String> {
    if q.day.is_empty() {
        let now = chrono::Utc::now().with_timezone(&app.tz).naive_local();
        return Ok((now - chrono::Duration::hours(6)).date());
    }
    NaiveDate::parse_from_str(&q.day, "%Y-%m-%d")
        .map_err(|_| format!("day: `{}` is not a date YYYY-MM-DD", q.day))
}

async fn fetch(app: &App, ctx: &Ctx, q: &ReportQuery, days: u32) -> Result<v1::Report, Response> {
    fetch_with(app, ctx, q, days, false).await
}

/// [`fetch`], and with `event_counts` each slot row's significant events by kind.
async fn fetch_with(
    app: &App,
    ctx: &Ctx,
    q: &ReportQuery,
    days: u32,
    event_counts: bool,
) -> Result<v1::Report, Response> {
    let loc = ctx.loc;
    let day = day_asked(app, q).map_err(|m| error_page(app, loc, StatusCode::BAD_REQUEST, &m))?;
    ctx.ledger(app)
        .audit()
        .get_report(v1::ReportRequest {
            day: day.format("%Y-%m-%d").to_string(),
            days,
            event_counts,
            ..Default::default()
        })
        .await
        .map(|r| r.into_inner())
        .map_err(|e| {
            respond(
                ctx,
                status_code(&e),
                page(
                    app,
                    ctx,
                    tr(loc, "Reports", "Relatórios"),
                    ledger_error(loc, &e),
                ),
            )
        })
}

/// Handle, reported win and due win summed over the casino totals the account sees (the grand
/// total is absent for a casino-scoped account).
fn casino_totals(p: &v1::ReportPeriod) -> (i64, i64, i64, u64) {
    p.rows
        .iter()
        .filter(|r| r.table_id == "*" && r.casino_id != "*")
        .fold((0, 0, 0, 0), |(h, w, d, n), r| {
            (
                h.saturating_add(r.handle_cents),
                w.saturating_add(r.reported_win_cents),
                d.saturating_add(r.due_win_cents),
                n + r.rounds,
            )
        })
}

fn hold_bp(win: i64, handle: i64) -> i64 {
    if handle == 0 {
        return 0;
    }
    let bp = i128::from(win) * 10_000 / i128::from(handle);
    i64::try_from(bp).unwrap_or(if bp < 0 { i64::MIN } else { i64::MAX })
}

fn period_name(loc: Locale, p: &v1::ReportPeriod) -> String {
    match p.name.as_str() {
        "day" => format!("{} {}", tr(loc, "Gaming day", "Dia de jogo"), p.first_day),
        "month_to_date" => format!(
            "{} ({} – {})",
            tr(loc, "Month to date", "Mês até à data"),
            p.first_day,
            p.last_day
        ),
        "year_to_date" => format!(
            "{} ({} – {})",
            tr(loc, "Year to date", "Ano até à data"),
            p.first_day,
            p.last_day
        ),
        other => other.to_string(),
    }
}

fn report_table(loc: Locale, p: &v1::ReportPeriod, id: &str) -> Markup {
    let money = |c: i64| ledger_fmt::money(c, loc);
    let pct = |bp: i64| ledger_fmt::percent_bp(bp, loc);
    html! {
        table id=(id) {
            caption { (period_name(loc, p)) }
            thead { tr {
                th scope="col" { (tr(loc, "Casino", "Casino")) }
                th scope="col" { (tr(loc, "Table", "Mesa")) }
                th scope="col" { (tr(loc, "Game", "Jogo")) }
                th.num scope="col" { (tr(loc, "Rounds", "Rondas")) }
                th.num scope="col" { (tr(loc, "Handle", "Apostado")) }
                th.num scope="col" { (tr(loc, "Win reported", "Ganho declarado")) }
                th.num scope="col" { (tr(loc, "Win due", "Ganho devido")) }
                th.num scope="col" { (tr(loc, "Hold reported", "Margem declarada")) }
                th.num scope="col" { (tr(loc, "Hold due", "Margem devida")) }
                th.num scope="col" { (tr(loc, "Discrepancies", "Discrepâncias")) }
                th.num scope="col" { (tr(loc, "Amount", "Montante")) }
            } }
            tbody {
                @if p.rows.is_empty() {
                    tr { td colspan="11" { (tr(loc, "No round was settled on these gaming days.", "Nenhuma ronda foi liquidada nestes dias de jogo.")) } }
                }
                @for r in &p.rows {
                    tr.total[r.table_id == "*"] {
                        @if r.casino_id == "*" {
                            th scope="row" colspan="3" { (tr(loc, "All casinos", "Todos os casinos")) }
                        } @else if r.table_id == "*" {
                            th scope="row" { (r.casino_id) }
                            td colspan="2" { (tr(loc, "casino total", "total do casino")) }
                        } @else {
                            td { (r.casino_id) } td { (r.table_id) } td { (r.game) }
                        }
                        td.num { (ledger_fmt::integer(r.rounds as i64, loc)) }
                        td.num { (money(r.handle_cents)) }
                        td.num { (money(r.reported_win_cents)) }
                        td.num { (money(r.due_win_cents)) }
                        td.num { (pct(r.hold_bp)) }
                        td.num { (pct(r.due_hold_bp)) }
                        td.num { (r.discrepancies) }
                        td.num { (money(r.discrepancy_abs_cents)) }
                    }
                }
            }
        }
    }
}

fn slot_table(loc: Locale, p: &v1::ReportPeriod, id: &str) -> Markup {
    let money = |c: i64| ledger_fmt::money(c, loc);
    let pct =
        |bp: Option<i64>| bp.map_or_else(|| "–".to_string(), |bp| ledger_fmt::percent_bp(bp, loc));
    html! {
        table id=(id) {
            caption { (period_name(loc, p)) }
            thead { tr {
                th scope="col" { (tr(loc, "Casino", "Casino")) }
                th scope="col" { (tr(loc, "Machine", "Máquina")) }
                th scope="col" { (tr(loc, "Model", "Modelo")) }
                th.num scope="col" { (tr(loc, "Wagered", "Apostado")) }
                th.num scope="col" { (tr(loc, "Won", "Prémios")) }
                th.num scope="col" { (tr(loc, "Takings", "Receita")) }
                th.num scope="col" { (tr(loc, "Return", "Retorno")) }
                th.num scope="col" { (tr(loc, "Model's return", "Retorno do modelo")) }
                th.num scope="col" { (tr(loc, "Variance", "Desvio")) }
                th.num scope="col" { (tr(loc, "Variance (pp)", "Desvio (pp)")) }
            } }
            tbody {
                @if p.slot_rows.is_empty() {
                    tr { td colspan="10" { (tr(loc, "No slot machine.", "Nenhuma máquina.")) } }
                }
                @for r in &p.slot_rows {
                    tr.total[r.machine_id == "*"] {
                        @if r.machine_id == "*" {
                            th scope="row" { (r.casino_id) }
                            td colspan="2" { (tr(loc, "casino total", "total do casino")) }
                        } @else {
                            td { (r.casino_id) } td { (r.machine_id) } td { (r.model_id) }
                        }
                        td.num { (money(r.wagered_cents)) }
                        td.num { (money(r.won_cents)) }
                        td.num { (money(r.takings_cents)) }
                        td.num { (pct(r.actual_rtp_bp)) }
                        td.num { (pct(r.expected_rtp_bp)) }
                        td.num { (r.variance_cents.map_or_else(|| "–".to_string(), |v| ledger_fmt::money_signed(v, loc))) @if r.partial { " *" } }
                        td.num { (pct(r.variance_bp)) }
                    }
                }
            }
        }
    }
}

/// Significant events per machine on the gaming day `day` (the report's "day" period): counts
/// by kind, game starts and ends left out (they are the games, not events of note).
pub struct DayEvents {
    pub kinds: Vec<String>,
    /// (casino, machine, counts by kind)
    pub machines: Vec<(String, String, BTreeMap<String, u64>)>,
}

/// The kinds the events report counts: every significant kind but the games themselves.
fn noted_kinds() -> Vec<String> {
    jackpot::EVENT_KINDS
        .iter()
        .filter(|k| !k.starts_with("game_"))
        .map(|k| k.to_string())
        .collect()
}

/// Each machine of the day's slot rows, its significant events by kind in its casino's gaming
/// day: the counts GetReport gives with `event_counts` (one call, not one a machine).
fn day_events(report: &v1::Report) -> DayEvents {
    let mut out = DayEvents {
        kinds: Vec::new(),
        machines: Vec::new(),
    };
    let Some(day) = report.periods.iter().find(|p| p.name == "day") else {
        return out;
    };
    let noted = noted_kinds();
    let mut kinds = std::collections::BTreeSet::new();
    for r in day.slot_rows.iter().filter(|r| r.machine_id != "*") {
        let counts: BTreeMap<String, u64> = r
            .event_counts
            .iter()
            .filter(|(k, _)| noted.contains(k))
            .map(|(k, n)| (k.clone(), *n))
            .collect();
        kinds.extend(counts.keys().cloned());
        out.machines
            .push((r.casino_id.clone(), r.machine_id.clone(), counts));
    }
    out.kinds = kinds.into_iter().collect();
    out
}

fn events_table(loc: Locale, e: &DayEvents) -> Markup {
    html! {
        table #events-day {
            thead { tr {
                th scope="col" { (tr(loc, "Casino", "Casino")) }
                th scope="col" { (tr(loc, "Machine", "Máquina")) }
                @for k in &e.kinds { th.num scope="col" { (k.replace('_', " ")) } }
                th.num scope="col" { (tr(loc, "Total", "Total")) }
            } }
            tbody {
                @if e.machines.is_empty() {
                    tr { td colspan="2" { (tr(loc, "No slot machine.", "Nenhuma máquina.")) } }
                }
                @for (casino, machine, counts) in &e.machines {
                    tr {
                        td { (casino) } td { (machine) }
                        @for k in &e.kinds { td.num { (counts.get(k).copied().unwrap_or(0)) } }
                        td.num { (counts.values().sum::<u64>()) }
                    }
                }
            }
        }
    }
}

pub async fn reports_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<ReportQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let title = tr(loc, "Reports", "Relatórios");
    let report = match fetch(&app, &ctx, &q, CHART_DAYS).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let day = report
        .periods
        .first()
        .map(|p| p.first_day.clone())
        .unwrap_or_default();
    let series: Vec<(String, (i64, i64, i64, u64))> = report
        .periods
        .iter()
        .filter(|p| p.name == "gaming_day")
        .map(|p| (p.first_day.clone(), casino_totals(p)))
        .collect();
    let points: Vec<chart::Point> = series
        .iter()
        .map(|(d, (h, w, due, n))| chart::Point {
            label: d.get(5..).unwrap_or(d).to_string(),
            values: if *n == 0 {
                vec![None, None]
            } else {
                vec![Some(hold_bp(*w, *h)), Some(hold_bp(*due, *h))]
            },
        })
        .collect();
    let lines = [
        chart::Series {
            name: tr(loc, "hold reported", "margem declarada").into(),
            colour: "#1d4ed8",
        },
        chart::Series {
            name: tr(loc, "hold due", "margem devida").into(),
            colour: "#b45309",
        },
    ];
    let qs = format!("?day={}", url_encode(&day));
    let body = html! {
        form.filters method="get" action="/reports" {
            label for="day" { (tr(loc, "Gaming day", "Dia de jogo")) }
            input #day type="date" name="day" value=(day);
            button type="submit" { (tr(loc, "Show", "Mostrar")) }
        }
        p #gaming-day-rule { (tr(loc, "Gaming days of the ledger:", "Dias de jogo do registo:")) " " (report.gaming_day) ". "
            (tr(loc, "A round counts on the gaming day in which the ledger received its settlement.", "Uma ronda conta no dia de jogo em que o registo recebeu a sua liquidação.")) }
        p.downloads {
            a #report-csv href={"/reports.csv" (qs)} download { "CSV" } " "
            a #report-xlsx href={"/reports.xlsx" (qs)} download { "XLSX" }
        }
        h2 #hold-chart-title { (tr(loc, "Hold per gaming day, last 30 days", "Margem por dia de jogo, últimos 30 dias")) }
        ul.legend {
            @for s in &lines {
                li { svg.swatch viewBox="0 0 12 12" aria-hidden="true" { rect width="12" height="12" fill=(s.colour) {} } (s.name) }
            }
        }
        (chart::lines(tr(loc, "Hold per gaming day (%)", "Margem por dia de jogo (%)"), &lines, &points, &|bp| ledger_fmt::percent_bp(bp, loc)))
        table #hold-figures {
            caption { (tr(loc, "The chart's figures", "Os números do gráfico")) }
            thead { tr {
                th scope="col" { (tr(loc, "Gaming day", "Dia de jogo")) }
                th.num scope="col" { (tr(loc, "Rounds", "Rondas")) }
                th.num scope="col" { (tr(loc, "Handle", "Apostado")) }
                th.num scope="col" { (tr(loc, "Hold reported", "Margem declarada")) }
                th.num scope="col" { (tr(loc, "Hold due", "Margem devida")) }
            } }
            tbody {
                @for (d, (h, w, due, n)) in &series {
                    tr {
                        th scope="row" { (d) }
                        td.num { (ledger_fmt::integer(*n as i64, loc)) }
                        td.num { (ledger_fmt::money(*h, loc)) }
                        @if *n == 0 {
                            td.num { "–" } td.num { "–" }
                        } @else {
                            td.num { (ledger_fmt::percent_bp(hold_bp(*w, *h), loc)) }
                            td.num { (ledger_fmt::percent_bp(hold_bp(*due, *h), loc)) }
                        }
                    }
                }
            }
        }
        @for (i, p) in report.periods.iter().filter(|p| p.name != "gaming_day").enumerate() {
            h2 { (period_name(loc, p)) }
            (report_table(loc, p, ["report-day", "report-month", "report-year"].get(i).copied().unwrap_or("report-period")))
        }
        h2 #slots-title { (tr(loc, "Slot machines", "Máquinas de jogo")) }
        p #slots-rule { (tr(loc,
            "Meter increases the ledger received on these gaming days: won is the prizes meter plus jackpots paid, takings are wagered less won; the model's return is the approved pay table's plus its jackpot contributions; the variance is won less the prizes that return expects.",
            "Aumentos dos contadores que o registo recebeu nestes dias de jogo: prémios são o contador de prémios mais os jackpots pagos, a receita é o apostado menos os prémios; o retorno do modelo é o da tabela de pagamentos aprovada mais as contribuições para jackpots; o desvio são os prémios menos os que esse retorno prevê.")) }
        p.downloads {
            a #slots-csv href={"/reports/slots.csv" (qs)} download { "CSV" } " "
            a #slots-xlsx href={"/reports/slots.xlsx" (qs)} download { "XLSX" }
        }
        @for (i, p) in report.periods.iter().filter(|p| p.name != "gaming_day").enumerate() {
            (slot_table(loc, p, ["slots-day", "slots-month", "slots-year"].get(i).copied().unwrap_or("slots-period")))
        }
        p { a #events-link href={"/reports/events" (qs)} { (tr(loc, "Significant events of the gaming day, per machine", "Eventos significativos do dia de jogo, por máquina")) } }
    };
    respond(&ctx, StatusCode::OK, page(&app, &ctx, title, body))
}

/// The significant-events report of a gaming day: per machine of the day's slot rows, its
/// events by kind (GetReport with `event_counts`: one call for every machine).
pub async fn events_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<ReportQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let title = tr(loc, "Significant events", "Eventos significativos");
    let report = match fetch_with(&app, &ctx, &q, 0, true).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let day = report
        .periods
        .first()
        .map(|p| p.first_day.clone())
        .unwrap_or_default();
    let qs = format!("?day={}", url_encode(&day));
    let events = day_events(&report);
    let body = html! {
        form.filters method="get" action="/reports/events" {
            label for="day" { (tr(loc, "Gaming day", "Dia de jogo")) }
            input #day type="date" name="day" value=(day);
            button type="submit" { (tr(loc, "Show", "Mostrar")) }
        }
        p { (tr(loc, "Per machine, by kind (doors, power, faults, hand pays, progressives, link, software, configuration; game starts and ends are left out), in its casino's gaming day.", "Por máquina e tipo (portas, energia, avarias, pagamentos manuais, progressivos, ligação, software, configuração; inícios e fins de jogo não incluídos), no dia de jogo do seu casino.")) }
        p.downloads { a #events-csv href={"/reports/events.csv" (qs)} download { "CSV" } }
        (events_table(loc, &events))
        p { a href={"/reports" (qs)} { (tr(loc, "Reports", "Relatórios")) } }
    };
    respond(&ctx, StatusCode::OK, page(&app, &ctx, title, body))
}

pub async fn reports_csv(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<ReportQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    match fetch(&app, &ctx, &q, 0).await {
        Err(r) => r,
        Ok(rep) => csv_download("report.csv", export::report_csv(&rep)),
    }
}

/// The slot machines' part of the report as CSV.
pub async fn slots_csv(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<ReportQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    match fetch(&app, &ctx, &q, 0).await {
        Err(r) => r,
        Ok(rep) => csv_download("slot-machines.csv", export::slot_report_csv(&rep)),
    }
}

/// The gaming day's significant events as CSV: a row per machine and kind with a count.
pub async fn events_csv(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<ReportQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let rep = match fetch_with(&app, &ctx, &q, 0, true).await {
        Err(r) => return r,
        Ok(r) => r,
    };
    let day = rep
        .periods
        .iter()
        .find(|p| p.name == "day")
        .map(|p| p.first_day.clone())
        .unwrap_or_default();
    csv_download(
        "significant-events.csv",
        export::events_csv(&day, &day_events(&rep).machines),
    )
}

/// The slot machines' part of the report as XLSX.
pub async fn slots_xlsx(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<ReportQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let rep = match fetch(&app, &ctx, &q, 0).await {
        Err(r) => return r,
        Ok(r) => r,
    };
    xlsx_download(
        "slot-machines.xlsx",
        tokio::task::spawn_blocking(move || export::slot_report_xlsx(&rep)).await,
    )
}

pub(super) fn csv_download(name: &str, body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        body,
    )
        .into_response()
}

fn xlsx_download(
    name: &str,
    made: Result<Result<Vec<u8>, rust_xlsxwriter::XlsxError>, tokio::task::JoinError>,
) -> Response {
    match made {
        Ok(Ok(bytes)) => (
            [
                (
                    header::CONTENT_TYPE,
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet".to_string(),
                ),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{name}\""),
                ),
            ],
            bytes,
        )
            .into_response(),
        Ok(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, format!("xlsx: {e}\n")).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("xlsx: {e}\n")).into_response(),
    }
}

pub async fn reports_xlsx(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<ReportQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let rep = match fetch(&app, &ctx, &q, 0).await {
        Err(r) => return r,
        Ok(r) => r,
    };
    match tokio::task::spawn_blocking(move || export::report_xlsx(&rep)).await {
        Ok(Ok(bytes)) => (
            [
                (
                    header::CONTENT_TYPE,
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                ),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"report.xlsx\"",
                ),
            ],
            bytes,
        )
            .into_response(),
        Ok(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, format!("xlsx: {e}\n")).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("xlsx: {e}\n")).into_response(),
    }
}
