//! The console's HTTP side: routes, sign-in, pages.
//!
//! Every page but sign-in needs a session; every POST checks the session's CSRF token. The data
//! comes from ledgerd through the signed-in account's own gRPC channel ([`crate::ledger`]), so an
//! account sees exactly what its ledgerd principal may read: each page names the RPCs it calls,
//! and `ledgerd::access::RULES` says who may call those.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use axum::Router;
use axum::extract::{ConnectInfo, Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use chrono::{NaiveDate, TimeZone};
use ledger_core::proto as v1;
use ledger_fmt::{Locale, Tz};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;

use crate::auth::{Auth, SignIn, tokens_equal};
use crate::chart;
use crate::config::Config;
use crate::export;
use crate::ledger::{Ledger, findings_upto};
use crate::server::Peer;

pub const SESSION_COOKIE: &str = "console_session";
pub const LOGIN_COOKIE: &str = "console_login";
pub const LANG_COOKIE: &str = "console_lang";
const CSS: &str = include_str!("console.css");
/// Findings on one page of the Findings page.
pub const PAGE: u32 = 50;
/// The most findings an export or the overview's chart reads.
pub const EXPORT_MAX: usize = 100_000;

pub struct App {
    pub cfg: Config,
    pub auth: Auth,
    pub ledgers: Vec<Ledger>,
    pub tz: Tz,
    pub default_locale: Locale,
    /// HTTPS: cookies are `Secure` and HSTS is sent.
    pub https: bool,
}

impl App {
    pub fn new(cfg: Config, ledgers: Vec<Ledger>) -> App {
        App {
            auth: Auth::new(&cfg.session, &cfg.lockout),
            tz: cfg.tz(),
            default_locale: cfg.locale(),
            https: !cfg.plaintext,
            ledgers,
            cfg,
        }
    }
}

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(overview))
        .route("/signin", get(signin_page).post(signin))
        .route("/signout", post(signout))
        .route("/lang/{tag}", get(set_language))
        .route("/findings", get(findings_page))
        .route("/findings.csv", get(findings_csv))
        .route("/findings.xlsx", get(findings_xlsx))
        .route("/finding", get(findings_review::finding_page))
        .route("/finding/review", post(findings_review::review))
        .route("/round", get(round_page))
        .route("/devices", get(devices_page))
        .route("/device", get(device_page))
        .route("/jackpots", get(jackpots_page))
        .route("/jackpot", get(jackpots::pool_page))
        .route("/verify", get(verify_page).post(verify))
        .route("/round/evidence", get(evidence::round_evidence))
        .route(
            "/verify/evidence",
            post(evidence::verify_evidence).layer(axum::extract::DefaultBodyLimit::max(
                evidence::MAX_BUNDLE_BYTES,
            )),
        )
        .route("/reports", get(reports::reports_page))
        .route("/reports.csv", get(reports::reports_csv))
        .route("/reports.xlsx", get(reports::reports_xlsx))
        .route("/reports/slots.csv", get(reports::slots_csv))
        .route("/reports/slots.xlsx", get(reports::slots_xlsx))
        .route("/reports/events", get(reports::events_page))
        .route("/reports/events.csv", get(reports::events_csv))
        .route("/assets/console.css", get(css))
        .route("/healthz", get(healthz))
        .layer(axum::middleware::map_response_with_state(
            app.clone(),
            security_headers,
        ))
        .with_state(app)
}

async fn security_headers(State(app): State<Arc<App>>, mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if app.https {
        h.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    r
}

// ------------------------------------------------------------------------------ small helpers

/// `en` or `pt` by locale.
fn tr(loc: Locale, en: &'static str, pt: &'static str) -> &'static str {
    match loc {
        Locale::En => en,
        Locale::PtPt => pt,
    }
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn set_cookie(app: &App, name: &str, value: &str, path: &str, max_age: Option<i64>) -> String {
    let mut c = format!("{name}={value}; Path={path}; HttpOnly; SameSite=Strict");
    if app.https {
        c.push_str("; Secure");
    }
    if let Some(a) = max_age {
        c.push_str(&format!("; Max-Age={a}"));
    }
    c
}

/// A local path to go back to after signing in or switching language (never another site).
fn local_path(next: Option<&str>) -> String {
    match next {
        Some(n)
            if n.starts_with('/')
                && !n.starts_with("//")
                && !n.contains('\\')
                && !n.chars().any(char::is_control) =>
        {
            n.to_string()
        }
        _ => "/".to_string(),
    }
}

fn locale(app: &App, headers: &HeaderMap) -> Locale {
    cookie(headers, LANG_COOKIE)
        .and_then(|c| c.parse().ok())
        .or_else(|| {
            headers
                .get(header::ACCEPT_LANGUAGE)
                .and_then(|v| v.to_str().ok())
                .and_then(Locale::from_accept_language)
        })
        .unwrap_or(app.default_locale)
}

/// The signed-in user of a request.
pub struct Ctx {
    pub account: usize,
    pub session: String,
    pub csrf: String,
    pub loc: Locale,
    pub path: String,
    /// A session cookie to set (a session opened for a reverse proxy's user).
    pub new_cookie: Option<String>,
}

impl Ctx {
    fn ledger<'a>(&self, app: &'a App) -> &'a Ledger {
        &app.ledgers[self.account]
    }
}

fn account_index(app: &App, name: &str) -> Option<usize> {
    app.cfg.accounts.iter().position(|a| a.name == name)
}

/// The request's session, or a redirect to the sign-in page. A trusted reverse proxy's header
/// names the account instead, and gets a session of its own (for the CSRF token).
fn signed_in(
    app: &App,
    headers: &HeaderMap,
    peer: SocketAddr,
    uri: &Uri,
) -> Result<Ctx, Box<Response>> {
    let now = Instant::now();
    let loc = locale(app, headers);
    let path = uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let from_cookie = cookie(headers, SESSION_COOKIE)
        .and_then(|id| app.auth.get(id, now).map(|s| (id.to_string(), s)));
    if let Some(proxy) = &app.cfg.proxy
        && let Some(user) = headers.get(proxy.header.as_str())
    {
        if !proxy.trusted.contains(&peer.ip()) {
            tracing::warn!(%peer, header = %proxy.header, "sign-in header from an untrusted address ignored");
        } else {
            let name = user.to_str().unwrap_or("");
            let Some(account) = account_index(app, name) else {
                tracing::warn!(%peer, account = name, outcome = "unknown", "proxy sign-in refused");
                return Err(Box::new(error_page(
                    app,
                    loc,
                    StatusCode::FORBIDDEN,
                    tr(
                        loc,
                        "Your single sign-on account has no console account.",
                        "A sua conta de início de sessão único não tem conta na consola.",
                    ),
                )));
            };
            if let Some((id, s)) = from_cookie
                && s.account == account
            {
                return Ok(Ctx {
                    account,
                    session: id,
                    csrf: s.csrf,
                    loc,
                    path,
                    new_cookie: None,
                });
            }
            let (id, s) = app.auth.create(account, now);
            app.auth.counters.ok.fetch_add(1, Ordering::Relaxed);
            tracing::info!(%peer, account = name, via = "proxy", outcome = "ok",
                signins_ok = app.auth.counters.ok.load(Ordering::Relaxed), "sign-in");
            return Ok(Ctx {
                account,
                new_cookie: Some(set_cookie(app, SESSION_COOKIE, &id, "/", None)),
                session: id,
                csrf: s.csrf,
                loc,
                path,
            });
        }
    }
    match from_cookie {
        Some((id, s)) => Ok(Ctx {
            account: s.account,
            session: id,
            csrf: s.csrf,
            loc,
            path,
            new_cookie: None,
        }),
        None => {
            let next = url_encode(&path);
            Err(Box::new(
                Redirect::to(&format!("/signin?next={next}")).into_response(),
            ))
        }
    }
}

fn url_encode(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

fn respond(ctx: &Ctx, status: StatusCode, body: Markup) -> Response {
    let mut r = (status, body).into_response();
    if let Some(c) = &ctx.new_cookie
        && let Ok(v) = HeaderValue::from_str(c)
    {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

fn status_code(s: &tonic::Status) -> StatusCode {
    match s.code() {
        tonic::Code::InvalidArgument | tonic::Code::OutOfRange => StatusCode::BAD_REQUEST,
        tonic::Code::NotFound => StatusCode::NOT_FOUND,
        tonic::Code::PermissionDenied => StatusCode::FORBIDDEN,
        _ => StatusCode::BAD_GATEWAY,
    }
}

/// What ledgerd said, for people.
fn ledger_error(loc: Locale, s: &tonic::Status) -> Markup {
    let what = match s.code() {
        tonic::Code::PermissionDenied => tr(
            loc,
            "The ledger does not allow your account this:",
            "O registo não permite isto à sua conta:",
        ),
        tonic::Code::NotFound => tr(loc, "Not found:", "Não encontrado:"),
        tonic::Code::InvalidArgument => tr(loc, "Not a valid request:", "Pedido inválido:"),
        tonic::Code::Unavailable => tr(
            loc,
            "The ledger cannot be reached:",
            "Não é possível contactar o registo:",
        ),
        _ => tr(loc, "The ledger answered:", "O registo respondeu:"),
    };
    html! { p.error role="alert" { (what) " " (s.message()) " (" (format!("{:?}", s.code())) ")" } }
}

// -------------------------------------------------------------------------------- the layout

const NAV: [(&str, &str, &str); 6] = [
    ("/", "Overview", "Visão geral"),
    ("/findings", "Findings", "Constatações"),
    ("/devices", "Devices", "Dispositivos"),
    ("/jackpots", "Jackpots", "Jackpots"),
    ("/verify", "Verify", "Verificar"),
    ("/reports", "Reports", "Relatórios"),
];

fn shell(loc: Locale, title: &str, header_inner: Markup, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang=(loc.tag()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · " (tr(loc, "Compliance console", "Consola de conformidade")) }
                link rel="stylesheet" href="/assets/console.css";
            }
            body {
                a.skip href="#main" { (tr(loc, "Skip to content", "Saltar para o conteúdo")) }
                header { (header_inner) }
                main #main tabindex="-1" {
                    h1 { (title) }
                    (body)
                }
            }
        }
    }
}

fn lang_links(loc: Locale, path: &str) -> Markup {
    html! {
        nav aria-label=(tr(loc, "Language", "Idioma")) {
            ul {
                @for l in Locale::ALL {
                    li {
                        @if l == loc {
                            span aria-current="true" lang=(l.tag()) { (lang_name(l)) }
                        } @else {
                            a href={"/lang/" (l.tag()) "?next=" (url_encode(path))} lang=(l.tag()) hreflang=(l.tag()) { (lang_name(l)) }
                        }
                    }
                }
            }
        }
    }
}

fn lang_name(l: Locale) -> &'static str {
    match l {
        Locale::En => "English",
        Locale::PtPt => "Português",
    }
}

fn page(app: &App, ctx: &Ctx, title: &str, body: Markup) -> Markup {
    let loc = ctx.loc;
    let current = ctx.path.split('?').next().unwrap_or("/");
    let account = &app.cfg.accounts[ctx.account];
    let header_inner = html! {
        strong { (tr(loc, "Compliance console", "Consola de conformidade")) }
        nav aria-label=(tr(loc, "Main", "Principal")) {
            ul {
                @for (href, en, pt) in NAV {
                    li {
                        @if current == href {
                            a href=(href) aria-current="page" { (tr(loc, en, pt)) }
                        } @else {
                            a href=(href) { (tr(loc, en, pt)) }
                        }
                    }
                }
            }
        }
        div.who {
            (lang_links(loc, &ctx.path))
            span { (account.display_name) " (" (account.name) ")" }
            form method="post" action="/signout" {
                input type="hidden" name="csrf" value=(ctx.csrf);
                button.link type="submit" { (tr(loc, "Sign out", "Terminar sessão")) }
            }
        }
    };
    shell(loc, title, header_inner, body)
}

fn error_page(app: &App, loc: Locale, status: StatusCode, msg: &str) -> Response {
    let _ = app;
    let body = html! { p.error role="alert" { (msg) } p { a href="/" { (tr(loc, "Back to the overview", "Voltar à visão geral")) } } };
    (
        status,
        shell(loc, tr(loc, "Error", "Erro"), lang_links(loc, "/"), body),
    )
        .into_response()
}

// ----------------------------------------------------------------------------------- sign-in

#[derive(Deserialize)]
struct NextQuery {
    next: Option<String>,
}

async fn css() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        CSS,
    )
        .into_response()
}

async fn healthz() -> &'static str {
    "ok\n"
}

fn signin_form(app: &App, loc: Locale, next: &str, error: Option<&str>) -> Response {
    let token = crate::auth::random_token();
    let body = html! {
        @if let Some(e) = error { p.error role="alert" #signin-error { (e) } }
        form.stack method="post" action="/signin" {
            input type="hidden" name="csrf" value=(token);
            input type="hidden" name="next" value=(next);
            label for="name" { (tr(loc, "Account", "Conta")) }
            input #name name="name" type="text" autocomplete="username" required autofocus;
            label for="password" { (tr(loc, "Password", "Palavra-passe")) }
            input #password name="password" type="password" autocomplete="current-password" required;
            button type="submit" { (tr(loc, "Sign in", "Iniciar sessão")) }
        }
    };
    let status = if error.is_some() {
        StatusCode::UNAUTHORIZED
    } else {
        StatusCode::OK
    };
    let mut r = (
        status,
        shell(
            loc,
            tr(loc, "Sign in", "Iniciar sessão"),
            html! { strong { (tr(loc, "Compliance console", "Consola de conformidade")) } (lang_links(loc, &format!("/signin?next={}", url_encode(next)))) },
            body,
        ),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&set_cookie(app, LOGIN_COOKIE, &token, "/signin", None)) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

async fn signin_page(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(q): Query<NextQuery>,
) -> Response {
    let next = local_path(q.next.as_deref());
    if cookie(&headers, SESSION_COOKIE).is_some_and(|id| app.auth.get(id, Instant::now()).is_some())
    {
        return Redirect::to(&next).into_response();
    }
    signin_form(&app, locale(&app, &headers), &next, None)
}

#[derive(Deserialize)]
struct SignInForm {
    name: String,
    password: String,
    csrf: String,
    next: Option<String>,
}

async fn signin(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    Form(f): Form<SignInForm>,
) -> Response {
    let loc = locale(&app, &headers);
    let next = local_path(f.next.as_deref());
    if !cookie(&headers, LOGIN_COOKIE).is_some_and(|c| tokens_equal(c, &f.csrf)) {
        tracing::warn!(%peer, "sign-in form without its CSRF token refused");
        return error_page(
            &app,
            loc,
            StatusCode::FORBIDDEN,
            tr(
                loc,
                "The sign-in form has expired or did not come from this console: reload it and try again.",
                "O formulário de início de sessão expirou ou não veio desta consola: recarregue-o e tente de novo.",
            ),
        );
    }
    let account = account_index(&app, &f.name);
    let hash = account.and_then(|i| app.cfg.accounts[i].password_hash.clone());
    // argon2id takes tens of milliseconds: off the async workers.
    let app2 = app.clone();
    let name = f.name.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        app2.auth
            .check(&name, account, hash.as_deref(), &f.password, Instant::now())
    })
    .await
    .unwrap_or(SignIn::Refused);
    let c = &app.auth.counters;
    let (ok, refused, locked) = (
        c.ok.load(Ordering::Relaxed),
        c.refused.load(Ordering::Relaxed),
        c.locked.load(Ordering::Relaxed),
    );
    let shown_name: String = f.name.chars().take(64).collect();
    match (outcome, account) {
        (SignIn::Ok, Some(i)) => {
            tracing::info!(%peer, account = ?shown_name, outcome = "ok", signins_ok = ok, signins_refused = refused, signins_locked = locked, "sign-in");
            let (id, _) = app.auth.create(i, Instant::now());
            let mut r = Redirect::to(&next).into_response();
            for c in [
                set_cookie(&app, SESSION_COOKIE, &id, "/", None),
                set_cookie(&app, LOGIN_COOKIE, "", "/signin", Some(0)),
            ] {
                if let Ok(v) = HeaderValue::from_str(&c) {
                    r.headers_mut().append(header::SET_COOKIE, v);
                }
            }
            r
        }
        (SignIn::Locked, _) => {
            tracing::warn!(%peer, account = ?shown_name, outcome = "locked", signins_ok = ok, signins_refused = refused, signins_locked = locked, "sign-in");
            signin_form(
                &app,
                loc,
                &next,
                Some(tr(
                    loc,
                    "Too many failed sign-ins: this account is locked for a while.",
                    "Demasiadas tentativas falhadas: esta conta está bloqueada por algum tempo.",
                )),
            )
        }
        _ => {
            tracing::warn!(%peer, account = ?shown_name, outcome = "refused", signins_ok = ok, signins_refused = refused, signins_locked = locked, "sign-in");
            signin_form(
                &app,
                loc,
                &next,
                Some(tr(
                    loc,
                    "Wrong account or password.",
                    "Conta ou palavra-passe errada.",
                )),
            )
        }
    }
}

#[derive(Deserialize)]
struct CsrfForm {
    csrf: Option<String>,
}

/// The refusal of a POST without the session's CSRF token.
fn csrf_refused(app: &App, ctx: &Ctx, peer: SocketAddr) -> Response {
    tracing::warn!(%peer, account = %app.cfg.accounts[ctx.account].name, path = %ctx.path, "POST without the session's CSRF token refused");
    error_page(
        app,
        ctx.loc,
        StatusCode::FORBIDDEN,
        tr(
            ctx.loc,
            "Refused: the form did not carry this session's security token. Reload the page and try again.",
            "Recusado: o formulário não trazia o código de segurança desta sessão. Recarregue a página e tente de novo.",
        ),
    )
}

fn csrf_ok(ctx: &Ctx, token: Option<&str>) -> bool {
    token.is_some_and(|t| tokens_equal(t, &ctx.csrf))
}

async fn signout(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Form(f): Form<CsrfForm>,
) -> Response {
    let ctx = match signed_in(&app, &headers, peer, &uri) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    if !csrf_ok(&ctx, f.csrf.as_deref()) {
        return csrf_refused(&app, &ctx, peer);
    }
    app.auth.end(&ctx.session);
    tracing::info!(%peer, account = %app.cfg.accounts[ctx.account].name, "sign-out");
    let mut r = Redirect::to("/signin").into_response();
    if let Ok(v) = HeaderValue::from_str(&set_cookie(&app, SESSION_COOKIE, "", "/", Some(0))) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

async fn set_language(
    State(app): State<Arc<App>>,
    Path(tag): Path<String>,
    Query(q): Query<NextQuery>,
) -> Response {
    let Ok(l) = tag.parse::<Locale>() else {
        return (StatusCode::NOT_FOUND, "unknown language\n").into_response();
    };
    let mut r = Redirect::to(&local_path(q.next.as_deref())).into_response();
    if let Ok(v) = HeaderValue::from_str(&set_cookie(
        &app,
        LANG_COOKIE,
        l.tag(),
        "/",
        Some(365 * 86400),
    )) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r
}

macro_rules! ctx_or_return {
    ($app:expr, $headers:expr, $peer:expr, $uri:expr) => {
        match signed_in(&$app, &$headers, $peer, &$uri) {
            Ok(c) => c,
            Err(r) => return *r,
        }
    };
}

// ---------------------------------------------------------------------------------- overview

fn severity_label(loc: Locale, s: i32) -> &'static str {
    match v1::Severity::try_from(s).unwrap_or(v1::Severity::Unspecified) {
        v1::Severity::Unspecified => tr(loc, "unspecified", "não especificada"),
        v1::Severity::Info => tr(loc, "info", "informação"),
        v1::Severity::Low => tr(loc, "low", "baixa"),
        v1::Severity::Medium => tr(loc, "medium", "média"),
        v1::Severity::High => tr(loc, "high", "alta"),
        v1::Severity::Critical => tr(loc, "critical", "crítica"),
    }
}

/// Midnight of `d` in `tz` as UTC ms (the earliest instant of that date there).
fn day_start_ms(tz: Tz, d: NaiveDate) -> Option<i64> {
    let naive = d.and_hms_opt(0, 0, 0)?;
    tz.from_local_datetime(&naive)
        .earliest()
        .or_else(|| {
            // A day that starts in a gap (a clock change at midnight): its first valid hour.
            tz.from_local_datetime(&(naive + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|t| t.timestamp_millis())
}

/// The requests that read an account's findings: one per casino for an account limited to
/// casinos (ledgerd answers such principals one casino a request), else one for all.
fn per_casino(app: &App, ctx: &Ctx, req: &v1::ListFindingsRequest) -> Vec<v1::ListFindingsRequest> {
    let casinos = &app.cfg.accounts[ctx.account].casinos;
    if !req.casino_id.is_empty() || casinos.is_empty() {
        return vec![req.clone()];
    }
    casinos
        .iter()
        .map(|c| v1::ListFindingsRequest {
            casino_id: c.clone(),
            ..req.clone()
        })
        .collect()
}

async fn overview(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let l = ctx.ledger(&app);
    let (head, status, checkpoint) = tokio::join!(
        async { l.query().get_head(v1::GetHeadRequest {}).await },
        async { l.audit().get_status(v1::AuditStatusRequest {}).await },
        async {
            l.checkpoints()
                .get_latest(v1::GetCheckpointRequest { cosigned: false })
                .await
        },
    );
    let mirror_rows = mirrors::rows(loc, l, head.as_ref().ok().map(|h| h.get_ref().length)).await;
    // Findings of the last 7 days (today included) in the console's time zone.
    let today = chrono::Utc::now().with_timezone(&app.tz).date_naive();
    let days: Vec<NaiveDate> = (0..7)
        .rev()
        .filter_map(|i| today.checked_sub_days(chrono::Days::new(i)))
        .collect();
    let from_ms = days.first().and_then(|d| day_start_ms(app.tz, *d));
    let mut by_day: BTreeMap<NaiveDate, [u64; 5]> = days.iter().map(|d| (*d, [0; 5])).collect();
    let mut chart_error = None;
    let mut truncated = false;
    let base = v1::ListFindingsRequest {
        from_ms,
        ..Default::default()
    };
    for req in per_casino(&app, &ctx, &base) {
        match findings_upto(l, req, EXPORT_MAX).await {
            Ok((fs, more)) => {
                truncated |= more;
                for f in fs {
                    let Some(t) = chrono::DateTime::from_timestamp_millis(f.at_ms) else {
                        continue;
                    };
                    let d = t.with_timezone(&app.tz).date_naive();
                    let s = (f.severity.clamp(1, 5) - 1) as usize;
                    if let Some(b) = by_day.get_mut(&d) {
                        b[s] += 1;
                    }
                }
            }
            Err(e) => chart_error = Some(e),
        }
    }
    let series: Vec<chart::Series> = (1..=5)
        .map(|s| chart::Series {
            name: severity_label(loc, s).into(),
            colour: chart::SEVERITY_COLOURS[(s - 1) as usize],
        })
        .collect();
    let bars: Vec<chart::Bar> = by_day
        .iter()
        .map(|(d, c)| chart::Bar {
            label: match loc {
                Locale::En => d.format("%d %b").to_string(),
                Locale::PtPt => d.format("%d/%m").to_string(),
            },
            counts: c.to_vec(),
        })
        .collect();
    let title = tr(loc, "Overview", "Visão geral");
    let body = html! {
        h2 { (tr(loc, "Ledger", "Registo")) }
        @match &head {
            Ok(h) => {
                @let h = h.get_ref();
                dl.facts {
                    dt { (tr(loc, "Ledger id", "Identificador do registo")) } dd { (h.ledger_id) }
                    dt { (tr(loc, "Entries", "Entradas")) } dd #head-length { (ledger_fmt::integer(h.length as i64, loc)) }
                    dt { (tr(loc, "Head entry hash", "Hash da última entrada")) } dd { code { (hex::encode(&h.entry_hash)) } }
                }
            }
            Err(e) => (ledger_error(loc, e)),
        }
        h2 { (tr(loc, "Audit", "Auditoria")) }
        @match &status {
            Ok(s) => {
                @let s = s.get_ref();
                @let lag = if s.position < 0 { s.head + 1 } else { s.head.saturating_sub(s.position as u64) };
                dl.facts {
                    dt { (tr(loc, "Position", "Posição")) } dd { (ledger_fmt::integer(s.position, loc)) }
                    dt { (tr(loc, "Lag behind the head", "Atraso em relação à última entrada")) } dd #audit-lag { (ledger_fmt::integer(lag as i64, loc)) " " (tr(loc, "entries", "entradas")) }
                    dt { (tr(loc, "Rounds adjudicated", "Rondas adjudicadas")) } dd { (ledger_fmt::integer(s.rounds as i64, loc)) }
                    dt { (tr(loc, "Findings", "Constatações")) } dd { (ledger_fmt::integer(s.findings as i64, loc)) }
                    @if !s.halted.is_empty() {
                        dt { (tr(loc, "Halted", "Parada")) } dd.error { (s.halted) }
                    }
                }
            }
            Err(e) => (ledger_error(loc, e)),
        }
        (mirrors::section(loc, &mirror_rows))
        h2 { (tr(loc, "Last checkpoint", "Último ponto de verificação")) }
        @match &checkpoint {
            Ok(c) => {
                @let note = &c.get_ref().note;
                @let sigs = note.lines().filter(|l| l.starts_with("\u{2014} ")).count();
                p { (tr(loc, "Signatures on the note (the ledger's and its witnesses' cosignatures):", "Assinaturas na nota (a do registo e as cossinaturas das testemunhas):")) " " strong #checkpoint-signatures { (sigs) } }
                pre #checkpoint-note { (note) }
            }
            Err(e) => (ledger_error(loc, e)),
        }
        h2 #chart-title { (tr(loc, "Findings of the last 7 days by severity", "Constatações dos últimos 7 dias por gravidade")) }
        @if let Some(e) = &chart_error { (ledger_error(loc, e)) }
        @if truncated { p { (tr(loc, "Only the first 100,000 findings are counted.", "Só as primeiras 100 000 constatações são contadas.")) } }
        ul.legend {
            @for s in &series {
                li { svg.swatch viewBox="0 0 12 12" aria-hidden="true" { rect width="12" height="12" fill=(s.colour) {} } (s.name) }
            }
        }
        (chart::stacked_bars(tr(loc, "Findings per day by severity", "Constatações por dia e gravidade"), &series, &bars))
        table {
            caption { (tr(loc, "The chart's figures", "Os números do gráfico")) }
            thead { tr { th scope="col" { (tr(loc, "Day", "Dia")) } @for s in &series { th.num scope="col" { (s.name) } } } }
            tbody {
                @for (d, c) in &by_day {
                    tr { th scope="row" { (ledger_fmt::date(day_start_ms(app.tz, *d).unwrap_or(0), app.tz, loc)) } @for n in c { td.num { (n) } } }
                }
            }
        }
    };
    respond(&ctx, StatusCode::OK, page(&app, &ctx, title, body))
}

// ---------------------------------------------------------------------------------- findings

#[derive(Deserialize, Default, Clone)]
pub struct FindingsQuery {
    #[serde(default)]
    casino: String,
    #[serde(default)]
    subject: String,
    #[serde(default)]
    game: String,
    #[serde(default)]
    code: String,
    #[serde(default)]
    severity: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    after: String,
    /// Review status: open, acknowledged, disputed, resolved (empty: any).
    #[serde(default)]
    status: String,
}

impl FindingsQuery {
    fn query_string(&self, after: Option<u64>) -> String {
        let mut parts = Vec::new();
        for (k, v) in [
            ("casino", &self.casino),
            ("subject", &self.subject),
            ("game", &self.game),
            ("code", &self.code),
            ("severity", &self.severity),
            ("from", &self.from),
            ("to", &self.to),
            ("status", &self.status),
        ] {
            if !v.is_empty() {
                parts.push(format!("{k}={}", url_encode(v)));
            }
        }
        if let Some(a) = after {
            parts.push(format!("after={a}"));
        }
        parts.join("&")
    }
}

const SEVERITIES: [(&str, v1::Severity); 5] = [
    ("info", v1::Severity::Info),
    ("low", v1::Severity::Low),
    ("medium", v1::Severity::Medium),
    ("high", v1::Severity::High),
    ("critical", v1::Severity::Critical),
];

/// The filter as a ListFindings request, or what is wrong with it (naming the field).
fn findings_request(
    app: &App,
    ctx: &Ctx,
    q: &FindingsQuery,
) -> Result<v1::ListFindingsRequest, String> {
    let loc = ctx.loc;
    let date = |field: &str, v: &str| -> Result<Option<NaiveDate>, String> {
        if v.is_empty() {
            return Ok(None);
        }
        NaiveDate::parse_from_str(v, "%Y-%m-%d")
            .map(Some)
            .map_err(|_| {
                format!(
                    "{field}: {v:?} {}",
                    tr(
                        loc,
                        "is not a date (YYYY-MM-DD)",
                        "não é uma data (AAAA-MM-DD)"
                    )
                )
            })
    };
    let from = date(tr(loc, "From", "De"), &q.from)?;
    let to = date(tr(loc, "To", "Até"), &q.to)?;
    if let (Some(f), Some(t)) = (from, to)
        && f > t
    {
        return Err(tr(
            loc,
            "From: the period starts after it ends.",
            "De: o período começa depois de acabar.",
        )
        .into());
    }
    let min_severity = match q.severity.as_str() {
        "" => v1::Severity::Unspecified,
        s => SEVERITIES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                format!(
                    "{}: {s:?}",
                    tr(loc, "Unknown severity", "Gravidade desconhecida")
                )
            })?,
    };
    let after_seq = match q.after.as_str() {
        "" => None,
        a => Some(a.parse::<u64>().map_err(|_| {
            format!(
                "after: {a:?} {}",
                tr(
                    loc,
                    "is not a finding number",
                    "não é um número de constatação"
                )
            )
        })?),
    };
    let mut casino = q.casino.trim().to_string();
    let casinos = &app.cfg.accounts[ctx.account].casinos;
    // ledgerd answers an account limited to casinos one casino a request: its first by default
    // (the selector offers the others).
    if casino.is_empty()
        && let Some(first) = casinos.first()
    {
        casino = first.clone();
    }
    Ok(v1::ListFindingsRequest {
        casino_id: casino,
        subject: q.subject.trim().to_string(),
        game: q.game.trim().to_string(),
        code: q.code.trim().to_string(),
        min_severity: min_severity as i32,
        from_ms: from.and_then(|d| day_start_ms(app.tz, d)),
        to_ms: to
            .and_then(|d| d.succ_opt())
            .and_then(|d| day_start_ms(app.tz, d)),
        after_seq,
        limit: PAGE,
        status: findings_review::status_filter(loc, &q.status)?,
        ..Default::default()
    })
}

fn money_cell(loc: Locale, v: Option<i64>) -> Markup {
    html! { td.num { @if let Some(c) = v { (ledger_fmt::money(c, loc)) } @else { "–" } } }
}

fn round_href(f: &v1::Finding) -> Option<String> {
    (!f.round_id.is_empty()).then(|| {
        format!(
            "/round?table={}&round={}",
            url_encode(&f.table_id),
            url_encode(&f.round_id)
        )
    })
}

fn findings_table(app: &App, loc: Locale, fs: &[v1::Finding]) -> Markup {
    html! {
        table #findings {
            caption.skip { (tr(loc, "Findings", "Constatações")) }
            thead { tr {
                th.num scope="col" { "#" }
                th scope="col" { (tr(loc, "When", "Quando")) }
                th scope="col" { (tr(loc, "Severity", "Gravidade")) }
                th scope="col" { (tr(loc, "Code", "Código")) }
                th scope="col" { (tr(loc, "Casino", "Casino")) }
                th scope="col" { (tr(loc, "Table / machine", "Mesa / máquina")) }
                th scope="col" { (tr(loc, "Game", "Jogo")) }
                th scope="col" { (tr(loc, "Round", "Ronda")) }
                th.num scope="col" { (tr(loc, "Due", "Devido")) }
                th.num scope="col" { (tr(loc, "Reported", "Declarado")) }
                th scope="col" { (tr(loc, "Rule", "Regra")) }
                th scope="col" { (tr(loc, "What", "O quê")) }
                th scope="col" { (tr(loc, "Status", "Estado")) }
            } }
            tbody {
                @for f in fs {
                    tr data-seq=(f.seq) data-code=(f.code) {
                        td.num { (f.seq) }
                        td { (ledger_fmt::datetime(f.at_ms, app.tz, loc)) }
                        td { (severity_label(loc, f.severity)) }
                        td { code { (f.code) } }
                        td { (f.casino_id) }
                        td { (f.table_id) (f.machine_id) }
                        td { (f.game) }
                        td { @if let Some(h) = round_href(f) { a href=(h) { (f.round_id) } } }
                        (money_cell(loc, f.due_cents))
                        (money_cell(loc, f.reported_cents))
                        td { (f.citation) }
                        td { (f.message) }
                        td.status { a href=(findings_review::finding_href(&f.id)) { (findings_review::status_label(loc, f.status)) } }
                    }
                }
            }
        }
    }
}

async fn findings_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<FindingsQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let title = tr(loc, "Findings", "Constatações");
    let casinos = &app.cfg.accounts[ctx.account].casinos;
    let (status, result) = match findings_request(&app, &ctx, &q) {
        Err(msg) => (
            StatusCode::BAD_REQUEST,
            html! { p.error role="alert" { (msg) } },
        ),
        Ok(req) => match ctx.ledger(&app).audit().list_findings(req).await {
            Err(e) => (status_code(&e), ledger_error(loc, &e)),
            Ok(r) => {
                let r = r.into_inner();
                (
                    StatusCode::OK,
                    html! {
                        p #findings-count { (r.findings.len()) " " (tr(loc, "finding(s) on this page.", "constatação(ões) nesta página.")) }
                        (findings_table(&app, loc, &r.findings))
                        @if let Some(n) = r.next_after_seq {
                            p { a rel="next" href={"/findings?" (q.query_string(Some(n)))} { (tr(loc, "Next page", "Página seguinte")) " →" } }
                        }
                    },
                )
            }
        },
    };
    let qs = q.query_string(None);
    let body = html! {
        form.filters method="get" action="/findings" {
            label { (tr(loc, "Casino", "Casino"))
                @if casinos.is_empty() {
                    input name="casino" value=(q.casino);
                } @else {
                    select name="casino" {
                        @for c in casinos { option value=(c) selected[q.casino == *c] { (c) } }
                    }
                }
            }
            label { (tr(loc, "Table or machine", "Mesa ou máquina")) input name="subject" value=(q.subject); }
            label { (tr(loc, "Game", "Jogo")) input name="game" value=(q.game); }
            label { (tr(loc, "Code", "Código")) input name="code" value=(q.code) placeholder="RL_WRONG_PAYOUT"; }
            label { (tr(loc, "Severity at least", "Gravidade mínima"))
                select name="severity" {
                    option value="" { (tr(loc, "any", "qualquer")) }
                    @for (n, s) in SEVERITIES { option value=(n) selected[q.severity == n] { (severity_label(loc, s as i32)) } }
                }
            }
            label { (tr(loc, "From", "De")) input type="date" name="from" value=(q.from); }
            label { (tr(loc, "To", "Até")) input type="date" name="to" value=(q.to); }
            label { (tr(loc, "Status", "Estado"))
                select name="status" {
                    option value="" { (tr(loc, "any", "qualquer")) }
                    @for (n, _, en, pt) in findings_review::STATUSES { option value=(n) selected[q.status == n] { (tr(loc, en, pt)) } }
                }
            }
            button type="submit" { (tr(loc, "Filter", "Filtrar")) }
        }
        p {
            (tr(loc, "Export every finding of this filter:", "Exportar todas as constatações deste filtro:")) " "
            a #export-csv href={"/findings.csv?" (qs)} download { "CSV" } " · "
            a #export-xlsx href={"/findings.xlsx?" (qs)} download { "XLSX" }
        }
        (result)
    };
    respond(&ctx, status, page(&app, &ctx, title, body))
}

/// Every finding of the filter (up to [`EXPORT_MAX`]), for the exports.
async fn all_findings(
    app: &App,
    ctx: &Ctx,
    q: &FindingsQuery,
) -> Result<Vec<v1::Finding>, Response> {
    let loc = ctx.loc;
    let mut req = findings_request(app, ctx, q)
        .map_err(|m| (StatusCode::BAD_REQUEST, format!("{m}\n")).into_response())?;
    req.after_seq = None;
    let mut out = Vec::new();
    for r in per_casino(app, ctx, &req) {
        let (fs, _) = findings_upto(ctx.ledger(app), r, EXPORT_MAX)
            .await
            .map_err(|e| (status_code(&e), ledger_error(loc, &e)).into_response())?;
        out.extend(fs);
    }
    out.sort_by_key(|f| f.seq);
    out.truncate(EXPORT_MAX);
    Ok(out)
}

async fn findings_csv(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<FindingsQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    match all_findings(&app, &ctx, &q).await {
        Err(r) => r,
        Ok(fs) => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"findings.csv\"",
                ),
            ],
            export::csv(&fs),
        )
            .into_response(),
    }
}

async fn findings_xlsx(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<FindingsQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let fs = match all_findings(&app, &ctx, &q).await {
        Err(r) => return r,
        Ok(fs) => fs,
    };
    match tokio::task::spawn_blocking(move || export::xlsx(&fs)).await {
        Ok(Ok(bytes)) => (
            [
                (
                    header::CONTENT_TYPE,
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                ),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"findings.xlsx\"",
                ),
            ],
            bytes,
        )
            .into_response(),
        Ok(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, format!("xlsx: {e}\n")).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("xlsx: {e}\n")).into_response(),
    }
}

// ------------------------------------------------------------------------------------- round

#[derive(Deserialize)]
struct RoundQuery {
    #[serde(default)]
    table: String,
    #[serde(default)]
    round: String,
}

/// The payload's name and content of an event entry, or the ledger record's.
fn entry_summary(e: &v1::ChainEntry) -> (String, String, String) {
    use prost::Message;
    if e.kind == v1::RecordKind::Ledger as i32 {
        return ("ledger record".into(), "ledger".into(), String::new());
    }
    match v1::EventBody::decode(&e.body[..]) {
        Ok(b) => {
            let p = b
                .payload
                .map(|p| format!("{p:?}"))
                .unwrap_or_else(|| "(empty)".into());
            let (name, rest) = p.split_once('(').unwrap_or((&p, ""));
            let rest = rest.strip_suffix(')').unwrap_or(rest);
            let mut detail: String = rest.chars().take(300).collect();
            if rest.chars().count() > 300 {
                detail.push('…');
            }
            (
                name.to_string(),
                format!("{} #{}", b.device_id, b.sequence),
                detail,
            )
        }
        Err(_) => ("?".into(), String::new(), String::new()),
    }
}

fn json_i64(v: &serde_json::Value, k: &str) -> Option<i64> {
    v.get(k).and_then(|x| x.as_i64())
}
fn json_str<'a>(v: &'a serde_json::Value, k: &str) -> &'a str {
    v.get(k).and_then(|x| x.as_str()).unwrap_or("")
}

async fn round_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<RoundQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let title = format!("{} {}", tr(loc, "Round", "Ronda"), q.round);
    if q.round.trim().is_empty() {
        let body = html! { p.error role="alert" { (tr(loc, "round: name a round (?round=…&table=…).", "round: indique uma ronda (?round=…&table=…).")) } };
        return respond(
            &ctx,
            StatusCode::BAD_REQUEST,
            page(&app, &ctx, &title, body),
        );
    }
    let r = ctx
        .ledger(&app)
        .audit()
        .get_round(v1::GetRoundRequest {
            table_id: q.table.trim().to_string(),
            round_id: q.round.trim().to_string(),
            explain: true,
        })
        .await;
    let r = match r {
        Err(e) => {
            return respond(
                &ctx,
                status_code(&e),
                page(&app, &ctx, &title, ledger_error(loc, &e)),
            );
        }
        Ok(r) => r.into_inner(),
    };
    let summary: serde_json::Value = serde_json::from_str(&r.summary_json).unwrap_or_default();
    let adj: serde_json::Value = serde_json::from_str(&r.adjudication_json).unwrap_or_default();
    let money = |v: Option<i64>| {
        v.map(|c| ledger_fmt::money_signed(c, loc))
            .unwrap_or_else(|| "–".into())
    };
    let bets: Vec<serde_json::Value> = adj
        .get("bets")
        .and_then(|b| b.as_array())
        .cloned()
        .unwrap_or_default();
    let body = html! {
        dl.facts {
            dt { (tr(loc, "Table", "Mesa")) } dd { (json_str(&summary, "table_id")) }
            dt { (tr(loc, "Casino", "Casino")) } dd { (json_str(&summary, "casino_id")) }
            dt { (tr(loc, "Game", "Jogo")) } dd { (summary.get("game").map(|g| g.as_str().map(str::to_string).unwrap_or_else(|| g.to_string())).unwrap_or_default()) }
            dt { (tr(loc, "Opened", "Aberta")) } dd { (json_i64(&summary, "opened_ms").map(|t| ledger_fmt::datetime(t, app.tz, loc)).unwrap_or_default()) }
            dt { (tr(loc, "Closed", "Fechada")) } dd { (json_i64(&summary, "closed_ms").map(|t| ledger_fmt::datetime(t, app.tz, loc)).unwrap_or_default()) }
            dt { (tr(loc, "Configuration in force", "Configuração em vigor")) } dd { (tr(loc, "entry", "entrada")) " " (json_i64(&summary, "config_index").unwrap_or(0)) }
            dt { (tr(loc, "Handle", "Apostas")) } dd { (ledger_fmt::money(json_i64(&summary, "handle_cents").unwrap_or(0), loc)) }
            dt { (tr(loc, "Players' net, due", "Resultado dos jogadores, devido")) } dd { (money(json_i64(&summary, "due_player_net_cents"))) }
            dt { (tr(loc, "Players' net, reported", "Resultado dos jogadores, declarado")) } dd { (money(json_i64(&summary, "reported_player_net_cents"))) }
        }
        h2 { (tr(loc, "Bets: due against reported", "Apostas: devido e declarado")) }
        table #bets {
            thead { tr {
                th scope="col" { (tr(loc, "Bet", "Aposta")) }
                th.num scope="col" { (tr(loc, "Stake", "Valor apostado")) }
                th scope="col" { (tr(loc, "Outcome", "Resultado")) }
                th.num scope="col" { (tr(loc, "Due net", "Líquido devido")) }
                th.num scope="col" { (tr(loc, "Reported net", "Líquido declarado")) }
                th.num scope="col" { (tr(loc, "Difference", "Diferença")) }
                th scope="col" { (tr(loc, "Why", "Porquê")) }
                th scope="col" { (tr(loc, "Rule", "Regra")) }
            } }
            tbody {
                @for b in &bets {
                    @let due = json_i64(b, "due_net_cents");
                    @let rep = json_i64(b, "reported_net_cents");
                    @let diff = match (due, rep) { (Some(d), Some(r)) if d != r => Some(r - d), _ => None };
                    tr.differs[diff.is_some()] data-bet=(json_str(b, "bet_id")) {
                        td { (json_str(b, "bet_id")) }
                        td.num { (ledger_fmt::money(json_i64(b, "stake_cents").unwrap_or(0), loc)) }
                        td { (json_str(b, "outcome")) }
                        td.num.due { (money(due)) }
                        td.num.reported { (money(rep)) }
                        td.num { @if let Some(d) = diff { (ledger_fmt::money_signed(d, loc)) } }
                        td { (json_str(b, "reason")) }
                        td.rule { (json_str(b, "citation")) }
                    }
                }
            }
        }
        h2 { (tr(loc, "Findings", "Constatações")) }
        @if r.findings.is_empty() { p { (tr(loc, "None.", "Nenhuma.")) } }
        @else { (findings_table(&app, loc, &r.findings)) }
        h2 { (tr(loc, "Events in order", "Eventos por ordem")) }
        table #events {
            thead { tr {
                th.num scope="col" { (tr(loc, "Entry", "Entrada")) }
                th scope="col" { (tr(loc, "Received", "Recebido")) }
                th scope="col" { (tr(loc, "Signer", "Assinante")) }
                th scope="col" { (tr(loc, "Event", "Evento")) }
                th scope="col" { (tr(loc, "Content", "Conteúdo")) }
            } }
            tbody {
                @for e in &r.entries {
                    @let (name, signer, detail) = entry_summary(e);
                    tr { td.num { (e.index) } td { (ledger_fmt::datetime(e.received_at_ms, app.tz, loc)) } td { (signer) } td { (name) } td { code { (detail) } } }
                }
            }
        }
        h2 { (tr(loc, "Rule by rule", "Regra a regra")) }
        pre #explanation { (r.explanation) }
        h2 { (tr(loc, "Evidence", "Prova")) }
        p { a #evidence-download download href={"/round/evidence?table=" (url_encode(json_str(&summary, "table_id"))) "&round=" (url_encode(json_str(&summary, "round_id")))} { (tr(loc, "Download the evidence bundle (JSON, checked offline by ledgerctl verify --evidence or on the Verify page)", "Descarregar o pacote de prova (JSON, verificável offline com ledgerctl verify --evidence ou na página Verificar)")) } }
    };
    respond(&ctx, StatusCode::OK, page(&app, &ctx, &title, body))
}

// ----------------------------------------------------------------------------------- devices

async fn devices_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let title = tr(loc, "Devices", "Dispositivos");
    let mut client = ctx.ledger(&app).query();
    let mut devices = Vec::new();
    let mut after = String::new();
    let mut err = None;
    // Pages of the registry, at most 100,000 devices.
    while devices.len() < 100_000 {
        match client
            .list_devices(v1::ListDevicesRequest {
                after_device_id: after.clone(),
                limit: 1000,
            })
            .await
        {
            Ok(r) => {
                let r = r.into_inner();
                devices.extend(r.devices);
                if r.next_after_device_id.is_empty() {
                    break;
                }
                after = r.next_after_device_id;
            }
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let status = err.as_ref().map(status_code).unwrap_or(StatusCode::OK);
    let body = html! {
        @if let Some(e) = &err { (ledger_error(loc, e)) }
        table #devices {
            thead { tr {
                th scope="col" { (tr(loc, "Device", "Dispositivo")) }
                th scope="col" { (tr(loc, "Kind", "Tipo")) }
                th scope="col" { (tr(loc, "Casino", "Casino")) }
                th scope="col" { (tr(loc, "Tables / machine", "Mesas / máquina")) }
                th scope="col" { (tr(loc, "Public key", "Chave pública")) }
                th.num scope="col" { (tr(loc, "Registered at entry", "Registado na entrada")) }
                th scope="col" { (tr(loc, "Revoked", "Revogado")) }
                th.num scope="col" { (tr(loc, "Last sequence", "Última sequência")) }
            } }
            tbody {
                @for d in &devices {
                    tr {
                        td { a href=(device_href(&d.device_id)) { (d.device_id) } }
                        td { (d.kind) }
                        td { (d.casino_id) }
                        td { (d.table_ids.join(", ")) (d.machine_id) }
                        td { code { (hex::encode(&d.public_key)) } }
                        td.num { (d.registered_at_index) }
                        td { @if d.revoked { (tr(loc, "yes, at entry", "sim, na entrada")) " " (d.revoked_at_index) } @else { (tr(loc, "no", "não")) } }
                        td.num { (d.last_sequence) }
                    }
                }
            }
        }
    };
    respond(&ctx, status, page(&app, &ctx, title, body))
}

fn device_href(id: &str) -> String {
    format!("/device?id={}", url_encode(id))
}

#[derive(Deserialize)]
struct DeviceQuery {
    #[serde(default)]
    id: String,
}

fn history_action(loc: Locale, action: &str) -> &str {
    match action {
        "registered" => tr(loc, "registered", "registado"),
        "key_rotated" => tr(loc, "key rotated", "chave substituída"),
        "revoked" => tr(loc, "revoked", "revogado"),
        "declared" => tr(loc, "declared (principal)", "declarado (principal)"),
        other => other,
    }
}

/// One device: what the registry holds, and its registration, key rotations and revocation
/// (Query.GetDeviceHistory, under the account's own certificate).
async fn device_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<DeviceQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let title = format!("{} {}", tr(loc, "Device", "Dispositivo"), q.id);
    if q.id.trim().is_empty() {
        let body = html! { p.error role="alert" { (tr(loc, "id: name a device (?id=…).", "id: indique um dispositivo (?id=…).")) } };
        return respond(
            &ctx,
            StatusCode::BAD_REQUEST,
            page(&app, &ctx, &title, body),
        );
    }
    let r = ctx
        .ledger(&app)
        .query()
        .get_device_history(v1::GetDeviceRequest {
            device_id: q.id.clone(),
        })
        .await;
    let (status, body) = match r {
        Err(e) => (status_code(&e), ledger_error(loc, &e)),
        Ok(h) => {
            let h = h.into_inner();
            let d = h.device.unwrap_or_default();
            (
                StatusCode::OK,
                html! {
                    dl.summary {
                        dt { (tr(loc, "Kind", "Tipo")) } dd { (d.kind) }
                        dt { (tr(loc, "Casino", "Casino")) } dd { (d.casino_id) }
                        @if !d.table_ids.is_empty() { dt { (tr(loc, "Tables", "Mesas")) } dd { (d.table_ids.join(", ")) } }
                        @if !d.machine_id.is_empty() { dt { (tr(loc, "Machine / model", "Máquina / modelo")) } dd { (d.machine_id) " / " (d.model_id) } }
                        dt { (tr(loc, "Key in force", "Chave em vigor")) } dd { code { (hex::encode(&d.public_key)) } }
                        dt { (tr(loc, "Status", "Estado")) } dd { @if d.revoked { (tr(loc, "revoked", "revogado")) } @else { (tr(loc, "active", "ativo")) } }
                        dt { (tr(loc, "Last sequence", "Última sequência")) } dd { (d.last_sequence) }
                    }
                    h2 { (tr(loc, "Registry history", "Histórico no registo")) }
                    table #device-history {
                        thead { tr {
                            th.num scope="col" { (tr(loc, "Entry", "Entrada")) }
                            th scope="col" { (tr(loc, "Action", "Ação")) }
                            th scope="col" { (tr(loc, "Received", "Recebido")) }
                            th scope="col" { (tr(loc, "Signed by", "Assinado por")) }
                            th scope="col" { (tr(loc, "Key", "Chave")) }
                            th scope="col" { (tr(loc, "Reason", "Motivo")) }
                        } }
                        tbody {
                            @for e in &h.entries {
                                tr {
                                    td.num { (e.index) }
                                    td { (history_action(loc, &e.action)) }
                                    td { (ledger_fmt::datetime(e.received_at_ms, app.tz, loc)) }
                                    td { (e.signed_by) }
                                    td { @if !e.public_key.is_empty() { code { (hex::encode(&e.public_key)) } } }
                                    td { (e.reason) }
                                }
                            }
                        }
                    }
                    p { a href="/devices" { (tr(loc, "All devices", "Todos os dispositivos")) } }
                },
            )
        }
    };
    respond(&ctx, status, page(&app, &ctx, &title, body))
}

// ---------------------------------------------------------------------------------- jackpots

async fn jackpots_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let title = tr(loc, "Jackpots", "Jackpots");
    // What each casino holds in trust (one request per casino for an account limited to
    // casinos; else every casino at once, with the total counting each pool once).
    let casinos = app.cfg.accounts[ctx.account].casinos.clone();
    let mut liabilities: Vec<serde_json::Value> = Vec::new();
    let mut system_total = None;
    let mut liability_error = None;
    let requests = if casinos.is_empty() {
        vec![String::new()]
    } else {
        casinos
    };
    for casino_id in requests {
        let all = casino_id.is_empty();
        match ctx
            .ledger(&app)
            .jackpots()
            .get_liability(v1::LiabilityRequest { casino_id })
            .await
        {
            Ok(doc) => {
                let v: serde_json::Value =
                    serde_json::from_str(&doc.into_inner().json).unwrap_or_default();
                if all {
                    system_total = json_i64(&v, "total_cents");
                    if let Some(cs) = v.get("casinos").and_then(|c| c.as_array()) {
                        liabilities.extend(cs.iter().cloned());
                    }
                } else {
                    liabilities.push(v);
                }
            }
            Err(e) => liability_error = Some(e),
        }
    }
    let liability_table = html! {
        h2 { (tr(loc, "Held in trust by casino", "Em custódia por casino")) }
        @if let Some(e) = &liability_error { (ledger_error(loc, e)) }
        table #liabilities {
            thead { tr {
                th scope="col" { (tr(loc, "Casino", "Casino")) }
                th.num scope="col" { (tr(loc, "Its own pools", "Jackpots só seus")) }
                th.num scope="col" { (tr(loc, "Joint pools (at their full value)", "Jackpots conjuntos (pelo valor total)")) }
                th.num scope="col" { (tr(loc, "Total", "Total")) }
            } }
            tbody {
                @for c in &liabilities {
                    tr {
                        td { (json_str(c, "casino_id")) }
                        td.num { (ledger_fmt::money(json_i64(c, "sole_cents").unwrap_or(0), loc)) }
                        td.num { (ledger_fmt::money(json_i64(c, "joint_cents").unwrap_or(0), loc)) }
                        td.num { (ledger_fmt::money(json_i64(c, "total_cents").unwrap_or(0), loc)) }
                    }
                }
            }
        }
        @if let Some(t) = system_total {
            p { (tr(loc, "All casinos, each pool counted once:", "Todos os casinos, cada jackpot contado uma vez:")) " " strong #trust-total { (ledger_fmt::money(t, loc)) } }
        }
    };
    let r = ctx
        .ledger(&app)
        .jackpots()
        .list_pools(v1::ListPoolsRequest {})
        .await;
    let (status, body) = match r {
        Err(e) => (status_code(&e), ledger_error(loc, &e)),
        Ok(r) => {
            let r = r.into_inner();
            (
                StatusCode::OK,
                html! {
                    p {
                        (tr(loc, "Conservation of the money in trust (start values + contributions = captive + awards + transfers out − transfers in):", "Conservação do valor em custódia (valores iniciais + contribuições = cativo + prémios + transferências de saída − de entrada):"))
                        " " strong { @if r.conservation_holds { (tr(loc, "holds", "verifica-se")) } @else { span.differs { (tr(loc, "VIOLATED", "VIOLADA")) } } }
                    }
                    table #pools {
                        thead {
                            tr {
                                th scope="col" rowspan="2" { (tr(loc, "Pool", "Jackpot")) }
                                th scope="col" rowspan="2" { (tr(loc, "Kind", "Tipo")) }
                                th scope="col" rowspan="2" { (tr(loc, "Casinos", "Casinos")) }
                                th.num scope="col" rowspan="2" { (tr(loc, "Held now (captive value)", "Em custódia agora (valor cativo)")) }
                                th scope="colgroup" colspan="4" { (tr(loc, "Last declaration", "Última declaração")) }
                            }
                            tr {
                                th scope="col" { (tr(loc, "When", "Quando")) }
                                th.num scope="col" { (tr(loc, "Declared", "Declarado")) }
                                th.num scope="col" { (tr(loc, "Held then", "Em custódia nesse momento")) }
                                th.num scope="col" { (tr(loc, "Declared − held then", "Declarado − em custódia")) }
                            }
                        }
                        tbody {
                            @for p in &r.pools {
                                @let diff = p.last_reported_cents.zip(p.last_reported_held_cents).map(|(d, h)| d - h);
                                tr {
                                    td { a href={"/jackpot?pool=" (url_encode(&p.pool_id))} { (p.pool_id) } }
                                    td { (p.kind) }
                                    td { (p.casino_ids.join(", ")) }
                                    td.num { (ledger_fmt::money(p.captive_cents, loc)) }
                                    @if let Some(d) = p.last_reported_cents {
                                        td { @if let Some(t) = p.last_reported_at_ms { (ledger_fmt::datetime(t, app.tz, loc)) } }
                                        td.num { (ledger_fmt::money(d, loc)) }
                                        td.num { @if let Some(h) = p.last_reported_held_cents { (ledger_fmt::money(h, loc)) } }
                                        td.num.differs[!p.reconciled] {
                                            @if let Some(d) = diff { (ledger_fmt::money_signed(d, loc)) " " }
                                            @if p.reconciled { (tr(loc, "reconciled", "reconciliado")) } @else { (tr(loc, "NOT reconciled", "NÃO reconciliado")) }
                                        }
                                    } @else {
                                        td colspan="4" { (tr(loc, "never declared", "nunca declarado")) }
                                    }
                                }
                            }
                        }
                    }
                    p { (tr(loc, "A declaration is compared with what the book held at that moment (within a cent, exact to 1/10,000 cent); the value held now has grown or been paid out since. Money held is floored to the cent. A pool's page has its history, awards, transfers and declarations.", "Uma declaração é comparada com o valor em custódia segundo o registo nesse momento (dentro de um cêntimo, exato a 1/10 000 de cêntimo); o valor em custódia agora cresceu ou foi pago desde então. O valor é arredondado ao cêntimo por defeito. A página de cada jackpot tem o histórico, os prémios, as transferências e as declarações.")) }
                },
            )
        }
    };
    let body = html! { (body) (liability_table) };
    respond(&ctx, status, page(&app, &ctx, title, body))
}

// ------------------------------------------------------------------------------------ verify

fn verify_form(ctx: &Ctx, note: &str) -> Markup {
    let loc = ctx.loc;
    html! {
        form.stack method="post" action="/verify" {
            input type="hidden" name="csrf" value=(ctx.csrf);
            label for="note" { (tr(loc, "Checkpoint note (as the ledger or a witness gave it)", "Nota do ponto de verificação (como o registo ou uma testemunha a deu)")) }
            textarea #note name="note" rows="8" cols="80" required { (note) }
            button type="submit" { (tr(loc, "Check against the ledger", "Verificar contra o registo")) }
        }
    }
}

async fn verify_page(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let title = tr(
        ctx.loc,
        "Verify a checkpoint",
        "Verificar um ponto de verificação",
    );
    let body = html! { (verify_form(&ctx, "")) (evidence::upload_form(&app, &ctx)) };
    respond(&ctx, StatusCode::OK, page(&app, &ctx, title, body))
}

#[derive(Deserialize)]
struct VerifyForm {
    csrf: Option<String>,
    note: String,
}

/// Check a checkpoint note: signed by the ledger's key, and its tree a prefix of the ledger's
/// latest (a consistency proof from ledgerd, checked here). Returns what was found.
async fn check_note(l: &Ledger, note: &str) -> Result<String, String> {
    use ledger_core::{merkle, note as n};
    let note = note.replace("\r\n", "\n");
    let note = if note.ends_with('\n') {
        note
    } else {
        format!("{note}\n")
    };
    let signed = n::SignedNote::parse(&note).map_err(|e| e.to_string())?;
    let cp = n::CheckpointText::parse(&signed.text).map_err(|e| e.to_string())?;
    let head = l
        .query()
        .get_head(v1::GetHeadRequest {})
        .await
        .map_err(|e| e.message().to_string())?
        .into_inner();
    let key = ed25519_key(&head.ledger_public_key)?;
    let origin = n::origin_of(&head.ledger_id);
    if cp.origin != origin {
        return Err(format!(
            "the note is of {:?}, not of this ledger ({origin:?})",
            cp.origin
        ));
    }
    signed.verify(&origin, &key).map_err(|e| e.to_string())?;
    let proof = l
        .proofs()
        .get_consistency_proof(v1::ConsistencyProofRequest {
            from_size: cp.size,
            to_size: 0,
        })
        .await
        .map_err(|e| e.message().to_string())?
        .into_inner();
    let latest = proof
        .checkpoint
        .as_ref()
        .ok_or("the ledger sent no checkpoint with the proof")?;
    let latest_signed = n::SignedNote::parse(&latest.note).map_err(|e| e.to_string())?;
    latest_signed
        .verify(&origin, &key)
        .map_err(|e| format!("the ledger's latest checkpoint: {e}"))?;
    let latest_cp = n::CheckpointText::parse(&latest_signed.text).map_err(|e| e.to_string())?;
    let hashes: Vec<merkle::TreeHash> = proof
        .hashes
        .iter()
        .map(|h| {
            h.as_slice()
                .try_into()
                .map_err(|_| "a proof hash is not 32 bytes".to_string())
        })
        .collect::<Result<_, _>>()?;
    merkle::verify_consistency(cp.size, latest_cp.size, &hashes, &cp.root, &latest_cp.root)
        .map_err(|e| {
            format!(
                "INCONSISTENT with the ledger's checkpoint of size {}: {e}",
                latest_cp.size
            )
        })?;
    Ok(format!("{} {} → {}", origin, cp.size, latest_cp.size))
}

fn ed25519_key(b: &[u8]) -> Result<ed25519_dalek::VerifyingKey, String> {
    let arr: [u8; 32] = b
        .try_into()
        .map_err(|_| "the ledger's key is not 32 bytes".to_string())?;
    ed25519_dalek::VerifyingKey::from_bytes(&arr).map_err(|e| e.to_string())
}

async fn verify(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Form(f): Form<VerifyForm>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    if !csrf_ok(&ctx, f.csrf.as_deref()) {
        return csrf_refused(&app, &ctx, peer);
    }
    let loc = ctx.loc;
    let title = tr(
        loc,
        "Verify a checkpoint",
        "Verificar um ponto de verificação",
    );
    let note: String = f.note.chars().take(64 * 1024).collect();
    let (status, result) = match check_note(ctx.ledger(&app), &note).await {
        Ok(what) => (
            StatusCode::OK,
            html! { p.ok role="status" #verify-result { (tr(loc, "Consistent: the ledger signed this checkpoint and its tree is a prefix of the ledger's latest", "Consistente: o registo assinou este ponto de verificação e a sua árvore é um prefixo da mais recente do registo")) " (" (what) ")." } },
        ),
        Err(e) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            html! { p.error role="alert" #verify-result { (tr(loc, "Not verified:", "Não verificado:")) " " (e) } },
        ),
    };
    let body = html! { (result) (verify_form(&ctx, &note)) };
    respond(&ctx, status, page(&app, &ctx, title, body))
}

#[path = "findings_review.rs"]
mod findings_review;

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    const PEER: &str = "192.0.2.7:5000";

    pub(super) fn app_with(extra: &str) -> (Arc<App>, Router) {
        let hash = crate::auth::hash_password("s3cret").unwrap();
        let cfg: Config = toml::from_str(&format!(
            r#"
listen = "127.0.0.1:0"
ledgerd = "http://127.0.0.1:9"
ledgerd_ca = "ca.pem"
plaintext = true
default_language = "en"
{extra}
[lockout]
max_failures = 2
lock_secs = 600
[[accounts]]
name = "ana"
display_name = "Ana Inspectora"
password_hash = "{hash}"
client_cert = "a.pem"
client_key = "a.key"
[[accounts]]
name = "rui"
display_name = "Rui"
client_cert = "r.pem"
client_key = "r.key"
casinos = ["lisboa"]
"#
        ))
        .unwrap();
        cfg.validate().unwrap();
        let ch = tonic::transport::Endpoint::from_static("http://127.0.0.1:9").connect_lazy();
        let ledgers = vec![Ledger::from_channel(ch.clone()), Ledger::from_channel(ch)];
        let app = Arc::new(App::new(cfg, ledgers));
        (app.clone(), router(app))
    }

    pub(super) fn req(method: &str, uri: &str, cookies: &str, body: &str) -> Request<Body> {
        let mut r = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::COOKIE, cookies)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body.to_string()))
            .unwrap();
        r.extensions_mut()
            .insert(ConnectInfo(Peer(PEER.parse().unwrap())));
        r
    }

    pub(super) async fn send(r: &Router, q: Request<Body>) -> (StatusCode, HeaderMap, String) {
        let resp = r.clone().oneshot(q).await.unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, headers, String::from_utf8_lossy(&body).into_owned())
    }

    fn set_cookies(h: &HeaderMap) -> Vec<String> {
        h.get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect()
    }

    fn cookie_value(h: &HeaderMap, name: &str) -> String {
        set_cookies(h)
            .iter()
            .find_map(|c| {
                c.strip_prefix(&format!("{name}="))
                    .map(|r| r.split(';').next().unwrap().to_string())
            })
            .unwrap_or_else(|| panic!("no {name} cookie in {h:?}"))
    }

    fn hidden(body: &str, name: &str) -> String {
        let at = body
            .find(&format!("name=\"{name}\" value=\""))
            .unwrap_or_else(|| panic!("no {name} in {body}"));
        let rest = &body[at + name.len() + 15..];
        rest[..rest.find('"').unwrap()].to_string()
    }

    /// Sign in as `name`; returns the session cookie header.
    async fn sign_in(r: &Router, name: &str, pw: &str) -> (StatusCode, HeaderMap, String) {
        let (_, h, body) = send(r, req("GET", "/signin?next=/findings", "", "")).await;
        let login = cookie_value(&h, LOGIN_COOKIE);
        let csrf = hidden(&body, "csrf");
        assert_eq!(login, csrf);
        send(
            r,
            req(
                "POST",
                "/signin",
                &format!("{LOGIN_COOKIE}={login}"),
                &format!("name={name}&password={pw}&csrf={csrf}&next=%2Ffindings"),
            ),
        )
        .await
    }

    #[tokio::test]
    async fn pages_need_a_session() {
        let (_, r) = app_with("");
        for p in [
            "/",
            "/findings?code=X",
            "/round?round=1",
            "/devices",
            "/device?id=T1",
            "/jackpots",
            "/verify",
            "/findings.csv",
            "/reports",
            "/reports.csv?day=2026-11-27",
            "/reports.xlsx",
            "/reports/slots.csv",
            "/reports/slots.xlsx",
            "/reports/events?day=2026-11-27",
            "/reports/events.csv",
            "/round/evidence?round=1",
        ] {
            let (s, h, _) = send(&r, req("GET", p, "", "")).await;
            assert_eq!(s, StatusCode::SEE_OTHER, "{p}");
            let loc = h.get(header::LOCATION).unwrap().to_str().unwrap();
            assert!(loc.starts_with("/signin?next=/"), "{p}: {loc}");
        }
        // A forged session id is no session.
        let (s, _, _) = send(
            &r,
            req("GET", "/devices", &format!("{SESSION_COOKIE}=abc"), ""),
        )
        .await;
        assert_eq!(s, StatusCode::SEE_OTHER);
        let (s, _, body) = send(&r, req("GET", "/healthz", "", "")).await;
        assert_eq!((s, body.as_str()), (StatusCode::OK, "ok\n"));
    }

    #[tokio::test]
    async fn sign_in_sets_a_strict_cookie_and_csrf_guards_posts() {
        let (app, r) = app_with("");
        let (s, h, _) = sign_in(&r, "ana", "s3cret").await;
        assert_eq!(s, StatusCode::SEE_OTHER);
        assert_eq!(h.get(header::LOCATION).unwrap(), "/findings");
        let c = set_cookies(&h);
        let session = c.iter().find(|c| c.starts_with(SESSION_COOKIE)).unwrap();
        assert!(
            session.contains("HttpOnly") && session.contains("SameSite=Strict"),
            "{session}"
        );
        let id = cookie_value(&h, SESSION_COOKIE);
        let sess = app.auth.get(&id, Instant::now()).unwrap();
        let cookies = format!("{SESSION_COOKIE}={id}");
        // The verify page carries the session's CSRF token in its form.
        let (s, _, body) = send(&r, req("GET", "/verify", &cookies, "")).await;
        assert_eq!(s, StatusCode::OK);
        assert_eq!(hidden(&body, "csrf"), sess.csrf);
        assert!(body.contains("Ana Inspectora"));
        // A POST without the token, or with another, is refused and changes nothing.
        for form in [
            "note=x",
            "csrf=&note=x",
            &format!("csrf={}&note=x", crate::auth::random_token()),
        ] {
            let (s, _, body) = send(&r, req("POST", "/verify", &cookies, form)).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{form}");
            assert!(body.contains("security token"), "{body}");
        }
        let (s, _, _) = send(&r, req("POST", "/signout", &cookies, "csrf=nope")).await;
        assert_eq!(s, StatusCode::FORBIDDEN);
        assert!(
            app.auth.get(&id, Instant::now()).is_some(),
            "still signed in"
        );
        // With the token: a sign-out ends the session.
        let (s, _, _) = send(
            &r,
            req("POST", "/signout", &cookies, &format!("csrf={}", sess.csrf)),
        )
        .await;
        assert_eq!(s, StatusCode::SEE_OTHER);
        assert!(app.auth.get(&id, Instant::now()).is_none());
        // A sign-in form without the login cookie's token is refused too.
        let (s, _, _) = send(
            &r,
            req("POST", "/signin", "", "name=ana&password=s3cret&csrf=x"),
        )
        .await;
        assert_eq!(s, StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn wrong_passwords_lock_the_account() {
        let (app, r) = app_with("");
        for _ in 0..2 {
            let (s, _, body) = sign_in(&r, "ana", "wrong").await;
            assert_eq!(s, StatusCode::UNAUTHORIZED);
            assert!(body.contains("Wrong account or password."));
        }
        let (s, _, body) = sign_in(&r, "ana", "s3cret").await;
        assert_eq!(s, StatusCode::UNAUTHORIZED);
        assert!(body.contains("locked"), "{body}");
        // An account without a password (proxy only) and an unknown one never sign in here.
        assert_eq!(sign_in(&r, "rui", "").await.0, StatusCode::UNAUTHORIZED);
        assert_eq!(
            sign_in(&r, "nobody", "s3cret").await.0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(app.auth.counters.locked.load(Ordering::Relaxed), 1);
        assert_eq!(app.auth.counters.ok.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn the_proxy_header_counts_only_from_a_trusted_address() {
        let (_, r) = app_with("[proxy]\nheader = \"X-Remote-User\"\ntrusted = [\"192.0.2.7\"]\n");
        let mut q = req("GET", "/verify", "", "");
        q.headers_mut()
            .insert("x-remote-user", HeaderValue::from_static("rui"));
        let (s, h, body) = send(&r, q).await;
        assert_eq!(s, StatusCode::OK, "{body}");
        assert!(body.contains("Rui (rui)"));
        assert!(
            set_cookies(&h)
                .iter()
                .any(|c| c.starts_with(SESSION_COOKIE))
        );
        let mut q = req("GET", "/verify", "", "");
        q.headers_mut()
            .insert("x-remote-user", HeaderValue::from_static("mallory"));
        assert_eq!(send(&r, q).await.0, StatusCode::FORBIDDEN);

        let (_, r) = app_with("[proxy]\nheader = \"X-Remote-User\"\ntrusted = [\"192.0.2.8\"]\n");
        let mut q = req("GET", "/verify", "", "");
        q.headers_mut()
            .insert("x-remote-user", HeaderValue::from_static("rui"));
        assert_eq!(
            send(&r, q).await.0,
            StatusCode::SEE_OTHER,
            "untrusted: sign in"
        );
    }

    #[tokio::test]
    async fn language_from_cookie_then_accept_language() {
        let (_, r) = app_with("");
        let (_, _, body) = send(&r, req("GET", "/signin", "", "")).await;
        assert!(body.contains("<html lang=\"en\">") && body.contains("Password"));
        let mut q = req("GET", "/signin", "", "");
        q.headers_mut().insert(
            header::ACCEPT_LANGUAGE,
            HeaderValue::from_static("pt-PT,pt;q=0.9"),
        );
        let (_, _, body) = send(&r, q).await;
        assert!(
            body.contains("<html lang=\"pt-PT\">") && body.contains("Palavra-passe"),
            "{body}"
        );
        let (s, h, _) = send(&r, req("GET", "/lang/pt-PT?next=//evil.example", "", "")).await;
        assert_eq!(s, StatusCode::SEE_OTHER);
        assert_eq!(h.get(header::LOCATION).unwrap(), "/", "never another site");
        assert_eq!(cookie_value(&h, LANG_COOKIE), "pt-PT");
        let (_, _, body) = send(
            &r,
            req("GET", "/signin", &format!("{LANG_COOKIE}=pt-PT"), ""),
        )
        .await;
        assert!(body.contains("Iniciar sessão"));
        assert_eq!(
            send(&r, req("GET", "/lang/fr", "", "")).await.0,
            StatusCode::NOT_FOUND
        );
    }

    fn ctx(account: usize, loc: Locale) -> Ctx {
        Ctx {
            account,
            session: String::new(),
            csrf: String::new(),
            loc,
            path: "/findings".into(),
            new_cookie: None,
        }
    }

    fn q(pairs: &[(&str, &str)]) -> FindingsQuery {
        let s: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        serde_urlencoded_like(&s.join("&"))
    }

    /// The query as axum's `Query` would parse it.
    fn serde_urlencoded_like(s: &str) -> FindingsQuery {
        let uri: Uri = format!("/findings?{s}").parse().unwrap();
        Query::<FindingsQuery>::try_from_uri(&uri).unwrap().0
    }

    #[tokio::test]
    async fn the_findings_filter_becomes_a_request_in_the_console_time_zone() {
        let (app, _) = app_with("");
        // Summer in Lisbon (UTC+1): the 1st of July starts at 23:00 UTC the day before; `to` is
        // inclusive, so the period ends when the 3rd of July starts.
        let r = findings_request(
            &app,
            &ctx(0, Locale::En),
            &q(&[
                ("from", "2026-07-01"),
                ("to", "2026-07-02"),
                ("severity", "high"),
                ("code", "RL_WRONG_PAYOUT"),
                ("subject", "+T1+"),
                ("after", "41"),
            ]),
        )
        .unwrap();
        assert_eq!(r.from_ms, Some(1_782_860_400_000)); // 2026-06-30T23:00:00Z
        assert_eq!(r.to_ms, Some(1_783_033_200_000)); // 2026-07-02T23:00:00Z
        assert_eq!(r.min_severity, v1::Severity::High as i32);
        assert_eq!(
            (r.code.as_str(), r.subject.as_str()),
            ("RL_WRONG_PAYOUT", "T1")
        );
        assert_eq!(
            (r.after_seq, r.limit, r.casino_id.as_str()),
            (Some(41), PAGE, "")
        );
        // An account limited to one casino asks for it.
        let r = findings_request(&app, &ctx(1, Locale::En), &q(&[])).unwrap();
        assert_eq!(r.casino_id, "lisboa");
        assert_eq!((r.from_ms, r.to_ms), (None, None));
        // Mistakes name the field, in the user's language.
        let e =
            findings_request(&app, &ctx(0, Locale::En), &q(&[("from", "1/7/2026")])).unwrap_err();
        assert!(e.starts_with("From: \"1/7/2026\" is not a date"), "{e}");
        let e = findings_request(&app, &ctx(0, Locale::PtPt), &q(&[("to", "x")])).unwrap_err();
        assert!(e.starts_with("Até: \"x\" não é uma data"), "{e}");
        let e = findings_request(
            &app,
            &ctx(0, Locale::En),
            &q(&[("from", "2026-07-02"), ("to", "2026-07-01")]),
        )
        .unwrap_err();
        assert!(e.contains("starts after it ends"), "{e}");
        let e =
            findings_request(&app, &ctx(0, Locale::En), &q(&[("severity", "severe")])).unwrap_err();
        assert!(e.starts_with("Unknown severity"), "{e}");
        let e = findings_request(&app, &ctx(0, Locale::En), &q(&[("after", "-1")])).unwrap_err();
        assert!(e.starts_with("after:"), "{e}");
        // The next page's link keeps the filter.
        let f = q(&[("code", "A%20B"), ("from", "2026-07-01")]);
        assert_eq!(
            f.query_string(Some(7)),
            "code=A%20B&from=2026-07-01&after=7"
        );
    }

    #[tokio::test]
    async fn a_bad_filter_is_a_400_naming_the_field_and_asks_nothing() {
        let (app, r) = app_with("");
        let (id, _) = app.auth.create(0, Instant::now());
        let (s, _, body) = send(
            &r,
            req(
                "GET",
                "/findings?from=yesterday",
                &format!("{SESSION_COOKIE}={id}"),
                "",
            ),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert!(
            body.contains("From: &quot;yesterday&quot; is not a date"),
            "{body}"
        );
        let (s, _, body) = send(
            &r,
            req(
                "GET",
                "/findings.csv?severity=x",
                &format!("{SESSION_COOKIE}={id}"),
                "",
            ),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert!(body.starts_with("Unknown severity"), "{body}");
    }

    #[test]
    fn local_paths_only() {
        assert_eq!(local_path(Some("/findings?code=A")), "/findings?code=A");
        for bad in ["//evil", "https://evil", "/\\evil", "evil", "/a\nb"] {
            assert_eq!(local_path(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(local_path(None), "/");
    }
}

// ----------------------------------------------------------------------------------- reports

mod evidence;
mod jackpots;
mod mirrors;
mod reports;
