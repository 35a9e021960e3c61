//! Evidence bundles in the console: the Round page's download (`ledger_evidence::build`, through
//! the account's own channel, so ledgerd decides what it may bundle) and the Verify page's
//! upload, checked offline (`ledger_evidence::verify`) against the ledger key and witness keys of
//! the console's configuration, not against anything the ledger says.

use axum::extract::Multipart;

use super::*;

/// The largest bundle the Verify page accepts (a round of a few thousand events).
pub const MAX_BUNDLE_BYTES: usize = 8 << 20;

pub async fn round_evidence(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    Query(q): Query<RoundQuery>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let (table, round) = (q.table.trim(), q.round.trim());
    if round.is_empty() {
        return error_page(
            &app,
            loc,
            StatusCode::BAD_REQUEST,
            tr(
                loc,
                "round: name a round (?round=…&table=…).",
                "round: indique uma ronda (?round=…&table=…).",
            ),
        );
    }
    match ledger_evidence::build(ctx.ledger(&app).channel(), table, round, false).await {
        Ok(bundle) => {
            let name: String = round
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let text = serde_json::to_string_pretty(&bundle).unwrap_or_default() + "\n";
            let disposition = format!("attachment; filename=\"evidence-{name}.json\"");
            let mut r = ([(header::CONTENT_TYPE, "application/json")], text).into_response();
            if let Ok(v) = HeaderValue::from_str(&disposition) {
                r.headers_mut().insert(header::CONTENT_DISPOSITION, v);
            }
            r
        }
        Err(e) => {
            let title = format!("{} {round}", tr(loc, "Evidence of round", "Prova da ronda"));
            let body = html! { p.error role="alert" #evidence-error { (tr(loc, "No evidence bundle:", "Sem pacote de prova:")) " " (e) } };
            respond(
                &ctx,
                StatusCode::BAD_GATEWAY,
                page(&app, &ctx, &title, body),
            )
        }
    }
}

/// The upload form of the Verify page.
pub fn upload_form(app: &App, ctx: &Ctx) -> Markup {
    let loc = ctx.loc;
    html! {
        h2 #evidence-title { (tr(loc, "Check an evidence bundle", "Verificar um pacote de prova")) }
        @if app.cfg.ledger_public_key.is_none() {
            p { (tr(loc, "Bundles cannot be checked here: the console's configuration names no ledger_public_key.", "Os pacotes não podem ser verificados aqui: a configuração da consola não indica ledger_public_key.")) }
        } @else {
            form.stack method="post" action="/verify/evidence" enctype="multipart/form-data" {
                input type="hidden" name="csrf" value=(ctx.csrf);
                label for="bundle" { (tr(loc, "Evidence bundle (JSON, as the Round page or ledgerctl evidence gave it)", "Pacote de prova (JSON, como a página da ronda ou o ledgerctl evidence o deu)")) }
                input #bundle type="file" name="bundle" accept="application/json,.json" required;
                button #check-bundle type="submit" { (tr(loc, "Check the bundle", "Verificar o pacote")) }
            }
        }
    }
}

/// The form's fields: the CSRF token and the bundle's bytes, or why the upload is refused.
async fn read_upload(mut m: Multipart) -> Result<(Option<String>, Vec<u8>), (StatusCode, String)> {
    use axum::extract::multipart::MultipartError;
    let why = |e: MultipartError| (e.status(), format!("the upload: {}", e.body_text()));
    let (mut csrf, mut bundle) = (None, None);
    while let Some(field) = m.next_field().await.map_err(why)? {
        match field.name() {
            Some("csrf") => csrf = Some(field.text().await.map_err(why)?),
            Some("bundle") => bundle = Some(field.bytes().await.map_err(why)?.to_vec()),
            _ => {}
        }
    }
    let bundle = bundle.ok_or((StatusCode::BAD_REQUEST, "bundle: no file was sent".into()))?;
    Ok((csrf, bundle))
}

pub async fn verify_evidence(
    State(app): State<Arc<App>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    uri: Uri,
    upload: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Response {
    let ctx = ctx_or_return!(app, headers, peer, uri);
    let loc = ctx.loc;
    let title = tr(
        loc,
        "Verify an evidence bundle",
        "Verificar um pacote de prova",
    );
    let fields = match upload {
        Ok(m) => read_upload(m).await,
        Err(e) => Err((e.status(), e.body_text())),
    };
    let (csrf, bytes) = match fields {
        Ok(f) => f,
        // Too large, or not a form: refused before anything in it is looked at.
        Err((status, e)) => {
            let body =
                html! { p.error role="alert" #evidence-result { (e) } (upload_form(&app, &ctx)) };
            return respond(&ctx, status, page(&app, &ctx, title, body));
        }
    };
    // The token before the bundle: nothing of a forged request is checked.
    if !csrf_ok(&ctx, csrf.as_deref()) {
        return csrf_refused(&app, &ctx, peer);
    }
    let keys = match app.cfg.evidence_keys() {
        Ok(Some(k)) => k,
        _ => {
            let body = upload_form(&app, &ctx);
            return respond(&ctx, StatusCode::CONFLICT, page(&app, &ctx, title, body));
        }
    };
    let checked = serde_json::from_slice::<serde_json::Value>(&bytes)
        .map_err(|e| format!("not JSON: {e}"))
        .and_then(|b| ledger_evidence::verify(&b, &keys.0, &keys.1).map_err(|e| e.to_string()));
    tracing::info!(account = %app.cfg.accounts[ctx.account].name, ok = checked.is_ok(), bytes = bytes.len(), "evidence bundle checked");
    let (status, result) = match checked {
        Ok(v) => (
            StatusCode::OK,
            html! {
                div.ok role="status" #evidence-result {
                    p { strong { (tr(loc, "Verified.", "Verificado.")) } " "
                        (tr(loc, "Round", "Ronda")) " " (v.round_id) " " (tr(loc, "at table", "na mesa")) " " (v.table_id) "." }
                    ul {
                        li { (v.entries) " " (tr(loc, "entries in the tree of", "entradas na árvore de")) " " (v.origin) " (" (v.tree_size) " " (tr(loc, "entries", "entradas")) "); " (v.signatures) " " (tr(loc, "signatures checked from the ledger key down", "assinaturas verificadas a partir da chave do registo")) "." }
                        @for (n, t) in &v.witnesses { li { (tr(loc, "Cosigned by witness", "Cossinado pela testemunha")) " " (n) " (" (ledger_fmt::datetime(*t as i64 * 1000, app.tz, loc)) ")." } }
                        li { (tr(loc, "The rules give the same adjudication:", "As regras dão a mesma adjudicação:")) " " (v.bets) " " (tr(loc, "bets, players' net due", "apostas, resultado devido dos jogadores")) " " (ledger_fmt::money_signed(v.due_player_net_cents, loc)) "." }
                        li { (v.findings_rederived) " " (tr(loc, "findings follow from the events.", "constatações decorrem dos eventos.")) }
                        @if !v.audit_findings.is_empty() { li { (tr(loc, "The audit's own findings:", "Constatações da própria auditoria:")) " " (v.audit_findings.join(", ")) } }
                        @for g in &v.sequence_gaps { li { (tr(loc, "No event of sequences", "Nenhum evento das sequências")) " " (g) " " (tr(loc, "in the round (other tables' or rounds').", "na ronda (de outras mesas ou rondas).")) } }
                    }
                }
            },
        ),
        Err(e) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            html! { p.error role="alert" #evidence-result { (tr(loc, "Refused:", "Recusado:")) " " (e) } },
        ),
    };
    let body = html! { (result) (upload_form(&app, &ctx)) };
    respond(&ctx, status, page(&app, &ctx, title, body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    const EXAMPLE: &str = include_str!("../../../../docs/examples/evidence-round.json");
    const KEY: &str = include_str!("../../../../docs/examples/evidence-ledger.pub");
    const BOUNDARY: &str = "b0uNdArY";

    /// The console with (or without) the example's ledger key, and a session of account 0:
    /// its cookie header and CSRF token.
    fn console(with_key: bool) -> (Router, String, String) {
        let key = if with_key {
            format!("ledger_public_key = \"{}\"\n", KEY.trim())
        } else {
            String::new()
        };
        let cfg: Config = toml::from_str(&format!(
            "listen = \"127.0.0.1:0\"\nledgerd = \"http://127.0.0.1:9\"\nledgerd_ca = \"ca.pem\"\n\
             plaintext = true\ndefault_language = \"en\"\n{key}[[accounts]]\nname = \"ana\"\n\
             display_name = \"Ana\"\nclient_cert = \"a.pem\"\nclient_key = \"a.key\"\n"
        ))
        .unwrap();
        cfg.validate().unwrap();
        let ch = tonic::transport::Endpoint::from_static("http://127.0.0.1:9").connect_lazy();
        let app = Arc::new(App::new(cfg, vec![Ledger::from_channel(ch)]));
        let (id, s) = app.auth.create(0, Instant::now());
        (router(app), format!("{SESSION_COOKIE}={id}"), s.csrf)
    }

    fn multipart(csrf: Option<&str>, bundle: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        if let Some(t) = csrf {
            b.extend(
                format!(
                    "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{t}\r\n"
                )
                .bytes(),
            );
        }
        b.extend(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"bundle\"; \
                 filename=\"e.json\"\r\nContent-Type: application/json\r\n\r\n"
            )
            .bytes(),
        );
        b.extend(bundle);
        b.extend(format!("\r\n--{BOUNDARY}--\r\n").bytes());
        b
    }

    async fn upload(r: &Router, cookie: &str, body: Vec<u8>) -> (StatusCode, String) {
        let mut q = Request::builder()
            .method("POST")
            .uri("/verify/evidence")
            .header(header::COOKIE, cookie)
            .header(
                header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .body(Body::from(body))
            .unwrap();
        q.extensions_mut()
            .insert(ConnectInfo(Peer("192.0.2.7:5000".parse().unwrap())));
        let resp = r.clone().oneshot(q).await.unwrap();
        let status = resp.status();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn an_uploaded_bundle_is_checked_with_the_configured_key() {
        let (r, cookie, csrf) = console(true);
        let (s, page) = upload(&r, &cookie, multipart(Some(&csrf), EXAMPLE.as_bytes())).await;
        assert_eq!(s, StatusCode::OK, "{page}");
        assert!(page.contains("Verified.") && page.contains("T02-roulette-french-00004"));
        assert!(
            page.contains("22 entries") && page.contains("1 findings follow"),
            "{page}"
        );
        // Its finding taken out: the rules still find the mistake.
        let mut b: serde_json::Value = serde_json::from_str(EXAMPLE).unwrap();
        b["findings"] = serde_json::json!([]);
        let (s, page) = upload(
            &r,
            &cookie,
            multipart(Some(&csrf), b.to_string().as_bytes()),
        )
        .await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(
            page.contains("Refused:") && page.contains("has no finding for it"),
            "{page}"
        );
        let (s, page) = upload(&r, &cookie, multipart(Some(&csrf), b"{not json")).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(page.contains("Refused: not JSON"), "{page}");
    }

    #[tokio::test]
    async fn forged_oversized_and_unconfigured_uploads_are_refused() {
        let (r, cookie, csrf) = console(true);
        // No token, or another one: 403, the bundle unread.
        for t in [None, Some("0000")] {
            let (s, page) = upload(&r, &cookie, multipart(t, EXAMPLE.as_bytes())).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{t:?}");
            assert!(!page.contains("Verified."));
        }
        // No session: to the sign-in page.
        let (s, _) = upload(&r, "", multipart(Some(&csrf), EXAMPLE.as_bytes())).await;
        assert_eq!(s, StatusCode::SEE_OTHER);
        // Beyond the limit: refused while it is read.
        let big = vec![b' '; MAX_BUNDLE_BYTES + 1];
        let (s, _) = upload(&r, &cookie, multipart(Some(&csrf), &big)).await;
        assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);
        // No file.
        let (s, page) = upload(
            &r,
            &cookie,
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n--{BOUNDARY}--\r\n").into_bytes(),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert!(page.contains("bundle: no file was sent"), "{page}");
        // Without a ledger key in the configuration nothing is checked.
        let (r, cookie, csrf) = console(false);
        let (s, page) = upload(&r, &cookie, multipart(Some(&csrf), EXAMPLE.as_bytes())).await;
        assert_eq!(s, StatusCode::CONFLICT);
        assert!(page.contains("names no ledger_public_key"), "{page}");
    }
}
