//! The Overview's mirrors: the ledgerd the console reads when it is itself a mirror (a regulator's
//! console over its mirror), and the mirrors of `[[mirrors]]` (a casino's console over its ledger,
//! naming the mirrors that copy it). Each answers `Mirror.GetStatus` to the signed-in account's own
//! certificate; nothing is shown where there is no mirror.
//!
//! Lag in entries: what the source holds less what the mirror holds. Lag in time: for a mirror of
//! the console's own ledger, the age of the oldest entry it lacks (its `received_at_ms` here,
//! `Query.GetEntry`): exact. For the console's ledgerd as a mirror, whose source is elsewhere, the
//! age of the newest entry it holds while it lacks some: an upper bound (shown "≤").

use super::*;

/// A mirror's figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Figures {
    /// Entries it holds, verified and durable.
    pub held: u64,
    pub lag_entries: u64,
    /// Milliseconds behind, and whether that is an upper bound; None: not known (the entry that
    /// dates it could not be read).
    pub lag_ms: Option<(i64, bool)>,
    pub alarms: u64,
    pub connected: bool,
    pub halted: bool,
}

pub(super) struct Row {
    pub name: String,
    pub address: String,
    pub figures: Result<Figures, tonic::Status>,
}

fn entry_age(
    now_ms: i64,
    e: Result<tonic::Response<v1::ChainEntry>, tonic::Status>,
) -> Option<i64> {
    e.ok()
        .map(|e| now_ms.saturating_sub(e.get_ref().received_at_ms).max(0))
}

/// The mirrors the account can see (none: no row at all). `source_length`: the console's own
/// ledger's length, just read (the configured mirrors copy it).
pub(super) async fn rows(loc: Locale, l: &Ledger, source_length: Option<u64>) -> Vec<Row> {
    let now = chrono::Utc::now().timestamp_millis();
    let mut out = Vec::new();
    // The ledgerd itself, when it is a mirror. Not one (UNIMPLEMENTED) or not for this account:
    // no row.
    match l.mirror().get_status(v1::GetMirrorStatusRequest {}).await {
        Ok(s) => {
            let s = s.into_inner();
            let lag = s.source_entries.saturating_sub(s.mirrored_entries);
            let lag_ms = if lag == 0 && s.connected {
                Some((0, false))
            } else if s.mirrored_entries == 0 {
                None
            } else {
                let newest = l
                    .query()
                    .get_entry(v1::GetEntryRequest {
                        index: s.mirrored_entries - 1,
                    })
                    .await;
                entry_age(now, newest).map(|a| (a, true))
            };
            out.push(Row {
                name: tr(loc, "This ledger (a mirror)", "Este registo (um espelho)").into(),
                address: s.source.clone(),
                figures: Ok(Figures {
                    held: s.mirrored_entries,
                    lag_entries: lag,
                    lag_ms,
                    alarms: s.alarms,
                    connected: s.connected,
                    halted: s.halted,
                }),
            });
        }
        Err(e)
            if matches!(
                e.code(),
                tonic::Code::Unimplemented | tonic::Code::PermissionDenied
            ) => {}
        Err(e) => out.push(Row {
            name: tr(loc, "This ledger", "Este registo").into(),
            address: String::new(),
            figures: Err(e),
        }),
    }
    for m in &l.mirrors {
        let figures = match m.mirror().get_status(v1::GetMirrorStatusRequest {}).await {
            Err(e) => Err(e),
            Ok(s) => {
                let s = s.into_inner();
                let source = source_length.unwrap_or(0).max(s.source_entries);
                let lag = source.saturating_sub(s.mirrored_entries);
                let lag_ms = if lag == 0 {
                    Some((0, false))
                } else {
                    // The oldest entry it lacks, as this ledger received it.
                    let oldest = l
                        .query()
                        .get_entry(v1::GetEntryRequest {
                            index: s.mirrored_entries,
                        })
                        .await;
                    entry_age(now, oldest).map(|a| (a, false))
                };
                Ok(Figures {
                    held: s.mirrored_entries,
                    lag_entries: lag,
                    lag_ms,
                    alarms: s.alarms,
                    connected: s.connected,
                    halted: s.halted,
                })
            }
        };
        out.push(Row {
            name: m.name.clone(),
            address: m.address.clone(),
            figures,
        });
    }
    out
}

/// Milliseconds as seconds with one decimal: `12.3 s` / `12,3 s`.
fn seconds(ms: i64, loc: Locale) -> String {
    let tenths = ms.max(0) / 100;
    let whole = ledger_fmt::integer(tenths / 10, loc);
    let sep = match loc {
        Locale::En => '.',
        Locale::PtPt => ',',
    };
    format!("{whole}{sep}{}\u{a0}s", tenths % 10)
}

/// The Overview's section: nothing at all without rows.
pub(super) fn section(loc: Locale, rows: &[Row]) -> Markup {
    if rows.is_empty() {
        return html! {};
    }
    html! {
        h2 #mirrors-title { (tr(loc, "Mirrors", "Espelhos")) }
        table #mirrors aria-labelledby="mirrors-title" {
            thead { tr {
                th scope="col" { (tr(loc, "Mirror", "Espelho")) }
                th scope="col" { (tr(loc, "Address (of its source, for this ledger)", "Endereço (da sua origem, para este registo)")) }
                th.num scope="col" { (tr(loc, "Position (entries held)", "Posição (entradas guardadas)")) }
                th.num scope="col" { (tr(loc, "Lag (entries)", "Atraso (entradas)")) }
                th.num scope="col" { (tr(loc, "Lag (time)", "Atraso (tempo)")) }
                th.num scope="col" { (tr(loc, "Alarms", "Alarmes")) }
                th scope="col" { (tr(loc, "State", "Estado")) }
            } }
            tbody {
                @for r in rows {
                    tr {
                        th scope="row" { (r.name) }
                        td { code { (r.address) } }
                        @match &r.figures {
                            Ok(f) => {
                                td.num.position { (ledger_fmt::integer(f.held as i64, loc)) }
                                td.num.lag-entries.differs[f.lag_entries > 0] { (ledger_fmt::integer(f.lag_entries as i64, loc)) }
                                td.num.lag-time {
                                    @match f.lag_ms {
                                        Some((ms, true)) => { "≤ " (seconds(ms, loc)) }
                                        Some((ms, false)) => { (seconds(ms, loc)) }
                                        None => { (tr(loc, "unknown", "desconhecido")) }
                                    }
                                }
                                td.num.alarms.differs[f.alarms > 0] { (f.alarms) }
                                td {
                                    @if f.halted { span.differs { (tr(loc, "halted on an alarm", "parado num alarme")) } }
                                    @else if f.connected { (tr(loc, "following", "a seguir")) }
                                    @else { span.differs { (tr(loc, "not connected to its source", "sem ligação à origem")) } }
                                }
                            }
                            Err(e) => {
                                td colspan="5" { (ledger_error(loc, e)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, f: Result<Figures, tonic::Status>) -> Row {
        Row {
            name: name.into(),
            address: "https://m:1".into(),
            figures: f,
        }
    }

    #[test]
    fn no_mirror_no_section() {
        assert_eq!(section(Locale::En, &[]).into_string(), "");
    }

    #[test]
    fn each_mirror_shows_its_position_lag_and_alarms() {
        let behind = Figures {
            held: 1_234_567,
            lag_entries: 12,
            lag_ms: Some((3_456, false)),
            alarms: 2,
            connected: true,
            halted: false,
        };
        let own = Figures {
            held: 10,
            lag_entries: 0,
            lag_ms: Some((0, false)),
            alarms: 0,
            connected: false,
            halted: false,
        };
        let bound = Figures {
            lag_ms: Some((61_000, true)),
            ..own.clone()
        };
        let rows = [
            row("reg", Ok(behind)),
            row("own", Ok(own)),
            row("far", Ok(bound)),
            row(
                "gone",
                Err(tonic::Status::unavailable("connection refused")),
            ),
        ];
        let en = section(Locale::En, &rows).into_string();
        assert!(en.contains(r#"<table id="mirrors""#), "{en}");
        assert!(
            en.contains(r#"<td class="num position">1,234,567</td>"#),
            "{en}"
        );
        assert!(
            en.contains(r#"<td class="num lag-entries differs">12</td>"#),
            "{en}"
        );
        assert!(
            en.contains("<td class=\"num lag-time\">3.4\u{a0}s</td>"),
            "{en}"
        );
        assert!(
            en.contains(r#"<td class="num alarms differs">2</td>"#),
            "{en}"
        );
        assert!(en.contains(r#"<td class="num lag-entries">0</td>"#), "{en}");
        assert!(
            en.contains("<td class=\"num lag-time\">≤ 61.0\u{a0}s</td>"),
            "{en}"
        );
        assert!(en.contains("not connected to its source"), "{en}");
        assert!(en.contains("connection refused"), "{en}");
        let pt = section(Locale::PtPt, &rows).into_string();
        assert!(
            pt.contains(&ledger_fmt::integer(1_234_567, Locale::PtPt)),
            "{pt}"
        );
        assert!(pt.contains("3,4\u{a0}s"), "{pt}");
        assert!(pt.contains("Espelhos"), "{pt}");
    }
}
