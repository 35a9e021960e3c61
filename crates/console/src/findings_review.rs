//! A finding's page and its review (issue 41): `GET /finding?id=…` shows the finding
//! (Audit.GetFinding), its status and its review history; `POST /finding/review` (CSRF-checked)
//! records a review with Audit.ReviewFinding, which ledgerd writes into the chain for the
//! account's own principal, then shows the finding again.

use std::sync::Arc;

use axum::extract::{ConnectInfo, Form, Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use ledger_core::proto as v1;
use ledger_core::review::{MAX_COMMENT_CHARS, action_name, parse_action};
use ledger_fmt::Locale;
use maud::{Markup, html};
use serde::Deserialize;

use super::{
    App, Ctx, csrf_ok, csrf_refused, findings_table, ledger_error, page, respond, signed_in,
    status_code, tr, url_encode,
};
use crate::server::Peer;

/// The review statuses the Findings filter offers: (value, English, Portuguese).
pub(super) const STATUSES: [(&str, v1::FindingStatus, &str, &str); 4] = [
    ("open", v1::FindingStatus::Open, "open", "aberta"),
    (
        "acknowledged",
        v1::FindingStatus::Acknowledged,
        "acknowledged",
        "reconhecida",
    ),
    (
        "disputed",
        v1::FindingStatus::Disputed,
        "disputed",
        "contestada",
    ),
    (
        "resolved",
        v1::FindingStatus::Resolved,
        "resolved",
        "resolvida",
    ),
];

/// A status for people.
pub(super) fn status_label(loc: Locale, s: i32) -> &'static str {
    STATUSES
        .iter()
        .find(|(_, v, _, _)| *v as i32 == s)
        .map_or("–", |(_, _, en, pt)| tr(loc, en, pt))
}

/// The status filter's value as a request field, or what is wrong with it.
pub(super) fn status_filter(loc: Locale, v: &str) -> Result<i32, String> {
    match v {
        "" => Ok(v1::FindingStatus::Unspecified as i32),
        v => STATUSES
            .iter()
            .find(|(n, _, _, _)| *n == v)
            .map(|(_, s, _, _)| *s as i32)
            .ok_or_else(|| {
                format!(
                    "{}: {v:?}",
                    tr(loc, "Unknown status", "Estado desconhecido")
                )
            }),
    }
}

/// The page of one finding.
pub(super) fn finding_href(id: &str) -> String {
    format!("/finding?id={}", url_encode(id))
}

fn action_label(loc: Locale, a: v1::FindingAction) -> &'static str {
    match a {
        v1::FindingAction::Acknowledge => tr(loc, "Acknowledge", "Reconhecer"),
        v1::FindingAction::Dispute => tr(loc, "Dispute", "Contestar"),
        v1::FindingAction::Resolve => tr(loc, "Resolve", "Resolver"),
        v1::FindingAction::Unspecified => "–",
    }
}

#[derive(Deserialize)]
pub(super) struct FindingQuery {
    #[serde(default)]
    id: String,
}

#[derive(Deserialize)]
pub(super) struct ReviewForm {
    csrf: Option<String>,
    #[serde(default)]
    id: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    comment: String,
}

fn history_table(app: &App, loc: Locale, history: &[v1::FindingReview]) -> Markup {
    html! {
        @if history.is_empty() {
            p #history-empty { (tr(loc, "Never reviewed.", "Nunca revista.")) }
        } @else {
            table #history {
                caption { (tr(loc, "Review history (recorded in the ledger)", "Histórico de revisão (registado no registo)")) }
                thead { tr {
                    th scope="col" { (tr(loc, "When", "Quando")) }
                    th scope="col" { (tr(loc, "Action", "Ação")) }
                    th scope="col" { (tr(loc, "By", "Por")) }
                    th scope="col" { (tr(loc, "Comment", "Comentário")) }
                    th.num scope="col" { (tr(loc, "Ledger entry", "Entrada do registo")) }
                } }
                tbody {
                    @for h in history {
                        @let r = h.record.clone().unwrap_or_default();
                        tr data-action=(action_name(v1::FindingAction::try_from(r.action).unwrap_or_default())) {
                            td { (ledger_fmt::datetime(h.at_ms, app.tz, loc)) }
                            td { (action_label(loc, v1::FindingAction::try_from(r.action).unwrap_or_default())) }
                            td { (r.principal) " (" (r.principal_role) ")" }
                            td { (r.comment) }
                            td.num.entry { (h.index) }
                        }
                    }
                }
            }
        }
    }
}

fn review_form(ctx: &Ctx, id: &str, status: i32, comment: &str) -> Markup {
    let loc = ctx.loc;
    if status == v1::FindingStatus::Resolved as i32 {
        return html! { p { (tr(loc, "This finding is resolved: it takes no further review.", "Esta constatação está resolvida: não admite mais revisões.")) } };
    }
    html! {
        form.stack #review method="post" action="/finding/review" {
            input type="hidden" name="csrf" value=(ctx.csrf);
            input type="hidden" name="id" value=(id);
            fieldset {
                legend { (tr(loc, "Review", "Revisão")) }
                @for a in [v1::FindingAction::Acknowledge, v1::FindingAction::Dispute, v1::FindingAction::Resolve] {
                    label { input type="radio" name="action" value=(action_name(a)) required; " " (action_label(loc, a)) }
                }
            }
            label for="comment" { (tr(loc, "Comment (required to resolve)", "Comentário (obrigatório para resolver)")) }
            textarea #comment name="comment" rows="4" cols="80" maxlength=(MAX_COMMENT_CHARS) { (comment) }
            button type="submit" { (tr(loc, "Record the review in the ledger", "Registar a revisão no registo")) }
        }
    }
}

/// The finding's page, with `notice` (an error of a review just refused) above the form.
async fn render(
    app: &App,
    ctx: &Ctx,
    id: &str,
    notice: Option<(StatusCode, Markup)>,
    comment: &str,
) -> Response {
    let loc = ctx.loc;
    let title = tr(loc, "Finding", "Constatação");
    let mut audit = ctx.ledger(app).audit();
    let (status, body) = match audit
        .get_finding(v1::GetFindingRequest {
            finding_id: id.to_string(),
        })
        .await
    {
        Err(e) => (status_code(&e), ledger_error(loc, &e)),
        Ok(d) => {
            let d = d.into_inner();
            let f = d.finding.unwrap_or_default();
            let (code, notice) = notice.unwrap_or((StatusCode::OK, html! {}));
            (
                code,
                html! {
                    p #finding-status { (tr(loc, "Status:", "Estado:")) " " strong { (status_label(loc, f.status)) } " · " code { (f.id) } }
                    (findings_table(app, loc, std::slice::from_ref(&f)))
                    (history_table(app, loc, &d.history))
                    (notice)
                    (review_form(ctx, &f.id, f.status, comment))
                },
            )
        }
    };
    let body =
        html! { p { a href="/findings" { "← " (tr(loc, "Findings", "Constatações")) } } (body) };
    respond(ctx, status, page(app, ctx, title, body))
}

pub(super) async fn finding_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<FindingQuery>,
) -> Response {
    let ctx = match signed_in(&app, &headers, peer, &uri) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    render(&app, &ctx, &q.id, None, "").await
}

pub(super) async fn review(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Form(f): Form<ReviewForm>,
) -> Response {
    let ctx = match signed_in(&app, &headers, peer, &uri) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    if !csrf_ok(&ctx, f.csrf.as_deref()) {
        return csrf_refused(&app, &ctx, peer);
    }
    let loc = ctx.loc;
    let Some(action) = parse_action(&f.action) else {
        let msg =
            html! { p.error role="alert" { (tr(loc, "Choose an action.", "Escolha uma ação.")) } };
        return render(
            &app,
            &ctx,
            &f.id,
            Some((StatusCode::BAD_REQUEST, msg)),
            &f.comment,
        )
        .await;
    };
    // Line breaks as the browser sends them (CR LF) are kept as LF.
    let comment = f.comment.replace("\r\n", "\n");
    let result = ctx
        .ledger(&app)
        .audit()
        .review_finding(v1::ReviewFindingRequest {
            finding_id: f.id.clone(),
            action: action as i32,
            comment: comment.clone(),
        })
        .await;
    match result {
        Ok(r) => {
            tracing::info!(account = %app.cfg.accounts[ctx.account].name, finding = %f.id,
                action = action_name(action), index = r.get_ref().index, "finding reviewed");
            let mut resp = Redirect::to(&finding_href(&f.id)).into_response();
            *resp.status_mut() = StatusCode::SEE_OTHER;
            resp
        }
        Err(e) => {
            let code = match e.code() {
                tonic::Code::FailedPrecondition => StatusCode::CONFLICT,
                _ => status_code(&e),
            };
            let msg = ledger_error(loc, &e);
            render(&app, &ctx, &f.id, Some((code, msg)), &comment).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{app_with, req, send};
    use super::*;
    use crate::web::SESSION_COOKIE;

    /// The status filter becomes the request's status, names itself when wrong, in the user's
    /// language, and the next page keeps it.
    #[test]
    fn the_status_filter_is_checked_and_kept() {
        assert_eq!(
            status_filter(Locale::En, "resolved"),
            Ok(v1::FindingStatus::Resolved as i32)
        );
        assert_eq!(status_filter(Locale::En, ""), Ok(0));
        let e = status_filter(Locale::PtPt, "closed").unwrap_err();
        assert!(e.starts_with("Estado desconhecido"), "{e}");
        assert_eq!(
            status_label(Locale::PtPt, v1::FindingStatus::Disputed as i32),
            "contestada"
        );
        assert_eq!(
            status_label(Locale::En, v1::FindingStatus::Open as i32),
            "open"
        );
    }

    /// A review without this session's CSRF token is refused before ledgerd is asked, and a
    /// review needs a session at all.
    #[tokio::test]
    async fn a_review_needs_the_session_and_its_csrf_token() {
        let (app, r) = app_with("");
        let (id, _) = app.auth.create(0, std::time::Instant::now());
        let cookies = format!("{SESSION_COOKIE}={id}");
        for form in [
            "id=F1&action=acknowledge",
            "csrf=&id=F1&action=acknowledge",
            "csrf=forged&id=F1&action=resolve&comment=x",
        ] {
            let (s, _, body) = send(&r, req("POST", "/finding/review", &cookies, form)).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{form}");
            assert!(body.contains("security token"), "{body}");
        }
        let (s, _, _) = send(
            &r,
            req(
                "POST",
                "/finding/review",
                "",
                "csrf=x&id=F1&action=acknowledge",
            ),
        )
        .await;
        assert_eq!(s, StatusCode::SEE_OTHER, "to the sign-in page");
    }
}
