//! The compliance console in a real browser: a real ledgerd over TLS holding a casino-sim session
//! of two casinos ("lisboa" and "porto") with its planted mistakes, the real `ledger-console`
//! over HTTPS, and Debian's Chromium driven through chromedriver (WebDriver, `fantoccini`).
//!
//! Needs `chromium` and `chromedriver` (scripts/install-chromium.sh); the binaries built first:
//! `cargo build -p ledgerd -p ledgerctl -p ledger-console`. Screenshots go to
//! target/console-screenshots/.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use e2e::slots::{REGULATOR_ID, wait_caught_up, write_config_with_regulator};
use e2e::*;
use fantoccini::{Client, Locator};
use ledger_agent::DeviceSigner;
use ledger_core::proto::{self as v1, audit_client::AuditClient};
use rustls_pki_types::pem::PemObject;

fn rename(c: &str) -> &'static str {
    match c {
        "casino-lisboa" => "lisboa",
        "casino-estoril" => "porto",
        other => panic!("a casino of the plan: {other}"),
    }
}

/// The standard session with its mistakes, its casinos renamed lisboa and porto, streamed and
/// audited.
async fn two_casinos(dir: &Path) -> (Ledgerd, casino_sim::Session) {
    two_casinos_with(dir, |_| {}).await
}

/// [`two_casinos`] with the plan changed by `tweak` first.
async fn two_casinos_with(
    dir: &Path,
    tweak: impl FnOnce(&mut casino_sim::SessionPlan),
) -> (Ledgerd, casino_sim::Session) {
    let cfg = write_config_with_regulator(dir);
    let l = Ledgerd::start(&dir.join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut plan = casino_sim::standard_plan(3, 0, 11, true, "operator-1", REGULATOR_ID);
    tweak(&mut plan);
    for t in &mut plan.tables {
        t.casino_id = rename(&t.casino_id).to_string();
        t.config.casino_id = Some(t.casino_id.clone());
    }
    for m in &mut plan.floor.machines {
        m.casino_id = rename(&m.casino_id).into();
    }
    for p in &mut plan.floor.pools {
        for c in &mut p.casino_ids {
            *c = rename(c).into();
        }
    }
    plan.start_ms = now_ms() - casino_sim::duration_ms(&plan).unwrap() - 60_000;
    let session = casino_sim::generate(&plan).unwrap();
    let specs: Vec<casino_play::sim::DeviceSpec> = session
        .devices
        .iter()
        .map(|d| casino_play::sim::DeviceSpec {
            device_id: d.device_id.clone(),
            kind: d.kind,
            casino_id: d.casino_id.clone(),
            table_ids: d.table_ids.clone(),
            machine_id: d.machine_id.clone(),
            model_id: d.model_id.clone(),
            bet_values_cents: d.bet_values_cents.clone(),
            description: d.description.clone(),
        })
        .collect();
    let mut signers: BTreeMap<String, DeviceSigner> = register(&url, 1, &specs)
        .await
        .into_iter()
        .map(|s| (s.device_id.clone(), s))
        .collect();
    signers.insert(
        "operator-1".into(),
        DeviceSigner::new("operator-1", operator_key(), specs.len() as u64 + 1),
    );
    signers.insert(
        REGULATOR_ID.into(),
        DeviceSigner::new(REGULATOR_ID, e2e::slots::regulator_key(), 1),
    );
    let envs: Vec<v1::Envelope> = session
        .events
        .iter()
        .map(|e| {
            signers
                .get_mut(&e.device_id)
                .unwrap_or_else(|| panic!("no signer {}", e.device_id))
                .sign(e.occurred_at_ms, e.payload.clone())
        })
        .collect();
    for r in submit(&url, &envs).await {
        assert_eq!(st(&r), v1::ReceiptStatus::Accepted, "{r:?}");
    }
    wait_caught_up(&url).await;
    (l, session)
}

/// Rotate `device`'s key to `key` as operator-1 (its next sequence asked from the ledger); the
/// rotation's entry index.
async fn rotate_key(url: &str, device: &str, key: &ed25519_dalek::VerifyingKey) -> u64 {
    let mut q = ledger_core::proto::query_client::QueryClient::new(
        ledger_agent::connect(url).await.unwrap(),
    );
    let op = q
        .get_device(v1::GetDeviceRequest {
            device_id: "operator-1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut signer = DeviceSigner::new("operator-1", operator_key(), op.last_sequence + 1);
    let env = signer.sign(
        now_ms(),
        v1::event_body::Payload::DeviceKeyRotated(v1::DeviceKeyRotated {
            device_id: device.into(),
            public_key: key.as_bytes().to_vec(),
            reason: "browser test".into(),
        }),
    );
    let r = submit(url, &[env]).await.remove(0);
    assert_eq!(st(&r), v1::ReceiptStatus::Accepted, "{r:?}");
    r.index
}

/// A child process killed when dropped.
struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn hash_password(pw: &str) -> String {
    let mut c = Command::new(bin("ledger-console"))
        .arg("hash-password")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ledger-console hash-password");
    writeln!(c.stdin.take().unwrap(), "{pw}").unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

const ANA_PW: &str = "ana: correct horse battery";
const LIA_PW: &str = "lia: staple";

/// Start the console against `ledgerd_url`: accounts `ana` (compliance, every casino) and `lia`
/// (compliance of lisboa only), each with its own ledgerd client certificate. Returns the
/// process and its https:// address.
fn start_console(dir: &Path, ledgerd_url: &str, ledger_key: &str) -> (Proc, String) {
    start_console_with(dir, "console.toml", ledgerd_url, ledger_key, "")
}

/// [`start_console`] with `extra` TOML at the end (more accounts, `[[mirrors]]`), its
/// configuration written to `dir/file`.
fn start_console_with(
    dir: &Path,
    file: &str,
    ledgerd_url: &str,
    ledger_key: &str,
    extra: &str,
) -> (Proc, String) {
    let p = pki();
    let cfg = format!(
        r#"listen = "127.0.0.1:0"
ledgerd = "{ledgerd_url}"
ledgerd_ca = {ca:?}
default_language = "en"
ledger_public_key = "{ledger_key}"
[tls]
cert_chain = {cert:?}
key = {key:?}
[lockout]
max_failures = 3
lock_secs = 600
[[accounts]]
name = "ana"
display_name = "Ana Sousa"
password_hash = "{ana}"
client_cert = {ana_cert:?}
client_key = {ana_key:?}
[[accounts]]
name = "lia"
display_name = "Lia Lisboa"
password_hash = "{lia}"
client_cert = {lia_cert:?}
client_key = {lia_key:?}
casinos = ["lisboa"]
{extra}
"#,
        ca = p.ca(),
        cert = p.dir.join("ledgerd.pem"),
        key = p.dir.join("ledgerd.key"),
        ana = hash_password(ANA_PW),
        ana_cert = p.cert("e2e-compliance"),
        ana_key = p.key("e2e-compliance"),
        lia = hash_password(LIA_PW),
        lia_cert = p.cert("lisboa-compliance"),
        lia_key = p.key("lisboa-compliance"),
    );
    let path = dir.join(file);
    std::fs::write(&path, cfg).unwrap();
    let mut child = Command::new(bin("ledger-console"))
        .args(["serve", "--config"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start ledger-console");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("console said {line:?}"))
        .to_string();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    (Proc(child), url)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// chromedriver and a headless Chromium session through it.
async fn browser() -> (Proc, Client) {
    let port = free_port();
    let driver = Proc(
        Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (scripts/install-chromium.sh)"),
    );
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--ignore-certificate-errors", "--window-size=1280,1000", "--lang=en-GB"],
        }),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let c = fantoccini::ClientBuilder::new(
            hyper_util::client::legacy::connect::HttpConnector::new(),
        )
        .capabilities(caps.clone())
        .connect(&format!("http://127.0.0.1:{port}"))
        .await;
        match c {
            Ok(c) => return (driver, c),
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("no WebDriver session: {e}"),
        }
    }
}

fn screenshots_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let d = exe.ancestors().nth(3).unwrap().join("console-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    std::fs::write(screenshots_dir().join(format!("{name}.png")), png).unwrap();
}

/// Click `css` and wait until the page it leads to has loaded (a click does not always wait
/// for the navigation it starts): the old document is marked first, and the wait ends when a
/// document without the mark is complete.
async fn click_and_load(c: &Client, css: &str) {
    c.execute("document.documentElement.dataset.old = '1';", vec![])
        .await
        .unwrap();
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = c
            .execute(
                "return document.readyState === 'complete' && !document.documentElement.dataset.old;",
                vec![],
            )
            .await;
        if matches!(v, Ok(serde_json::Value::Bool(true))) {
            return;
        }
        assert!(Instant::now() < deadline, "{css}: no new page");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn sign_in(c: &Client, base: &str, name: &str, pw: &str) {
    c.goto(&format!("{base}/signin")).await.unwrap();
    c.find(Locator::Id("name"))
        .await
        .unwrap()
        .send_keys(name)
        .await
        .unwrap();
    c.find(Locator::Id("password"))
        .await
        .unwrap()
        .send_keys(pw)
        .await
        .unwrap();
    click_and_load(c, "form button[type=submit]").await;
}

async fn sign_out(c: &Client) {
    click_and_load(c, "form[action='/signout'] button").await;
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// Each row of the findings table: (seq, code, casino, cells).
async fn finding_rows(c: &Client) -> Vec<(u64, String, Vec<String>)> {
    let mut out = Vec::new();
    for row in c
        .find_all(Locator::Css("#findings tbody tr"))
        .await
        .unwrap()
    {
        let seq = row
            .attr("data-seq")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        let code = row.attr("data-code").await.unwrap().unwrap();
        let mut cells = Vec::new();
        for td in row.find_all(Locator::Css("td")).await.unwrap() {
            cells.push(td.text().await.unwrap());
        }
        out.push((seq, code, cells));
    }
    out
}

/// Column of the findings table.
const CASINO: usize = 4;
const DUE: usize = 8;
const REPORTED: usize = 9;
const RULE: usize = 10;

/// An HTTPS request to the console from outside the browser, with the browser's session cookie.
async fn https(
    base: &str,
    method: &str,
    path: &str,
    cookie: &str,
    form: Option<&str>,
) -> (u16, Vec<u8>) {
    let body = form.map(|f| {
        (
            "application/x-www-form-urlencoded".to_string(),
            f.as_bytes().to_vec(),
        )
    });
    https_body(base, method, path, cookie, body).await
}

/// [`https`] with a body of any content type.
async fn https_body(
    base: &str,
    method: &str,
    path: &str,
    cookie: &str,
    body: Option<(String, Vec<u8>)>,
) -> (u16, Vec<u8>) {
    use http_body_util::{BodyExt, Full};
    let addr = base.strip_prefix("https://").unwrap();
    let mut roots = rustls::RootCertStore::empty();
    let ca = std::fs::read(pki().ca()).unwrap();
    for c in rustls_pki_types::CertificateDer::pem_slice_iter(&ca) {
        roots.add(c.unwrap()).unwrap();
    }
    let cfg = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(cfg))
        .connect(
            rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap(),
            tcp,
        )
        .await
        .unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr)
        .header("cookie", cookie);
    if let Some((ct, _)) = &body {
        req = req.header("content-type", ct.as_str());
    }
    let resp = send
        .send_request(
            req.body(Full::new(bytes::Bytes::from(
                body.map(|b| b.1).unwrap_or_default(),
            )))
            .unwrap(),
        )
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let body = resp
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, body)
}

async fn session_cookie(c: &Client) -> String {
    let k = c
        .get_named_cookie("console_session")
        .await
        .expect("session cookie");
    format!("console_session={}", k.value())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_a_browser() {
    let dir = tempdir();
    let (ledgerd, session) = two_casinos(dir.path()).await;
    let (_console, base) = start_console(dir.path(), &ledgerd.url(), &ledgerd.ledger_key);
    let (_driver, c) = browser().await;

    // --- sign-in required: every page sends an anonymous visitor to the sign-in form
    for p in ["/", "/findings", "/devices", "/round?round=x"] {
        c.goto(&format!("{base}{p}")).await.unwrap();
        let url = c.current_url().await.unwrap();
        assert_eq!(url.path(), "/signin", "{p}: {url}");
    }
    screenshot(&c, "signin").await;
    // A wrong password is refused, and says so.
    sign_in(&c, &base, "ana", "wrong").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/signin");
    assert_eq!(
        text(&c, "#signin-error").await,
        "Wrong account or password."
    );

    // --- ana (compliance, every casino)
    sign_in(&c, &base, "ana", ANA_PW).await;
    assert_eq!(c.current_url().await.unwrap().path(), "/");
    assert!(text(&c, "main h1").await.contains("Overview"));
    assert!(
        c.find(Locator::Css("svg.chart rect")).await.is_ok(),
        "the chart has bars"
    );
    screenshot(&c, "overview").await;

    // The planted findings: each code's page lists exactly what ListFindings returns for it.
    let ch = ledger_agent::connect(&ledgerd.url()).await.unwrap();
    let mut audit = AuditClient::new(ch);
    let with_round = session
        .expected
        .iter()
        .find(|e| e.round_id.is_some() && e.code.contains("WRONG_PAYOUT"))
        .or_else(|| session.expected.iter().find(|e| e.round_id.is_some()))
        .expect("a planted mistake in a round");
    let codes: BTreeSet<&str> = session.expected.iter().map(|e| e.code.as_str()).collect();
    for code in &codes {
        c.goto(&format!("{base}/findings?code={code}"))
            .await
            .unwrap();
        let rows = finding_rows(&c).await;
        let want = audit
            .list_findings(v1::ListFindingsRequest {
                code: code.to_string(),
                limit: 50,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .findings;
        assert!(
            !want.is_empty(),
            "the planted {code} was found by the audit"
        );
        assert_eq!(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            want.iter().map(|f| f.seq).collect::<Vec<_>>(),
            "{code}"
        );
        assert!(
            rows.iter().all(|r| r.1 == *code),
            "{code}: filtered by code"
        );
        // Money as the English locale writes it, from the integer cents.
        for (r, f) in rows.iter().zip(&want) {
            if let Some(d) = f.due_cents {
                assert_eq!(r.2[DUE], ledger_fmt::money(d, ledger_fmt::Locale::En));
            }
            if let Some(d) = f.reported_cents {
                assert_eq!(r.2[REPORTED], ledger_fmt::money(d, ledger_fmt::Locale::En));
            }
            assert_eq!(r.2[RULE], f.citation);
        }
    }
    c.goto(&format!("{base}/findings?code={}", with_round.code))
        .await
        .unwrap();
    screenshot(&c, "findings").await;

    // --- CSV and XLSX hold the rows shown
    let shown: Vec<u64> = finding_rows(&c).await.iter().map(|r| r.0).collect();
    let cookie = session_cookie(&c).await;
    let csv_href = c
        .find(Locator::Id("export-csv"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let (status, csv) = https(&base, "GET", &csv_href, &cookie, None).await;
    assert_eq!(status, 200);
    let csv = String::from_utf8(csv).unwrap();
    let csv_seqs: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(csv_seqs, shown, "{csv}");
    let xlsx_href = c
        .find(Locator::Id("export-xlsx"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let (status, xlsx) = https(&base, "GET", &xlsx_href, &cookie, None).await;
    assert_eq!(status, 200);
    let mut wb: calamine::Xlsx<_> =
        calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).expect("an XLSX workbook");
    use calamine::Reader;
    let sheet = wb.worksheet_range("findings").expect("the findings sheet");
    let xlsx_seqs: Vec<u64> = sheet
        .rows()
        .skip(1)
        .map(|r| r[0].to_string().parse::<f64>().unwrap() as u64)
        .collect();
    assert_eq!(xlsx_seqs, shown);
    assert_eq!(sheet.rows().next().unwrap()[4].to_string(), "status");
    let codes_col: BTreeSet<String> = sheet.rows().skip(1).map(|r| r[5].to_string()).collect();
    assert_eq!(codes_col, BTreeSet::from([with_round.code.clone()]));
    // Nothing is reviewed yet: every row is open, as the page's status column says.
    let status_col: BTreeSet<String> = sheet.rows().skip(1).map(|r| r[4].to_string()).collect();
    assert_eq!(status_col, BTreeSet::from(["open".to_string()]));
    // Without a session the exports are not served.
    let (status, _) = https(&base, "GET", &csv_href, "", None).await;
    assert_eq!(status, 303);

    // --- a round: due and reported per bet, the rule cited
    click_and_load(
        &c,
        &format!(
            "#findings a[href*='round={}']",
            with_round.round_id.as_ref().unwrap()
        ),
    )
    .await;
    assert_eq!(c.current_url().await.unwrap().path(), "/round");
    let differs = c.find_all(Locator::Css("#bets tr.differs")).await.unwrap();
    assert!(!differs.is_empty(), "a bet whose reported result differs");
    for row in &differs {
        let due = row
            .find(Locator::Css("td.due"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let rep = row
            .find(Locator::Css("td.reported"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let rule = row
            .find(Locator::Css("td.rule"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            due.contains('€') && rep.contains('€') && due != rep,
            "{due} / {rep}"
        );
        assert!(rule.starts_with("P217/2007"), "{rule}");
    }
    let round_findings = finding_rows(&c).await;
    assert!(round_findings.iter().any(|r| r.1 == with_round.code));
    assert!(
        !text(&c, "#explanation").await.is_empty(),
        "the rule-by-rule explanation"
    );
    screenshot(&c, "round").await;

    // --- page times (printed, not asserted: the machine is shared): 20 loads of each page,
    // server time as seen by an HTTP client on loopback (TLS handshake included).
    let round_path = c.current_url().await.unwrap();
    let round_path = format!("{}?{}", round_path.path(), round_path.query().unwrap_or(""));
    let one = audit
        .list_findings(v1::ListFindingsRequest {
            limit: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .findings;
    for path in [
        "/",
        "/findings",
        &format!("/findings?code={}", with_round.code),
        &format!("/finding?id={}", one[0].id),
        &round_path,
        "/devices",
        &format!("/device?id={}", session.devices[0].device_id),
        "/jackpots",
        "/reports",
        "/reports/events",
    ] {
        let mut ms = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            let (status, _) = https(&base, "GET", path, &cookie, None).await;
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(status, 200, "{path}");
        }
        ms.sort_by(f64::total_cmp);
        eprintln!(
            "page time {path}: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
            ms[9], ms[18], ms[19]
        );
    }

    // --- a forged POST without the session's CSRF token is refused
    let (status, body) = https(&base, "POST", "/verify", &cookie, Some("note=x")).await;
    assert_eq!(status, 403, "{}", String::from_utf8_lossy(&body));
    let (status, body) = https(&base, "POST", "/signout", &cookie, Some("csrf=0000")).await;
    assert_eq!(status, 403, "{}", String::from_utf8_lossy(&body));
    // ... and the session it tried to end goes on.
    c.goto(&format!("{base}/devices")).await.unwrap();
    assert_eq!(c.current_url().await.unwrap().path(), "/devices");
    screenshot(&c, "devices").await;

    // --- a device's registry history: registration, then a key rotation by the operator
    let rotated = session
        .devices
        .iter()
        .find(|d| d.casino_id == "lisboa")
        .expect("a device of lisboa")
        .device_id
        .clone();
    let new_key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]).verifying_key();
    let rotation = rotate_key(&ledgerd.url(), &rotated, &new_key).await;
    click_and_load(&c, &format!("#devices a[href='/device?id={rotated}']")).await;
    assert_eq!(c.current_url().await.unwrap().path(), "/device");
    let mut history = Vec::new();
    for tr in c
        .find_all(Locator::Css("#device-history tbody tr"))
        .await
        .unwrap()
    {
        let mut cells = Vec::new();
        for td in tr.find_all(Locator::Css("td")).await.unwrap() {
            cells.push(td.text().await.unwrap());
        }
        history.push(cells);
    }
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(
        (history[0][1].as_str(), history[0][3].as_str()),
        ("registered", "operator-1"),
        "{history:?}"
    );
    assert_eq!(
        (
            history[1][0].parse::<u64>().unwrap(),
            history[1][1].as_str(),
            history[1][3].as_str(),
            history[1][4].as_str(),
            history[1][5].as_str()
        ),
        (
            rotation,
            "key rotated",
            "operator-1",
            hex::encode(new_key.as_bytes()).as_str(),
            "browser test"
        ),
        "{history:?}"
    );
    screenshot(&c, "device").await;

    // --- Verify: the latest checkpoint's note checks against the ledger
    let cp = ledger_core::proto::checkpoints_client::CheckpointsClient::new(
        ledger_agent::connect(&ledgerd.url()).await.unwrap(),
    )
    .create(v1::CreateCheckpointRequest::default())
    .await
    .unwrap()
    .into_inner();
    c.goto(&format!("{base}/verify")).await.unwrap();
    c.find(Locator::Id("note"))
        .await
        .unwrap()
        .send_keys(&cp.note)
        .await
        .unwrap();
    click_and_load(&c, "form[action='/verify'] button").await;
    let result = text(&c, "#verify-result").await;
    assert!(result.starts_with("Consistent"), "{result}");
    // A note with its root changed is not.
    let mut lines: Vec<&str> = cp.note.lines().collect();
    let forged_root = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
    lines[2] = forged_root;
    c.goto(&format!("{base}/verify")).await.unwrap();
    c.find(Locator::Id("note"))
        .await
        .unwrap()
        .send_keys(&lines.join("\n"))
        .await
        .unwrap();
    click_and_load(&c, "form[action='/verify'] button").await;
    let result = text(&c, "#verify-result").await;
    assert!(result.starts_with("Not verified"), "{result}");

    // --- Evidence: the round's bundle downloads, checks on Verify against the configured ledger
    // key, and a tampered one is refused (the checkpoint made above covers the round).
    c.goto(&format!("{base}{round_path}")).await.unwrap();
    let href = c
        .find(Locator::Id("evidence-download"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let (status, bundle) = https(&base, "GET", &href, &cookie, None).await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bundle));
    let bundle: serde_json::Value = serde_json::from_slice(&bundle).unwrap();
    assert_eq!(bundle["round_id"].as_str(), with_round.round_id.as_deref());
    let upload = |name: &str, b: &serde_json::Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec_pretty(b).unwrap()).unwrap();
        path
    };
    let good = upload("evidence.json", &bundle);
    c.goto(&format!("{base}/verify")).await.unwrap();
    c.find(Locator::Id("bundle"))
        .await
        .unwrap()
        .send_keys(good.to_str().unwrap())
        .await
        .unwrap();
    click_and_load(&c, "#check-bundle").await;
    let result = text(&c, "#evidence-result").await;
    assert!(result.starts_with("Verified."), "{result}");
    assert!(
        result.contains(with_round.round_id.as_deref().unwrap()),
        "{result}"
    );
    screenshot(&c, "verify-evidence").await;
    // Its findings taken out: the rules still find the planted mistake, so it is refused.
    let mut tampered = bundle.clone();
    let n = tampered["findings"].as_array().unwrap().len();
    assert!(n > 0, "the planted mistake's finding is in the bundle");
    tampered["findings"] = serde_json::json!([]);
    let bad = upload("tampered.json", &tampered);
    c.goto(&format!("{base}/verify")).await.unwrap();
    c.find(Locator::Id("bundle"))
        .await
        .unwrap()
        .send_keys(bad.to_str().unwrap())
        .await
        .unwrap();
    click_and_load(&c, "#check-bundle").await;
    let result = text(&c, "#evidence-result").await;
    assert!(
        result.starts_with("Refused:") && result.contains("the bundle has no finding for it"),
        "{result}"
    );
    // A forged upload (no CSRF token) is refused before the bundle is looked at.
    let boundary = "XbOuNdArY";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"bundle\"; filename=\"b.json\"\r\nContent-Type: application/json\r\n\r\n"
    )
    .into_bytes();
    body.extend(serde_json::to_vec(&bundle).unwrap());
    body.extend(format!("\r\n--{boundary}--\r\n").into_bytes());
    let (status, page) = https_body(
        &base,
        "POST",
        "/verify/evidence",
        &cookie,
        Some((format!("multipart/form-data; boundary={boundary}"), body)),
    )
    .await;
    assert_eq!(status, 403, "{}", String::from_utf8_lossy(&page));

    // --- Reports: the gaming day's figures are GetReport's, and so are the CSV and XLSX rows
    let day = audit::DayRule::default().day_of(now_ms()).to_string();
    let want = audit
        .get_report(v1::ReportRequest {
            day: day.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    c.goto(&format!("{base}/reports?day={day}")).await.unwrap();
    assert_eq!(text(&c, "main h1").await, "Reports");
    assert!(
        text(&c, "#gaming-day-rule")
            .await
            .contains("Europe/Lisbon from 06:00"),
        "the ledger's rule is shown"
    );
    let day_rows = c
        .find_all(Locator::Css("#report-day tbody tr"))
        .await
        .unwrap();
    assert_eq!(day_rows.len(), want.periods[0].rows.len());
    let grand = want.periods[0]
        .rows
        .iter()
        .find(|r| r.casino_id == "*")
        .expect("ana sees every casino: the grand total");
    assert!(
        grand.rounds > 0,
        "today's gaming day has the session's rounds"
    );
    let last = day_rows.last().unwrap();
    let cells: Vec<String> = {
        let mut v = Vec::new();
        for td in last.find_all(Locator::Css("td")).await.unwrap() {
            v.push(td.text().await.unwrap());
        }
        v
    };
    assert_eq!(cells[0], grand.rounds.to_string());
    assert_eq!(
        cells[1],
        ledger_fmt::money(grand.handle_cents, ledger_fmt::Locale::En)
    );
    assert!(
        !c.find_all(Locator::Css("svg.chart circle"))
            .await
            .unwrap()
            .is_empty(),
        "the hold chart has today's point"
    );
    screenshot(&c, "reports").await;
    let csv_href = c
        .find(Locator::Id("report-csv"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let (status, csv) = https(&base, "GET", &csv_href, &cookie, None).await;
    assert_eq!(status, 200);
    let csv = String::from_utf8(csv).unwrap();
    let want_rows: Vec<(String, String, String, String, i64)> = want
        .periods
        .iter()
        .flat_map(|p| {
            p.rows.iter().map(|r| {
                (
                    p.name.clone(),
                    r.casino_id.clone(),
                    r.table_id.clone(),
                    r.game.clone(),
                    r.handle_cents,
                )
            })
        })
        .collect();
    let csv_rows: Vec<(String, String, String, String, i64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].into(),
                f[3].into(),
                f[4].into(),
                f[5].into(),
                f[8].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(csv_rows, want_rows, "{csv}");
    let xlsx_href = c
        .find(Locator::Id("report-xlsx"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let (status, xlsx) = https(&base, "GET", &xlsx_href, &cookie, None).await;
    assert_eq!(status, 200);
    let mut wb: calamine::Xlsx<_> =
        calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).expect("an XLSX workbook");
    let sheet = wb.worksheet_range("report").expect("the report sheet");
    let xlsx_rows: Vec<(String, String, String, String, i64)> = sheet
        .rows()
        .skip(1)
        .map(|r| {
            (
                r[0].to_string(),
                r[3].to_string(),
                r[4].to_string(),
                r[5].to_string(),
                r[8].to_string().parse::<f64>().unwrap() as i64,
            )
        })
        .collect();
    assert_eq!(xlsx_rows, want_rows);

    // --- Slot machines: the same periods per machine and casino. The year to date holds every
    // reading of the session, so each machine's figures are its meters' over all its readings
    // (Jackpots.ListMachines without a period).
    let ytd = want
        .periods
        .iter()
        .find(|p| p.name == "year_to_date")
        .unwrap();
    let machines: serde_json::Value = serde_json::from_str(
        &ledger_core::proto::jackpots_client::JackpotsClient::new(
            ledger_agent::connect(&ledgerd.url()).await.unwrap(),
        )
        .list_machines(v1::ListMachinesRequest::default())
        .await
        .unwrap()
        .into_inner()
        .json,
    )
    .unwrap();
    let machines = machines["machines"].as_array().unwrap();
    assert!(machines.len() >= 2, "the session's machines");
    let mut casinos_seen = BTreeSet::new();
    for m in machines {
        let id = m["machine"]["id"].as_str().unwrap();
        let row = ytd
            .slot_rows
            .iter()
            .find(|r| r.machine_id == id)
            .unwrap_or_else(|| panic!("{id} in the slot rows: {:?}", ytd.slot_rows));
        let ret = &m["return"];
        let num = |v: &serde_json::Value| -> i64 {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                .unwrap_or_else(|| panic!("a number: {v}"))
        };
        assert_eq!(row.wagered_cents, num(&ret["coin_in_cents"]), "{id}");
        assert_eq!(row.won_cents, num(&ret["won_cents"]), "{id}");
        assert_eq!(row.takings_cents, row.wagered_cents - row.won_cents, "{id}");
        assert_eq!(row.model_id, m["machine"]["model_id"].as_str().unwrap());
        if row.wagered_cents > 0 {
            assert!(row.expected_rtp_bp.is_some(), "{id}: the model is known");
            assert_eq!(
                row.variance_bp.unwrap(),
                row.actual_rtp_bp.unwrap() - row.expected_rtp_bp.unwrap(),
                "{row:?}"
            );
        }
        casinos_seen.insert(row.casino_id.clone());
    }
    assert_eq!(
        casinos_seen,
        BTreeSet::from(["lisboa".to_string(), "porto".to_string()])
    );
    for casino in &casinos_seen {
        let total = ytd
            .slot_rows
            .iter()
            .find(|r| &r.casino_id == casino && r.machine_id == "*")
            .expect("a casino total");
        let sum: i64 = ytd
            .slot_rows
            .iter()
            .filter(|r| &r.casino_id == casino && r.machine_id != "*")
            .map(|r| r.wagered_cents)
            .sum();
        assert_eq!(total.wagered_cents, sum, "{casino}");
        assert!(total.wagered_cents > 0, "{casino} played");
    }
    // The page's year-to-date table shows them, money for people.
    let slot_rows = c
        .find_all(Locator::Css("#slots-year tbody tr"))
        .await
        .unwrap();
    assert_eq!(slot_rows.len(), ytd.slot_rows.len());
    let first = &ytd.slot_rows[0];
    let mut cells = Vec::new();
    for td in slot_rows[0].find_all(Locator::Css("td")).await.unwrap() {
        cells.push(td.text().await.unwrap());
    }
    assert_eq!(cells[1], first.machine_id);
    assert_eq!(
        cells[3],
        ledger_fmt::money(first.wagered_cents, ledger_fmt::Locale::En)
    );
    assert_eq!(
        cells[5],
        ledger_fmt::money(first.takings_cents, ledger_fmt::Locale::En)
    );
    c.execute(
        "document.getElementById('slots-title').scrollIntoView()",
        vec![],
    )
    .await
    .unwrap();
    screenshot(&c, "reports-slots").await;
    // Its CSV holds the same rows.
    let slots_href = c
        .find(Locator::Id("slots-csv"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let (status, csv) = https(&base, "GET", &slots_href, &cookie, None).await;
    assert_eq!(status, 200);
    let csv = String::from_utf8(csv).unwrap();
    let got: Vec<(String, String, i64, i64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].into(),
                f[4].into(),
                f[7].parse().unwrap(),
                f[9].parse().unwrap(),
            )
        })
        .collect();
    let want_slots: Vec<(String, String, i64, i64)> = want
        .periods
        .iter()
        .filter(|p| p.name != "gaming_day")
        .flat_map(|p| {
            p.slot_rows.iter().map(|r| {
                (
                    p.name.clone(),
                    r.machine_id.clone(),
                    r.wagered_cents,
                    r.takings_cents,
                )
            })
        })
        .collect();
    assert_eq!(got, want_slots, "{csv}");
    // ledgerctl report --machines prints the same rows (the same reporting module).
    let (code, out, err) = ledgerctl_as(
        "e2e-compliance",
        &[
            "report",
            "--day",
            &day,
            "--machines",
            "--format",
            "csv",
            "--server",
            &ledgerd.url(),
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let cli: Vec<(String, String, i64, i64)> = out
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].into(),
                f[4].into(),
                f[7].parse().unwrap(),
                f[9].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(cli, want_slots, "{out}");
    // Significant events of the day: a row per machine of the day, counts as GetMachineEvents
    // gives them, and the CSV holds the same counts.
    let day_period = &want.periods[0];
    let day_machines: Vec<&v1::SlotReportRow> = day_period
        .slot_rows
        .iter()
        .filter(|r| r.machine_id != "*")
        .collect();
    click_and_load(&c, "#events-link").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/reports/events");
    screenshot(&c, "events").await;
    let event_rows = c
        .find_all(Locator::Css("#events-day tbody tr"))
        .await
        .unwrap();
    assert_eq!(event_rows.len(), day_machines.len().max(1));
    let mut jackpots = ledger_core::proto::jackpots_client::JackpotsClient::new(
        ledger_agent::connect(&ledgerd.url()).await.unwrap(),
    );
    let mut want_total = 0u64;
    for m in &day_machines {
        let v: serde_json::Value = serde_json::from_str(
            &jackpots
                .get_machine_events(v1::MachineEventsRequest {
                    machine_id: m.machine_id.clone(),
                    from_ms: Some(day_period.from_ms),
                    to_ms: Some(day_period.to_ms),
                    kinds: jackpot::EVENT_KINDS
                        .iter()
                        .filter(|k| !k.starts_with("game_"))
                        .map(|k| k.to_string())
                        .collect(),
                    limit: 10_000,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .json,
        )
        .unwrap();
        want_total += v["counts"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum::<u64>();
    }
    let events_href = c
        .find(Locator::Id("events-csv"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    let (status, csv) = https(&base, "GET", &events_href, &cookie, None).await;
    assert_eq!(status, 200);
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.starts_with("gaming_day,casino,machine,kind,count\r\n"),
        "{csv}"
    );
    let csv_total: u64 = csv
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(csv_total, want_total, "{csv}");
    let csv_machines: BTreeSet<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap())
        .collect();
    assert_eq!(
        csv_machines,
        day_machines.iter().map(|m| m.machine_id.as_str()).collect()
    );

    // --- a finding's review: acknowledged in the browser, recorded in the ledger for ana's
    // principal (e2e-compliance); `ledgerctl verify` accepts the chain at the end
    let mut query = ledger_core::proto::query_client::QueryClient::new(
        ledger_agent::connect(&ledgerd.url()).await.unwrap(),
    );
    let head_before = query
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner()
        .index;
    c.goto(&format!(
        "{base}/findings?code={}&status=open",
        with_round.code
    ))
    .await
    .unwrap();
    let open = finding_rows(&c).await;
    assert!(!open.is_empty(), "open findings of {}", with_round.code);
    let reviewed_seq = open[0].0;
    click_and_load(&c, "#findings td.status a").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/finding");
    assert!(text(&c, "#finding-status").await.contains("open"));
    assert!(c.find(Locator::Id("history-empty")).await.is_ok());
    c.find(Locator::Css("#review input[value='acknowledge']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.find(Locator::Id("comment"))
        .await
        .unwrap()
        .send_keys("seen in the browser")
        .await
        .unwrap();
    click_and_load(&c, "#review button[type=submit]").await;
    assert_eq!(c.current_url().await.unwrap().path(), "/finding");
    assert!(
        text(&c, "#finding-status").await.contains("acknowledged"),
        "{}",
        c.source().await.unwrap()
    );
    let entry: u64 = text(&c, "#history tbody tr td.entry")
        .await
        .parse()
        .unwrap();
    assert!(
        entry > head_before,
        "a new ledger entry {entry} > {head_before}"
    );
    screenshot(&c, "finding").await;
    // The entry is the ledger's record of the review, naming ana's principal.
    let stored = query
        .get_entry(v1::GetEntryRequest { index: entry })
        .await
        .unwrap()
        .into_inner();
    let record = ledger_core::record::decode_ledger_record(&stored.body)
        .unwrap()
        .record;
    let Some(v1::ledger_record_body::Record::FindingReviewed(r)) = record else {
        panic!("entry {entry} is not a review: {record:?}");
    };
    assert_eq!(
        (r.principal.as_str(), r.comment.as_str(), r.finding_seq),
        ("e2e-compliance", "seen in the browser", reviewed_seq)
    );
    // The status filter finds it; a second acknowledgement is refused and says why.
    c.goto(&format!(
        "{base}/findings?code={}&status=acknowledged",
        with_round.code
    ))
    .await
    .unwrap();
    assert_eq!(
        finding_rows(&c)
            .await
            .iter()
            .map(|r| r.0)
            .collect::<Vec<_>>(),
        [reviewed_seq]
    );
    // The exports carry the review status the page shows.
    let (status, csv) = https(
        &base,
        "GET",
        &format!("/findings.csv?code={}", with_round.code),
        &cookie,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let csv = String::from_utf8(csv).unwrap();
    let statuses: BTreeMap<u64, String> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split(',');
            let seq = f.next().unwrap().parse().unwrap();
            (seq, f.nth(3).unwrap().to_string())
        })
        .collect();
    assert_eq!(statuses[&reviewed_seq], "acknowledged", "{csv}");
    assert!(
        statuses
            .iter()
            .all(|(s, st)| *s == reviewed_seq || st == "open"),
        "{csv}"
    );
    let (status, xlsx) = https(
        &base,
        "GET",
        &format!(
            "/findings.xlsx?code={}&status=acknowledged",
            with_round.code
        ),
        &cookie,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let mut wb: calamine::Xlsx<_> =
        calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).expect("an XLSX workbook");
    let sheet = wb.worksheet_range("findings").expect("the findings sheet");
    let rows: Vec<(u64, String)> = sheet
        .rows()
        .skip(1)
        .map(|r| {
            (
                r[0].to_string().parse::<f64>().unwrap() as u64,
                r[4].to_string(),
            )
        })
        .collect();
    assert_eq!(rows, [(reviewed_seq, "acknowledged".to_string())]);
    let csrf_form = format!(
        "csrf={}&id={}&action=acknowledge",
        c.find(Locator::Css("form[action='/signout'] input[name=csrf]"))
            .await
            .unwrap()
            .attr("value")
            .await
            .unwrap()
            .unwrap(),
        r.finding_id
    );
    let (status, body) = https(&base, "POST", "/finding/review", &cookie, Some(&csrf_form)).await;
    assert_eq!(status, 409, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("already acknowledged"));
    let (status, _) = https(
        &base,
        "POST",
        "/finding/review",
        &cookie,
        Some(&format!(
            "id={}&action=resolve&comment=forged",
            r.finding_id
        )),
    )
    .await;
    assert_eq!(status, 403, "a review without the CSRF token");

    // --- Jackpots: declared against held
    c.goto(&format!("{base}/jackpots")).await.unwrap();
    assert!(
        c.find_all(Locator::Css("#pools tbody tr"))
            .await
            .unwrap()
            .len()
            >= 2
    );
    screenshot(&c, "jackpots").await;
    let mut held: BTreeSet<String> = BTreeSet::new();
    for td in c
        .find_all(Locator::Css("#liabilities tbody td:first-child"))
        .await
        .unwrap()
    {
        held.insert(td.text().await.unwrap());
    }
    assert_eq!(held, BTreeSet::from(["lisboa".into(), "porto".into()]));
    assert!(text(&c, "#trust-total").await.starts_with('€'));

    // --- pt-PT: the language switch
    click_and_load(&c, "a[hreflang='pt-PT']").await;
    assert_eq!(
        c.find(Locator::Css("html"))
            .await
            .unwrap()
            .attr("lang")
            .await
            .unwrap()
            .as_deref(),
        Some("pt-PT")
    );
    assert_eq!(
        c.current_url().await.unwrap().path(),
        "/jackpots",
        "back where it was"
    );
    c.goto(&format!("{base}/findings?code={}", with_round.code))
        .await
        .unwrap();
    assert_eq!(text(&c, "main h1").await, "Constatações");
    let rows = finding_rows(&c).await;
    let f = audit
        .list_findings(v1::ListFindingsRequest {
            code: with_round.code.clone(),
            limit: 50,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .findings;
    let d = f[0].due_cents.expect("the planted mistake's due amount");
    // `1 234,56 €`, with no-break spaces in the page (WebDriver's text shows them as spaces).
    let pt = ledger_fmt::money(d, ledger_fmt::Locale::PtPt);
    assert!(pt.ends_with("\u{a0}€"), "{pt}");
    assert_eq!(rows[0].2[DUE], pt.replace('\u{a0}', " "));
    // (the DOM, serialised by the browser, writes them as entities)
    let dom = c.source().await.unwrap();
    assert!(
        dom.contains(&pt.replace('\u{a0}', "&nbsp;")),
        "{pt:?} in the page"
    );
    screenshot(&c, "findings-pt").await;
    click_and_load(&c, "a[hreflang='en']").await;
    assert_eq!(text(&c, "main h1").await, "Findings");

    // --- lia, compliance of lisboa, never sees porto's data
    sign_out(&c).await;
    assert_eq!(c.current_url().await.unwrap().path(), "/signin");
    c.goto(&format!("{base}/findings")).await.unwrap();
    assert_eq!(
        c.current_url().await.unwrap().path(),
        "/signin",
        "signed out"
    );
    sign_in(&c, &base, "lia", LIA_PW).await;
    c.goto(&format!("{base}/findings")).await.unwrap();
    let rows = finding_rows(&c).await;
    assert!(
        !rows.is_empty(),
        "{}: {}",
        c.current_url().await.unwrap(),
        c.source().await.unwrap()
    );
    assert!(
        rows.iter().all(|r| r.2[CASINO] == "lisboa"),
        "only lisboa's findings"
    );
    // Asking for porto by hand: ledgerd refuses, nothing of porto's is shown.
    c.goto(&format!("{base}/findings?casino=porto"))
        .await
        .unwrap();
    assert!(finding_rows(&c).await.is_empty());
    assert!(c.find(Locator::Css("p.error")).await.is_ok());
    // porto's rounds are as unknown as rounds that do not exist.
    let porto = audit
        .list_findings(v1::ListFindingsRequest {
            casino_id: "porto".into(),
            limit: 1000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .findings;
    let porto_round = porto
        .iter()
        .find(|f| !f.round_id.is_empty())
        .expect("a finding in a round of porto");
    c.goto(&format!(
        "{base}/round?table={}&round={}",
        porto_round.table_id, porto_round.round_id
    ))
    .await
    .unwrap();
    assert!(c.find_all(Locator::Css("#bets")).await.unwrap().is_empty());
    assert!(text(&c, "p.error").await.contains("Not found"));
    c.goto(&format!("{base}/devices")).await.unwrap();
    let mut casinos = BTreeSet::new();
    for row in c
        .find_all(Locator::Css("#devices tbody tr td:nth-child(3)"))
        .await
        .unwrap()
    {
        casinos.insert(row.text().await.unwrap());
    }
    assert!(!casinos.contains("porto"), "{casinos:?}");
    // Another casino's device history is as unknown as a device that does not exist.
    let porto_device = session
        .devices
        .iter()
        .find(|d| d.casino_id == "porto")
        .expect("a device of porto");
    c.goto(&format!("{base}/device?id={}", porto_device.device_id))
        .await
        .unwrap();
    assert!(
        c.find_all(Locator::Id("device-history"))
            .await
            .unwrap()
            .is_empty()
    );
    let refused = text(&c, "p.error").await;
    assert!(
        refused.contains(&format!(
            "no device {} in the casinos",
            porto_device.device_id
        )),
        "{refused}"
    );
    // Reports: lisboa's rows only, and no all-casinos total.
    c.goto(&format!("{base}/reports?day={day}")).await.unwrap();
    let mut report_casinos = BTreeSet::new();
    for th in c
        .find_all(Locator::Css(
            "#report-year tbody tr td:first-child, #report-year tbody tr th",
        ))
        .await
        .unwrap()
    {
        report_casinos.insert(th.text().await.unwrap());
    }
    assert_eq!(report_casinos, BTreeSet::from(["lisboa".to_string()]));
    let mut slot_casinos = BTreeSet::new();
    for td in c
        .find_all(Locator::Css(
            "#slots-year tbody tr td:first-child, #slots-year tbody tr th",
        ))
        .await
        .unwrap()
    {
        slot_casinos.insert(td.text().await.unwrap());
    }
    assert_eq!(slot_casinos, BTreeSet::from(["lisboa".to_string()]));
    // Held in trust: lisboa's liability only, without the all-casinos total.
    c.goto(&format!("{base}/jackpots")).await.unwrap();
    let mut held: BTreeSet<String> = BTreeSet::new();
    for td in c
        .find_all(Locator::Css("#liabilities tbody td:first-child"))
        .await
        .unwrap()
    {
        held.insert(td.text().await.unwrap());
    }
    assert_eq!(held, BTreeSet::from(["lisboa".to_string()]));
    assert!(c.find(Locator::Id("trust-total")).await.is_err());
    c.close().await.unwrap();

    // The chain with the review verifies.
    let data = ledgerd.data_dir.clone();
    ledgerd.stop();
    let (code, out, err) = ledgerctl(&["verify", "--data-dir", data.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 finding review(s)"), "{out}");
}

const RUI_PW: &str = "rui: inspector's own";

/// A channel to `url` as test client `client`.
async fn channel_as(url: &str, client: &str) -> tonic::transport::Channel {
    let p = pki();
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(
            std::fs::read(p.ca()).unwrap(),
        ))
        .identity(tonic::transport::Identity::from_pem(
            std::fs::read(p.cert(client)).unwrap(),
            std::fs::read(p.key(client)).unwrap(),
        ));
    tonic::transport::Endpoint::from_shared(url.to_string())
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .unwrap()
}

async fn pool_activity(
    url: &str,
    client: &str,
    pool: &str,
) -> Result<jackpot::PoolActivity, tonic::Status> {
    pool_activity_from(url, client, pool, None).await
}

/// [`pool_activity`] of the lines received from `from_ms` on.
async fn pool_activity_from(
    url: &str,
    client: &str,
    pool: &str,
    from_ms: Option<i64>,
) -> Result<jackpot::PoolActivity, tonic::Status> {
    let doc =
        ledger_core::proto::jackpots_client::JackpotsClient::new(channel_as(url, client).await)
            .get_pool_activity(v1::PoolActivityRequest {
                pool_id: pool.into(),
                buckets: 0,
                max_items: 1_000,
                from_ms,
                to_ms: None,
            })
            .await?
            .into_inner();
    Ok(serde_json::from_str(&doc.json).unwrap())
}

async fn head_length(url: &str) -> u64 {
    ledger_core::proto::query_client::QueryClient::new(channel_as(url, "e2e-regulator").await)
        .get_head(v1::GetHeadRequest {})
        .await
        .unwrap()
        .into_inner()
        .length
}

/// The cells of each row of table `css` (its `th` and `td`, in order).
async fn table_rows(c: &Client, css: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for tr in c
        .find_all(Locator::Css(&format!("{css} tbody tr")))
        .await
        .unwrap()
    {
        let mut cells = Vec::new();
        for td in tr.find_all(Locator::Css("th, td")).await.unwrap() {
            cells.push(td.text().await.unwrap());
        }
        out.push(cells);
    }
    out
}

/// The Jackpots pages (a pool's history chart, its awards, its transfers with their validity,
/// the reconciliation) and the Overview's mirrors, on the standard session with a running mirror:
/// the console over the source naming the mirror (a casino's deployment) and a console over the
/// mirror itself (the regulator's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jackpot_activity_and_mirrors_lag_in_a_browser() {
    let dir = tempdir();
    // Jackpots won more often than in the standard plan, so that the session awards some.
    let (ledgerd, session) = two_casinos_with(dir.path(), |plan| {
        for (pool, odds) in &mut plan.hit_odds {
            if pool.as_str() != "JP-LX-02" {
                *odds = 300;
            }
        }
    })
    .await;
    let url = ledgerd.url();
    // A mirror of the ledger, caught up.
    let mdir = dir.path().join("mirror");
    std::fs::create_dir_all(&mdir).unwrap();
    let p = pki();
    let mcfg = e2e::slots::write_config_with_regulator_and(
        &mdir,
        &format!(
            "[mirror]\nsource = \"{url}\"\nsource_ledger_id = \"e2e\"\nsource_ledger_key = \"{}\"\ntls_ca = {:?}\ntls_cert = {:?}\ntls_key = {:?}\npoll_ms = 100\n",
            ledgerd.ledger_key,
            p.ca(),
            p.cert("e2e-regulator"),
            p.key("e2e-regulator"),
        ),
    );
    let mirror = Ledgerd::start(&mdir.join("data"), &mcfg, "127.0.0.1:0");
    let head =
        ledger_core::proto::query_client::QueryClient::new(channel_as(&url, "e2e-regulator").await)
            .get_head(v1::GetHeadRequest {})
            .await
            .unwrap()
            .into_inner();
    let mut mc = ledger_core::proto::mirror_client::MirrorClient::new(
        channel_as(&mirror.url(), "e2e-regulator").await,
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        let s = mc
            .get_status(v1::GetMirrorStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        if s.mirrored_entries >= head.length && s.connected {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the mirror did not catch up: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(status.alarms, 0);

    // rui: the regulator's account (may read mirrors' status); both consoles know it.
    let rui = format!(
        "[[accounts]]\nname = \"rui\"\ndisplay_name = \"Rui Inspetor\"\npassword_hash = \"{}\"\nclient_cert = {:?}\nclient_key = {:?}\n",
        hash_password(RUI_PW),
        p.cert("e2e-regulator"),
        p.key("e2e-regulator"),
    );
    let (_console, base) = start_console_with(
        dir.path(),
        "console.toml",
        &url,
        &ledgerd.ledger_key,
        &format!(
            "{rui}[[mirrors]]\nname = \"regulator-mirror\"\naddress = \"{}\"\n",
            mirror.url()
        ),
    );
    let (_mconsole, mbase) = start_console_with(
        dir.path(),
        "console-mirror.toml",
        &mirror.url(),
        &ledgerd.ledger_key,
        &rui,
    );
    let (_driver, c) = browser().await;

    // --- Overview over the source: the configured mirror, caught up, no alarm.
    sign_in(&c, &base, "rui", RUI_PW).await;
    assert_eq!(c.current_url().await.unwrap().path(), "/");
    let rows = table_rows(&c, "#mirrors").await;
    let after = head_length(&url).await;
    assert_eq!(
        rows.len(),
        1,
        "the configured mirror only (the source is no mirror): {rows:?}"
    );
    let fmt = |n: u64| ledger_fmt::integer(n as i64, ledger_fmt::Locale::En);
    assert_eq!(rows[0][0], "regulator-mirror");
    assert_eq!(rows[0][1], mirror.url());
    assert_eq!(rows[0][5], "0", "no alarm");
    assert_eq!(rows[0][6], "following");
    assert_eq!(
        after, head.length,
        "nothing was added to the source meanwhile"
    );
    assert_eq!(
        rows[0][2],
        fmt(head.length),
        "its position: every entry of the source"
    );
    assert_eq!(rows[0][3], "0", "no entry behind");
    assert_eq!(rows[0][4], "0.0 s");
    screenshot(&c, "overview-mirrors").await;
    sign_out(&c).await;

    // --- Overview over the mirror (the regulator's console): this ledger is the mirror.
    sign_in(&c, &mbase, "rui", RUI_PW).await;
    let rows = table_rows(&c, "#mirrors").await;
    let after = head_length(&url).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0][0], "This ledger (a mirror)");
    assert_eq!(rows[0][1], url, "its source");
    assert_eq!(rows[0][5], "0");
    assert_eq!(after, head.length);
    assert_eq!(rows[0][2], fmt(head.length));
    assert_eq!(rows[0][3], "0");
    assert_eq!(rows[0][4], "0.0 s");
    sign_out(&c).await;

    // --- ana (compliance, every casino): the mirror's status is the regulator's and admin's to
    // read: the row says so; Overview of a console without mirrors has no Mirrors section.
    sign_in(&c, &base, "ana", ANA_PW).await;
    let rows = table_rows(&c, "#mirrors").await;
    assert_eq!(rows.len(), 1);
    assert!(rows[0][2].contains("PermissionDenied"), "{rows:?}");
    sign_out(&c).await;
    sign_in(&c, &mbase, "ana", ANA_PW).await;
    assert!(
        c.find(Locator::Id("mirrors")).await.is_err(),
        "nothing where there is none to show"
    );
    sign_out(&c).await;

    // --- Jackpots: every pool links to its page; a declaration reconciles against what was
    // held at that moment.
    sign_in(&c, &base, "rui", RUI_PW).await;
    c.goto(&format!("{base}/jackpots")).await.unwrap();
    let pools = ledger_core::proto::jackpots_client::JackpotsClient::new(
        channel_as(&url, "e2e-regulator").await,
    )
    .list_pools(v1::ListPoolsRequest {})
    .await
    .unwrap()
    .into_inner()
    .pools;
    let rows = table_rows(&c, "#pools").await;
    assert_eq!(rows.len(), pools.len());
    for (row, p) in rows.iter().zip(&pools) {
        assert_eq!(row[0], p.pool_id);
        if let (Some(d), Some(h)) = (p.last_reported_cents, p.last_reported_held_cents) {
            let en = |c| ledger_fmt::money(c, ledger_fmt::Locale::En);
            assert_eq!(row[5], en(d), "{row:?}");
            assert_eq!(row[6], en(h), "held at the declaration: {row:?}");
            assert!(
                row[7].starts_with(&ledger_fmt::money_signed(d - h, ledger_fmt::Locale::En)),
                "{row:?}"
            );
            assert_eq!(row[7].ends_with("NOT reconciled"), !p.reconciled, "{row:?}");
        }
    }
    screenshot(&c, "jackpots-reconciliation").await;

    // The transfer of the failed machine's pool (the session's force-majeure story): out of
    // JP-LX-02 into SJP-TEJO, booked, invalid under r.6 with its citation.
    click_and_load(&c, "#pools a[href='/jackpot?pool=JP-LX-02']").await;
    assert_eq!(text(&c, "main h1").await, "Jackpot JP-LX-02");
    let t = table_rows(&c, "#transfers").await;
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0][1], "TR-JP-LX-02-1");
    assert_eq!(t[0][2], "out to SJP-TEJO");
    assert!(t[0][5].starts_with("invalid"), "{t:?}");
    assert!(t[0][5].contains("SLOT_TRANSFER_TARGET_INVALID"), "{t:?}");
    assert!(t[0][5].contains("P217/2007 T.III r.6"), "{t:?}");
    // The history chart: a step line with its points, and their figures.
    assert!(
        c.find(Locator::Css("main svg.chart path")).await.is_ok(),
        "the history chart"
    );
    let lx = pool_activity(&url, "e2e-regulator", "JP-LX-02")
        .await
        .unwrap();
    assert!(lx.series.len() >= 2, "{:?}", lx.series);
    assert_eq!(
        c.find_all(Locator::Css("main svg.chart circle"))
            .await
            .unwrap()
            .len(),
        lx.series.len()
    );
    // A period: from the time of the transfer on, the transfer and no line before it; from
    // later than the last line, nothing.
    let t = lx.transfers[0].at_ms;
    let since = pool_activity_from(&url, "e2e-regulator", "JP-LX-02", Some(t))
        .await
        .unwrap();
    assert_eq!(since.transfers, lx.transfers);
    assert!(since.from > lx.from && since.to == lx.to, "{since:?}");
    assert!(
        since.series.iter().all(|p| p.at_ms >= t),
        "{:?}",
        since.series
    );
    let later = pool_activity_from(
        &url,
        "e2e-regulator",
        "JP-LX-02",
        Some(now_ms() + 3_600_000),
    )
    .await
    .unwrap();
    assert!(later.series.is_empty() && later.transfers.is_empty() && later.from == later.to);
    let last = lx.series.last().unwrap();
    assert_eq!(
        last.captive_e4, 0,
        "the source restarts at 0 after the transfer (r.5)"
    );
    screenshot(&c, "jackpot-pool").await;
    c.execute(
        "document.getElementById('transfers').scrollIntoView();",
        vec![],
    )
    .await
    .unwrap();
    screenshot(&c, "jackpot-transfers").await;
    click_and_load(&c, "a[href='/jackpot?pool=JP-LX-02&days=all']").await;
    assert_eq!(
        text(&c, "main nav strong[aria-current]").await,
        "the whole history"
    );
    assert_eq!(table_rows(&c, "#transfers").await.len(), 1);
    // The same transfer at its target, judged the same.
    c.goto(&format!("{base}/jackpot?pool=SJP-TEJO"))
        .await
        .unwrap();
    let t = table_rows(&c, "#transfers").await;
    assert!(
        t.iter().any(|r| r[2] == "in from JP-LX-02"
            && r[5].starts_with("invalid")
            && r[5].contains("r.6")),
        "{t:?}"
    );

    // An award of the session, on its pool's page: when, machine, amount.
    let awards: Vec<v1::JackpotAwarded> = session
        .events
        .iter()
        .filter_map(|e| match &e.payload {
            v1::event_body::Payload::JackpotAwarded(a) => Some(a.clone()),
            _ => None,
        })
        .collect();
    let a = awards
        .last()
        .expect("the standard session awards a jackpot");
    c.goto(&format!("{base}/jackpot?pool={}", a.pool_id))
        .await
        .unwrap();
    let rows = table_rows(&c, "#awards").await;
    let paid = ledger_fmt::money(a.amount_cents, ledger_fmt::Locale::En);
    assert!(
        rows.iter().any(|r| r[1] == a.machine_id && r[3] == paid),
        "{} on {} for {paid}: {rows:?}",
        a.pool_id,
        a.machine_id
    );
    screenshot(&c, "jackpot-award").await;
    sign_out(&c).await;

    // --- Scoping: lia (lisboa only) cannot see porto's pool, and of the joint superjackpot
    // sees no award won on a porto machine.
    let e = pool_activity(&url, "lisboa-compliance", "JP-ES-02")
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e:?}");
    let all = pool_activity(&url, "e2e-regulator", "SJP-TEJO")
        .await
        .unwrap();
    let lia = pool_activity(&url, "lisboa-compliance", "SJP-TEJO")
        .await
        .unwrap();
    assert!(
        lia.awards.iter().all(|a| a.member.starts_with("M-LX-")),
        "{:?}",
        lia.awards
    );
    assert_eq!(
        lia.awards.len(),
        all.awards
            .iter()
            .filter(|a| a.member.starts_with("M-LX-"))
            .count()
    );
    assert_eq!(
        lia.series, all.series,
        "the pool's value is the pool's, as its totals"
    );
    sign_in(&c, &base, "lia", LIA_PW).await;
    c.goto(&format!("{base}/jackpot?pool=JP-ES-02"))
        .await
        .unwrap();
    assert!(
        text(&c, "main").await.contains("Not found"),
        "{}",
        text(&c, "main").await
    );
    c.goto(&format!("{base}/jackpot?pool=JP-LX-02"))
        .await
        .unwrap();
    assert_eq!(table_rows(&c, "#transfers").await.len(), 1);
    c.close().await.unwrap();
    drop(mirror);
}
