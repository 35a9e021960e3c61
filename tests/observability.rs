//! The monitoring kit in `deploy/`: the Prometheus alert rules and the Grafana dashboard. Every
//! PromQL expression in them must parse (promql-parser, a port of Prometheus's grammar and type
//! checks), and every metric they name must be one a real ledgerd exports: a source with the
//! live audit, `[replication]` and `[export.nats]`, and a mirror of it, both scraped over TLS.
//! The same run shows the new gauges move: the replication gate degraded and back, the mirror
//! caught up.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use e2e::*;
use promql_parser::parser::{self, Expr};

/// Series Prometheus makes itself for each target.
const PROMETHEUS_OWN: &[&str] = &["up"];

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(deploy(path)).unwrap_or_else(|e| panic!("deploy/{path}: {e}"))
}

/// The metric names an expression selects (every selector must name one).
fn names(e: &Expr, out: &mut BTreeSet<String>) -> Result<(), String> {
    match e {
        Expr::VectorSelector(v) => match &v.name {
            Some(n) => {
                out.insert(n.clone());
            }
            None => return Err(format!("a selector without a metric name: {v}")),
        },
        Expr::MatrixSelector(m) => {
            return names(&Expr::VectorSelector(m.vs.clone()), out);
        }
        Expr::Aggregate(a) => {
            names(&a.expr, out)?;
            if let Some(p) = &a.param {
                names(p, out)?;
            }
        }
        Expr::Unary(u) => names(&u.expr, out)?,
        Expr::Binary(b) => {
            names(&b.lhs, out)?;
            names(&b.rhs, out)?;
        }
        Expr::Paren(p) => names(&p.expr, out)?,
        Expr::Subquery(s) => names(&s.expr, out)?,
        Expr::Call(c) => {
            for a in &c.args.args {
                names(a, out)?;
            }
        }
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) => {}
        Expr::Extension(_) => return Err("an extension expression".into()),
    }
    Ok(())
}

/// Parse `expr` and add the metrics it names to `out`; the error names `what`.
fn check_promql(what: &str, expr: &str, out: &mut BTreeSet<String>) {
    let ast =
        parser::parse(expr).unwrap_or_else(|e| panic!("{what}: {expr:?} does not parse: {e}"));
    names(&ast, out).unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// Every rule of the alert rules file: (alert name, expression), after checking its shape.
fn alert_rules() -> Vec<(String, String)> {
    let v: serde_json::Value =
        serde_norway::from_str(&read("prometheus/ledgerd-alerts.yml")).expect("rules YAML");
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let groups = v["groups"].as_array().expect("groups");
    assert!(!groups.is_empty());
    for g in groups {
        let group = g["name"].as_str().expect("a group's name");
        for r in g["rules"].as_array().expect("rules") {
            let alert = r["alert"]
                .as_str()
                .unwrap_or_else(|| panic!("{group}: a rule without `alert`: {r}"));
            assert!(seen.insert(alert.to_string()), "{alert} twice");
            let expr = r["expr"]
                .as_str()
                .unwrap_or_else(|| panic!("{alert}: no expr"));
            if let Some(f) = r.get("for") {
                let f = f.as_str().unwrap_or_else(|| panic!("{alert}: `for` {f}"));
                // A duration in PromQL's own syntax (as Prometheus reads `for`).
                parser::parse(&format!("up[{f}]"))
                    .unwrap_or_else(|e| panic!("{alert}: for: {f:?}: {e}"));
            }
            let sev = r["labels"]["severity"].as_str();
            assert!(
                matches!(sev, Some("critical" | "warning")),
                "{alert}: severity {sev:?}"
            );
            assert!(
                r["annotations"]["summary"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty()),
                "{alert}: a summary"
            );
            let allowed: BTreeSet<&str> = ["alert", "expr", "for", "labels", "annotations"].into();
            for k in r.as_object().expect("a rule").keys() {
                assert!(allowed.contains(k.as_str()), "{alert}: unknown key {k}");
            }
            out.push((alert.to_string(), expr.to_string()));
        }
    }
    out
}

/// Grafana's variables, replaced by what Grafana would put there, so the rest is PromQL.
fn grafana_to_promql(expr: &str) -> String {
    expr.replace("$__rate_interval", "1m")
        .replace("$__interval", "1m")
        .replace("$__range", "1h")
}

/// Every query of the dashboard: (panel title, PromQL), after checking its shape; and the
/// metrics of its `label_values(metric, label)` variables.
fn dashboard_queries() -> (Vec<(String, String)>, BTreeSet<String>) {
    let d: serde_json::Value =
        serde_json::from_str(&read("grafana/ledgerd-dashboard.json")).expect("dashboard JSON");
    assert!(
        d["uid"]
            .as_str()
            .is_some_and(|u| !u.is_empty() && u.len() <= 40)
    );
    assert!(d["title"].as_str().is_some());
    let mut ids = BTreeSet::new();
    let mut out = Vec::new();
    let mut flat = Vec::new();
    for p in d["panels"].as_array().expect("panels") {
        flat.push(p);
        if let Some(inner) = p["panels"].as_array() {
            flat.extend(inner);
        }
    }
    for p in flat {
        let id = p["id"].as_u64().expect("a panel id");
        assert!(ids.insert(id), "panel id {id} twice");
        let title = p["title"].as_str().expect("a title").to_string();
        let pos = &p["gridPos"];
        let (x, w) = (pos["x"].as_u64(), pos["w"].as_u64());
        assert!(
            matches!((x, w), (Some(x), Some(w)) if w > 0 && x + w <= 24) && pos["y"].is_u64(),
            "{title}: gridPos {pos}"
        );
        if p["type"] == "row" {
            continue;
        }
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{title}");
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title}: no query");
        for t in targets {
            let expr = t["expr"]
                .as_str()
                .unwrap_or_else(|| panic!("{title}: expr"));
            out.push((title.clone(), grafana_to_promql(expr)));
        }
    }
    let mut variables = BTreeSet::new();
    for v in d["templating"]["list"].as_array().expect("templating") {
        if v["type"] != "query" {
            continue;
        }
        let q = v["query"]["query"].as_str().expect("a variable's query");
        let inner = q
            .strip_prefix("label_values(")
            .and_then(|q| q.strip_suffix(')'))
            .unwrap_or_else(|| panic!("variable query {q}"));
        let (selector, _label) = inner.rsplit_once(',').expect("label_values(metric, label)");
        check_promql("a dashboard variable", selector.trim(), &mut variables);
    }
    (out, variables)
}

/// Every metric the rules and the dashboard name, each parsed.
fn used_metrics() -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for (alert, expr) in alert_rules() {
        check_promql(&alert, &expr, &mut used);
    }
    let (queries, variables) = dashboard_queries();
    for (title, expr) in queries {
        check_promql(&title, &expr, &mut used);
    }
    used.extend(variables);
    used
}

/// Offline: both files load and every expression parses (the parser refuses what Prometheus
/// refuses, so this is no formality).
#[test]
fn the_alert_rules_and_the_dashboard_parse() {
    assert!(parser::parse("rate(ledger_accepted_events_total)").is_err());
    assert!(parser::parse("sum by (instance) ledger_head_index[5m] +").is_err());
    let used = used_metrics();
    for signal in [
        "ledger_acknowledging",
        "ledger_accepted_events_total",
        "ledger_slow_syncs_total",
        "ledger_audit_following",
        "ledger_audit_lag_seconds",
        "ledger_witness_refusals_total",
        "ledger_mirror_lag_seconds",
        "ledger_mirror_alarms_total",
        "ledger_export_nats_lag_seconds",
        "ledger_replication_degraded",
        "ledger_data_dir_available_bytes",
        "ledger_clock_steps_total",
        "ledger_limit_refusals_total",
    ] {
        assert!(used.contains(signal), "nothing watches {signal}");
    }
    let (alerts, _) = (alert_rules(), ());
    assert!(alerts.len() >= 20, "{} alerts", alerts.len());
}

/// A free loopback address (bound, then let go).
fn free_addr() -> std::net::SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
}

/// The metrics text of the `[metrics]` listener at `at`, as the admin, over TLS offering `h2`
/// before `http/1.1` in ALPN as Prometheus does (its `enable_http2` is on by default): the
/// listener must choose HTTP/1.1, which it serves.
fn scrape(at: std::net::SocketAddr) -> String {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::io::{Read, Write};
    let p = pki();
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(p.ca()).expect("ca.pem"))
        .expect("a CA");
    let chain = vec![CertificateDer::from_pem_file(p.cert("e2e-admin")).expect("cert")];
    let key = PrivateKeyDer::from_pem_file(p.key("e2e-admin")).expect("key");
    let mut cfg = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_client_auth_cert(chain, key)
    .expect("client certificate");
    cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let name = rustls::pki_types::ServerName::try_from(at.ip().to_string()).expect("an IP");
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(cfg), name).expect("client");
    let tcp = std::net::TcpStream::connect(at).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut s = rustls::StreamOwned::new(conn, tcp);
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("request");
    assert_eq!(
        s.conn.alpn_protocol(),
        Some(&b"http/1.1"[..]),
        "the metrics listener negotiates HTTP/1.1"
    );
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8(out).expect("utf-8");
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    text.split_once("\r\n\r\n").expect("a body").1.to_string()
}

/// The metric names of a scrape: its samples', and its families' (`# TYPE`, with a histogram's
/// series), so that a family with no series yet (findings by code before the first) counts.
fn exported(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for l in text.lines().filter(|l| !l.is_empty()) {
        if let Some(t) = l.strip_prefix("# TYPE ") {
            let (name, kind) = t.split_once(' ').expect("# TYPE name kind");
            names.insert(name.to_string());
            if kind == "histogram" {
                for s in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{s}"));
                }
            }
        } else if !l.starts_with('#') {
            names.insert(l.split(['{', ' ']).next().unwrap_or_default().to_string());
        }
    }
    names
}

/// The value of the sample `series` (name and labels as printed).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

/// Scrape `at` until `ok` holds of the text (a minute at most: e2e machines are shared).
fn scrape_until(at: std::net::SocketAddr, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let t = scrape(at);
        if ok(&t) {
            return t;
        }
        assert!(Instant::now() < deadline, "{what} within a minute:\n{t}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_alerts_and_the_dashboard_use_is_exported_by_ledgerd() {
    let dir = tempdir();
    // NATS and the witness are nowhere: their metrics must be there all the same.
    let (src_metrics, mirror_metrics) = (free_addr(), free_addr());
    let (nats, witness) = (free_addr(), free_addr());
    let scfg = {
        let d = dir.path().join("src-cfg");
        std::fs::create_dir_all(&d).unwrap();
        write_config(
            &d,
            &format!(
                "[metrics]\nlisten = \"{src_metrics}\"\n[audit]\nenabled = true\n\
                 [replication]\nrequired_mirrors = 1\nmirrors = [\"e2e-regulator\"]\n\
                 on_lag = \"degrade\"\ntimeout_ms = 200\n\
                 [export.nats]\nservers = [\"nats://{nats}\"]\nstream = \"E2E_OBSERVABILITY\"\n\
                 [[witnesses]]\nname = \"w1\"\nurl = \"http://{witness}\"\npublic_key = \"{}\"\n",
                hex::encode(operator_key().verifying_key().as_bytes()),
            ),
        )
    };
    let src = Ledgerd::start(&dir.path().join("src"), &scfg, "127.0.0.1:0");
    // No mirror yet: the registration's receipts go out local-only after 200 ms.
    register(&src.url(), 1, &[table("table-1", "t1")]).await;
    let s = scrape_until(src_metrics, "the gate degraded", |t| {
        value(t, "ledger_replication_degraded") == Some(1.0)
    });
    assert!(
        value(&s, "ledger_replication_degradations_total") >= Some(1.0),
        "{s}"
    );
    assert_eq!(value(&s, "ledger_replication_required_mirrors"), Some(1.0));
    assert_eq!(value(&s, "ledger_export_nats_connected"), Some(0.0), "{s}");
    assert!(
        value(&s, "ledger_export_nats_lag_entries") > Some(0.0),
        "{s}"
    );

    // A mirror: once it holds everything, it lags by nothing, and a new group's receipts wait
    // for it again (the gate is no longer degraded).
    let mcfg = {
        let d = dir.path().join("mirror-cfg");
        std::fs::create_dir_all(&d).unwrap();
        let p = pki();
        write_config(
            &d,
            &format!(
                "[metrics]\nlisten = \"{mirror_metrics}\"\n[mirror]\nsource = \"{}\"\n\
                 source_ledger_id = \"e2e\"\nsource_ledger_key = \"{}\"\ntls_ca = {:?}\n\
                 tls_cert = {:?}\ntls_key = {:?}\npoll_ms = 100\n",
                src.url(),
                src.ledger_key,
                p.ca(),
                p.cert("e2e-regulator"),
                p.key("e2e-regulator"),
            ),
        )
    };
    let mirror = Ledgerd::start(&dir.path().join("mirror"), &mcfg, "127.0.0.1:0");
    let m = scrape_until(mirror_metrics, "the mirror caught up", |t| {
        value(t, "ledger_mirror_connected") == Some(1.0)
            && value(t, "ledger_mirror_lag_entries") == Some(0.0)
            && value(t, "ledger_mirror_lag_seconds") == Some(0.0)
    });
    assert_eq!(value(&m, "ledger_mirror_alarms_total"), Some(0.0), "{m}");
    register(&src.url(), 2, &[table("table-2", "t2")]).await;
    let s = scrape_until(src_metrics, "the gate waiting for the mirror again", |t| {
        value(t, "ledger_replication_degraded") == Some(0.0)
    });
    let head = value(&s, "ledger_head_index").expect("head");
    assert!(
        value(&s, "ledger_replication_entries") >= Some(head),
        "the mirror holds what was acknowledged:\n{s}"
    );

    let mut have = exported(&s);
    have.extend(exported(&m));
    for n in PROMETHEUS_OWN {
        have.insert(n.to_string());
    }
    let used = used_metrics();
    let missing: Vec<&String> = used.iter().filter(|n| !have.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "deploy/ names metrics ledgerd does not export: {missing:?}\nexported: {have:?}"
    );
    mirror.stop();
    src.stop();
}

/// `cargo tree -p ledgerd -e normal` with these features: the crate names, one a line.
fn ledgerd_tree(features: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut c = std::process::Command::new(cargo);
    // Not --offline: a fresh CARGO_HOME holds only what the default build downloaded.
    c.args(["tree", "-p", "ledgerd", "-e", "normal", "--prefix", "none"])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if !features.is_empty() {
        c.arg("--features").arg(features.join(","));
    }
    let out = c.output().expect("cargo tree");
    assert!(out.status.success(), "cargo tree: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// OTLP export is a build feature: the default build links no OpenTelemetry crate, the `otel`
/// build does (so this check can fail).
#[test]
fn the_default_build_links_no_opentelemetry() {
    let count = |t: &str| t.lines().filter(|l| l.contains("opentelemetry")).count();
    assert_eq!(count(&ledgerd_tree(&[])), 0);
    let with = ledgerd_tree(&["otel"]);
    assert!(count(&with) > 0, "{with}");
    assert!(with.contains("tracing-opentelemetry"), "{with}");
}
