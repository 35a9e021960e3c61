//! Deployment: ledgerd tells systemd it is ready and alive (a fake `NOTIFY_SOCKET`, the Unix
//! datagram socket systemd reads, here read by the test), and the files in deploy/ (systemd
//! unit, container build, Kubernetes manifests) hold what they must, checked offline.

use std::os::unix::net::UnixDatagram;
use std::time::Duration;

use e2e::*;

/// The datagrams on `sock` until one contains `want` (each within `within`), in order.
fn until(sock: &UnixDatagram, want: &str, within: Duration) -> Vec<String> {
    sock.set_read_timeout(Some(within)).unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = sock
            .recv(&mut buf)
            .unwrap_or_else(|e| panic!("no {want:?} after {seen:?}: {e}"));
        let msg = String::from_utf8_lossy(&buf[..n]).into_owned();
        let done = msg.lines().any(|l| l == want);
        seen.push(msg);
        if done {
            return seen;
        }
    }
}

/// Under systemd (Type=notify, WatchdogSec=): READY=1 once ledgerd serves (it printed its
/// address), WATCHDOG=1 again and again at half the interval systemd gives, STOPPING=1 when
/// SIGTERM stops it.
#[test]
fn ledgerd_notifies_systemd_ready_alive_and_stopping() {
    let dir = tempdir();
    let path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&path).unwrap();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::try_start_with_env(
        &dir.path().join("data"),
        &cfg,
        "127.0.0.1:0",
        &[
            ("NOTIFY_SOCKET", path.as_os_str()),
            // 200 ms: a keep-alive every 100 ms.
            ("WATCHDOG_USEC", "200000".as_ref()),
        ],
    )
    .unwrap_or_else(|e| panic!("ledgerd did not start: {e}"));
    let first = until(&sock, "READY=1", Duration::from_secs(30));
    assert_eq!(first.len(), 1, "READY=1 comes first: {first:?}");
    assert!(
        first[0].contains(&format!("STATUS=serving on {}", l.addr)),
        "{first:?}"
    );
    for _ in 0..3 {
        let pings = until(&sock, "WATCHDOG=1", Duration::from_secs(30));
        assert_eq!(pings.len(), 1, "{pings:?}");
    }
    let pid = l.child.id().to_string();
    l.stop();
    let last = until(&sock, "STOPPING=1", Duration::from_secs(5));
    assert!(
        last.iter()
            .take(last.len() - 1)
            .all(|m| m == "WATCHDOG=1\n"),
        "{last:?} (pid {pid})"
    );
}

/// Without a watchdog for this process (WATCHDOG_PID names another), ledgerd sends READY=1
/// and no keep-alives.
#[test]
fn no_keep_alives_without_a_watchdog_for_this_process() {
    let dir = tempdir();
    let path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&path).unwrap();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::try_start_with_env(
        &dir.path().join("data"),
        &cfg,
        "127.0.0.1:0",
        &[
            ("NOTIFY_SOCKET", path.as_os_str()),
            ("WATCHDOG_USEC", "200000".as_ref()),
            ("WATCHDOG_PID", "1".as_ref()),
        ],
    )
    .unwrap_or_else(|e| panic!("ledgerd did not start: {e}"));
    until(&sock, "READY=1", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(700));
    l.stop();
    let rest = until(&sock, "STOPPING=1", Duration::from_secs(5));
    assert_eq!(rest.len(), 1, "no WATCHDOG=1 expected: {rest:?}");
}

fn deploy(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(deploy(path)).unwrap_or_else(|e| panic!("deploy/{path}: {e}"))
}

/// Every YAML document of deploy/kubernetes/NAME, as JSON values.
fn yaml_docs(name: &str) -> Vec<serde_json::Value> {
    use serde::Deserialize;
    let text = read(&format!("kubernetes/{name}"));
    serde_norway::Deserializer::from_str(&text)
        .map(|d| serde_json::Value::deserialize(d).unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect()
}

fn s<'a>(v: &'a serde_json::Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(|x| x.as_str())
        .unwrap_or_else(|| panic!("{pointer} is not a string in {v:#}"))
}

fn arr<'a>(v: &'a serde_json::Value, pointer: &str) -> &'a Vec<serde_json::Value> {
    v.pointer(pointer)
        .and_then(|x| x.as_array())
        .unwrap_or_else(|| panic!("{pointer} is not a list in {v:#}"))
}

/// The Kubernetes manifests parse, are all in the kustomization, and refer to one another
/// consistently; the pod runs non-root on a read-only root with no capabilities, is probed by
/// `ledgerctl health`, has limits, keeps its ledger on a claimed volume, and its configuration
/// (which ledgerd parses) names the mounted TLS files, the volume and the container's ports.
#[test]
fn the_kubernetes_manifests_hold_together() {
    let kustomization = &yaml_docs("kustomization.yaml")[0];
    let mut listed: Vec<String> = arr(kustomization, "/resources")
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    let mut files: Vec<String> = std::fs::read_dir(deploy("kubernetes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") && n != "kustomization.yaml")
        .collect();
    files.sort();
    assert_eq!(listed, files, "kustomization.yaml lists every manifest");

    let docs: Vec<serde_json::Value> = files.iter().flat_map(|f| yaml_docs(f)).collect();
    let one = |kind: &str| -> &serde_json::Value {
        let of: Vec<_> = docs.iter().filter(|d| d["kind"] == kind).collect();
        assert_eq!(of.len(), 1, "one {kind}");
        of[0]
    };
    let namespace = s(one("Namespace"), "/metadata/name");
    assert_eq!(s(kustomization, "/namespace"), namespace);
    for d in docs.iter().filter(|d| d["kind"] != "Namespace") {
        assert_eq!(s(d, "/metadata/namespace"), namespace, "{d:#}");
    }
    let (sts, svc, np, cm) = (
        one("StatefulSet"),
        one("Service"),
        one("NetworkPolicy"),
        one("ConfigMap"),
    );

    // One writer; labels and selectors agree.
    assert_eq!(sts["spec"]["replicas"], 1, "a ledger has one writer");
    assert_eq!(s(sts, "/spec/serviceName"), s(svc, "/metadata/name"));
    assert_eq!(
        s(svc, "/spec/clusterIP"),
        "None",
        "headless for the StatefulSet"
    );
    let labels = &sts["spec"]["template"]["metadata"]["labels"];
    let selector = &sts["spec"]["selector"]["matchLabels"];
    for (k, v) in selector.as_object().unwrap() {
        assert_eq!(&labels[k], v, "the pod template carries the selector's {k}");
    }
    assert_eq!(&svc["spec"]["selector"], selector);
    assert_eq!(&np["spec"]["podSelector"]["matchLabels"], selector);

    // Pod and container security.
    let pod = &sts["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert!(pod["securityContext"]["runAsUser"].as_u64().unwrap() > 0);
    assert_eq!(pod["automountServiceAccountToken"], false);
    let containers = arr(pod, "/containers");
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    let sc = &c["securityContext"];
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(sc["capabilities"]["drop"], serde_json::json!(["ALL"]));
    assert!(
        c["resources"]["limits"]["memory"].is_string(),
        "a memory limit"
    );
    assert!(
        c["resources"]["requests"]["cpu"].is_string(),
        "a CPU request"
    );
    for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
        let cmd = arr(c, &format!("/{probe}/exec/command"));
        assert!(
            cmd[0].as_str().unwrap().ends_with("/ledgerctl") && cmd[1] == "health",
            "{probe}: {cmd:?}"
        );
    }

    // Arguments: no --init (a lost volume must stop ledgerd), the config and data paths mounted.
    let args: Vec<&str> = arr(c, "/args")
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(!args.contains(&"--init"), "{args:?}");
    let after = |flag: &str| {
        args.iter()
            .position(|a| *a == flag)
            .and_then(|i| args.get(i + 1))
            .copied()
            .unwrap_or_else(|| panic!("{flag} in {args:?}"))
    };
    let mounts = arr(c, "/volumeMounts");
    let mount = |path: &str| -> &serde_json::Value {
        mounts
            .iter()
            .find(|m| path.starts_with(s(m, "/mountPath")))
            .unwrap_or_else(|| panic!("nothing mounted at {path}"))
    };
    let volumes = arr(pod, "/volumes");
    let volume = |name: &str| volumes.iter().find(|v| v["name"] == name);
    let claims = arr(sts, "/spec/volumeClaimTemplates");
    for m in mounts {
        let name = s(m, "/name");
        assert!(
            volume(name).is_some() || claims.iter().any(|t| t["metadata"]["name"] == name),
            "volume {name} is declared"
        );
    }
    let data_dir = after("--data-dir");
    let data = mount(data_dir);
    assert_eq!(s(data, "/mountPath"), data_dir);
    assert!(
        claims.iter().any(|t| t["metadata"]["name"] == data["name"]),
        "the data directory is a claimed volume"
    );
    let config_path = after("--config");
    let cfg_mount = mount(config_path);
    let cfg_volume = volume(s(cfg_mount, "/name")).unwrap();
    assert_eq!(
        s(cfg_volume, "/configMap/name"),
        s(cm, "/metadata/name"),
        "the configuration comes from the ConfigMap"
    );
    let toml = s(cm, &format!("/data/{}", s(cfg_mount, "/subPath")));
    let cfg = ledgerd::Config::parse(toml).unwrap_or_else(|e| panic!("ledgerd.toml: {e}"));
    assert_eq!(
        cfg.data_dir.as_deref(),
        Some(std::path::Path::new(data_dir))
    );
    assert!(cfg.store.require_safe_filesystem);

    // Every TLS file (ledgerd's and the probes') is an item of the mounted Secret.
    let tls = cfg.transport().unwrap().expect("TLS, not plaintext");
    assert!(tls.require_client_cert);
    let env = arr(c, "/env");
    let env_path = |name: &str| {
        env.iter()
            .find(|e| e["name"] == name)
            .map(|e| std::path::PathBuf::from(s(e, "/value")))
            .unwrap_or_else(|| panic!("{name} in the container's env"))
    };
    let files = [tls.cert_chain.clone(), tls.key.clone()]
        .into_iter()
        .chain(tls.client_ca.iter().cloned())
        .chain(["LEDGER_CA", "LEDGER_CERT", "LEDGER_KEY"].map(env_path));
    for f in files {
        let f = f.to_str().unwrap();
        let m = mount(f);
        let v = volume(s(m, "/name")).unwrap();
        assert!(
            v["secret"]["secretName"].is_string(),
            "{f} comes from a Secret"
        );
        let item = f
            .strip_prefix(s(m, "/mountPath"))
            .unwrap()
            .trim_start_matches('/');
        assert!(
            arr(v, "/secret/items").iter().any(|i| i["path"] == item),
            "{f}: {item} is an item of the Secret"
        );
    }
    let secret = &volume("tls").unwrap()["secret"];
    let mode = secret["defaultMode"].as_u64().unwrap();
    assert_eq!(mode & 0o007, 0, "keys not readable by others: {mode:o}");
    assert_ne!(
        mode & 0o040,
        0,
        "readable by the pod's group (fsGroup): {mode:o}"
    );

    // Ports: the configuration's listeners are the container's ports, the Service's targets
    // and the NetworkPolicy's.
    let port = |name: &str| {
        arr(c, "/ports")
            .iter()
            .find(|p| p["name"] == name)
            .and_then(|p| p["containerPort"].as_u64())
            .unwrap_or_else(|| panic!("container port {name}"))
    };
    assert_eq!(u64::from(cfg.listen.port()), port("grpc"));
    assert_eq!(
        u64::from(cfg.metrics.listen.expect("metrics").port()),
        port("metrics")
    );
    for p in arr(svc, "/spec/ports") {
        port(s(p, "/targetPort"));
    }
    let allowed: Vec<u64> = arr(np, "/spec/ingress")
        .iter()
        .flat_map(|r| arr(r, "/ports").iter().map(|p| p["port"].as_u64().unwrap()))
        .collect();
    assert_eq!(allowed, vec![port("grpc"), port("metrics")]);
}

/// The container build: no build output in its context, a health check by `ledgerctl health`,
/// a non-root user, and no configuration, keys or principals baked in.
#[test]
fn the_container_build_is_lean_healthy_and_holds_no_configuration() {
    let ignore = std::fs::read_to_string(deploy("../.dockerignore")).expect(".dockerignore");
    assert!(ignore.lines().any(|l| l.trim() == "target"), "{ignore}");
    assert!(ignore.lines().any(|l| l.trim() == ".git"), "{ignore}");
    let file = read("Containerfile");
    let lines: Vec<&str> = file
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    let healthcheck = lines
        .iter()
        .position(|l| l.starts_with("HEALTHCHECK"))
        .expect("a HEALTHCHECK");
    assert!(
        lines[healthcheck..healthcheck + 2]
            .concat()
            .contains("\"ledgerctl\", \"health\"")
            || lines[healthcheck..healthcheck + 2]
                .concat()
                .contains("/ledgerctl\", \"health\""),
        "{}",
        lines[healthcheck]
    );
    let user = lines
        .iter()
        .rev()
        .find(|l| l.starts_with("USER "))
        .expect("USER");
    assert!(!user.contains("root") && !user.contains(" 0"), "{user}");
    for l in &lines {
        assert!(
            !(l.starts_with("COPY")
                && (l.contains(".toml") || l.contains(".key") || l.contains(".pem"))),
            "configuration or keys baked in: {l}"
        );
    }
}

/// The systemd unit waits for READY=1 and watches the keep-alives, and keeps its hardening.
#[test]
fn the_systemd_unit_is_type_notify_with_a_watchdog() {
    let unit = read("ledgerd.service");
    let values = |key: &str| -> Vec<&str> {
        unit.lines()
            .filter_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .collect()
    };
    assert_eq!(values("Type"), ["notify"]);
    assert_eq!(values("NotifyAccess"), ["main"]);
    assert_eq!(values("WatchdogSec").len(), 1);
    assert!(
        values("RestrictAddressFamilies")[0].contains("AF_UNIX"),
        "sd_notify's socket"
    );
    for (key, want) in [
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("PrivateDevices", "yes"),
        ("CapabilityBoundingSet", ""),
        ("MemoryDenyWriteExecute", "yes"),
        ("DynamicUser", "yes"),
    ] {
        assert_eq!(values(key), [want], "{key}");
    }
    assert!(!values("ExecStart")[0].contains("--init"));
}

/// `ledgerctl health` (the container's HEALTHCHECK, the pod's probes): status 0 and "serving"
/// from a running ledgerd, for a principal of any role; status 1 naming the address when nothing
/// serves there.
#[test]
fn ledgerctl_health_says_whether_ledgerd_serves() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let (code, out, err) = ledgerctl_as("e2e-device", &["health", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.trim(), format!("{url}: serving"));
    let (code, out, _) = ledgerctl_as(
        "e2e-device",
        &[
            "health",
            "--server",
            &url,
            "--service",
            "casino_ledger.v1.Ingest",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["status"],
        "serving"
    );
    l.stop();
    let (code, out, err) = ledgerctl_as("e2e-device", &["health", "--server", &url]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains(&url), "{err}");
}

/// ledgerctl with the TLS files of `tls` (a directory `ledgerctl init` wrote) as `client`.
fn ledgerctl_with(tls: &std::path::Path, client: &str, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(bin("ledgerctl"))
        .args(args)
        .env("LEDGER_CA", tls.join("ca.pem"))
        .env("LEDGER_CERT", tls.join(format!("{client}.pem")))
        .env("LEDGER_KEY", tls.join(format!("{client}.key")))
        .output()
        .expect("run ledgerctl");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `ledgerctl init DIR` writes a deployment ledgerd serves as it is: the ledger created with
/// the key init wrote (pinned in the configuration), its admin answered with init's
/// certificates, a client of another CA refused, and a restart without --init serves it again.
#[test]
fn ledgerd_serves_what_init_wrote() {
    let dir = tempdir();
    let d = dir.path().join("deployment");
    let (code, out, err) = ledgerctl(&["init", d.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let written: serde_json::Value = serde_json::from_str(&out).unwrap();
    let data = std::path::PathBuf::from(written["data_dir"].as_str().unwrap());
    let config = d.join("ledgerd.toml");
    let l = Ledgerd::start(&data, &config, "127.0.0.1:0");
    assert_eq!(
        Some(l.ledger_key.as_str()),
        written["ledger_public_key"].as_str()
    );
    let url = l.url();
    let tls = d.join("tls");
    let (code, out, err) = ledgerctl_with(&tls, "admin", &["--json", "status", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["ledger_public_key"],
        written["ledger_public_key"]
    );
    let (code, out, err) = ledgerctl_with(&tls, "probe", &["health", "--server", &url]);
    assert_eq!(code, 0, "{out}{err}");
    // The test suite's own clients are of another CA.
    let (code, _, _) = ledgerctl_as("e2e-admin", &["status", "--server", &url]);
    assert_ne!(code, 0);
    l.stop();
    let again = Ledgerd::start(&data, &config, "127.0.0.1:0");
    assert_eq!(
        Some(again.ledger_key.as_str()),
        written["ledger_public_key"].as_str()
    );
    again.stop();
    // init never overwrites.
    let (code, _, err) = ledgerctl(&["init", d.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("not empty"), "{err}");
}

/// The demo leaves DIR/ledgerd.toml, and ledgerd serves the demo's ledger from it (no --init),
/// to the demo's client certificate.
#[test]
fn ledgerd_serves_the_ledger_the_demo_left() {
    let dir = tempdir();
    let d = dir.path().join("demo");
    // Without the suite's TLS variables: the demo makes its own certificates. (30 rounds: with
    // fewer, some injected mistakes have no round to land in and the demo reports a failure.)
    // A relative --data-dir, as the README's `ledgerctl demo` (demo-data) is: the files the
    // configuration it leaves names must be found from anywhere.
    let out = std::process::Command::new(bin("ledgerctl"))
        .args(["--json", "demo", "--rounds", "30", "--data-dir", "demo"])
        .current_dir(dir.path())
        .output()
        .expect("run ledgerctl demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // The evidence bundle of a disputed round the demo wrote checks offline.
    // (Named as the demo was given its directory: from where it ran.)
    let evidence = dir.path().join(
        doc["evidence"]["file"]
            .as_str()
            .expect("an evidence bundle"),
    );
    let evidence = evidence.to_str().unwrap();
    let key = doc["verify"]["ledger_public_key"]
        .as_str()
        .expect("the ledger key");
    let witness = doc["evidence"]["witness_key"]
        .as_str()
        .expect("the witness's key");
    let (code, out, err) = ledgerctl(&[
        "verify",
        "--evidence",
        evidence,
        "--ledger-key",
        key,
        "--witness-key",
        witness,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("findings follow from the events"), "{out}");
    assert!(
        out.contains("cosigned by witness inspectorate.demo/w1"),
        "{out}"
    );
    // The mirror the demo ran beside its ledger ended holding the ledger's head, with its live
    // audit's digest the ledger's, and its copy verifies on its own.
    let m = &doc["mirror"];
    assert_eq!(m["equal"], true, "{m}");
    assert_eq!(m["alarms"], 0, "{m}");
    assert_eq!(m["entries"], doc["verify"]["entries"], "{m}");
    assert_eq!(m["head_hash"], doc["verify"]["head_hash"], "{m}");
    let digest = &doc["live_audit"]["findings_digest"];
    assert!(digest.as_str().is_some_and(|d| d.len() == 64), "{doc}");
    assert_eq!(&m["findings_digest"], digest, "{m}");
    assert_eq!(&m["source_findings_digest"], digest, "{m}");
    assert_eq!(m["findings"], doc["live_audit"]["findings"], "{m}");
    assert!(
        doc["checks"].as_array().unwrap().iter().any(|c| c["check"]
            .as_str()
            .unwrap()
            .contains("mirror")
            && c["ok"] == true),
        "{doc}"
    );
    let mirror_dir = d.join("mirror");
    let (code, out, err) = ledgerctl(&[
        "--json",
        "verify",
        "--data-dir",
        mirror_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["head_hash"], doc["verify"]["head_hash"], "{v}");
    assert_eq!(v["ledger_public_key"], key, "{v}");
    let config = std::path::PathBuf::from(doc["config"].as_str().expect("config in the output"));
    assert_eq!(
        config,
        std::fs::canonicalize(&d).unwrap().join("ledgerd.toml")
    );
    let l = Ledgerd::start(&d.join("ledger"), &config, "127.0.0.1:0");
    let (code, out, err) = ledgerctl_with(
        &d.join("pki"),
        "demo-regulator",
        &["--json", "status", "--server", &l.url()],
    );
    assert_eq!(code, 0, "{out}{err}");
    let status: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(status["head_index"].as_u64().unwrap() > 100, "{status}");
    assert_eq!(status["ledger_public_key"], l.ledger_key.as_str());
    l.stop();
}

/// The demo's text tells the mirror's story: it starts beside the ledger, and at the end both
/// live audits' findings digests are printed, equal, and checked; `--no-mirror` runs none.
#[test]
fn the_demo_runs_a_mirror_and_prints_its_digest_equal_to_the_ledgers() {
    let dir = tempdir();
    let run = |d: &std::path::Path, extra: &[&str]| {
        let out = std::process::Command::new(bin("ledgerctl"))
            .args(["demo", "--rounds", "30", "--data-dir", d.to_str().unwrap()])
            .args(extra)
            .output()
            .expect("run ledgerctl demo");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let d = dir.path().join("demo");
    let out = run(&d, &[]);
    let after = |label: &str| -> String {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no line {label:?} in\n{out}"));
        line.trim_start()[label.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let live = after("live audit (GetStatus):");
    assert_eq!(live.len(), 64, "{out}");
    assert_eq!(after("ledger's live audit (GetStatus):"), live, "{out}");
    assert_eq!(after("mirror's live audit (GetStatus):"), live, "{out}");
    let mirror_dir = d.join("mirror");
    assert!(
        out.contains("mirror started on https://127.0.0.1:")
            && out.contains(&format!(
                "mirror {}: holds the ledger's head",
                mirror_dir.display()
            )),
        "{out}"
    );
    assert!(
        out.contains("[ok] the mirror holds the ledger's head; its live digest = the ledger's"),
        "{out}"
    );
    assert!(mirror_dir.join("db").exists());
    let out = run(&dir.path().join("alone"), &["--no-mirror"]);
    assert!(!out.contains("mirror"), "{out}");
    assert!(!dir.path().join("alone").join("mirror").exists());
}

/// The README's "Run a ledger by hand" block, run line by line by bash (`set -e`: any line that
/// fails fails the test) in an empty directory, as a newcomer would paste it: only the build is
/// left out (the binaries under test stand in for target/release) and the port is a free one.
#[test]
fn the_readmes_by_hand_section_runs_line_by_line() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    let from = readme
        .find("**Run a ledger by hand.**")
        .expect("the by-hand section");
    let block = readme[from..]
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .expect("its shell block")
        .0;
    let bins = bin("ledgerctl").parent().expect("target dir").to_path_buf();
    // The block on a free port: picked by binding and letting go, so another test's ledgerd
    // (listening on port 0) may take it first. Then ledgerd cannot listen, and the block runs
    // again on another one; any other failure is the README's.
    let mut attempt = 0;
    let (script, dir, out, log) = loop {
        attempt += 1;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut script = String::from("set -e\n");
        for line in block.lines() {
            if line.starts_with("cargo build") {
                continue; // built already
            }
            let line = line.replace("B=target/release", &format!("B={}", bins.display()));
            script += &line.replace("127.0.0.1:50051", &format!("127.0.0.1:{port}"));
            script.push('\n');
        }
        assert!(script.contains("ledgerd --config ledgerd.toml"), "{script}");
        let dir = tempdir();
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(dir.path())
            .env_remove("LEDGER_CA")
            .env_remove("LEDGER_CERT")
            .env_remove("LEDGER_KEY")
            // ledgerctl's default server is 127.0.0.1:50051; the test's port instead.
            .env("LEDGER_SERVER", format!("127.0.0.1:{port}"))
            .env("LEDGER_STATE_DIR", dir.path().join("state"))
            .output()
            .expect("bash");
        let log = std::fs::read_to_string(dir.path().join("ledgerd.log")).unwrap_or_default();
        let port_taken = !out.status.success() && log.contains("cannot listen on");
        if !port_taken || attempt == 3 {
            break (script, dir, out, log);
        }
    };
    let _keep = &dir;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "the README's block failed ({}):\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n--- ledgerd.log\n{log}",
        out.status
    );
    // What the lines claim: the proof checked, the export and the stopped ledger verified.
    assert!(
        stdout.contains("OK: entry 2 (operator-1 #1 device_registered"),
        "{stdout}"
    );
    assert!(stdout.contains("OK ledger.jsonl: 3 entries"), "{stdout}");
    assert!(stdout.contains("OK ./ledger-data: 3 entries"), "{stdout}");
    assert!(log.contains("ledgerd stopped cleanly"), "{log}");
}

/// A demo too short for its injected mistakes is refused before anything is written, naming
/// `--rounds`; an honest demo of a few rounds passes every check of its own (the equivocation
/// drill reuses a sequence the machine has used; the evidence bundle is of an honest round).
#[test]
fn a_short_demo_is_refused_by_its_flag_and_a_short_honest_one_passes() {
    let dir = tempdir();
    let d = dir.path().join("demo");
    let run = |extra: &[&str]| {
        std::process::Command::new(bin("ledgerctl"))
            .args(["demo", "--no-mirror", "--data-dir", d.to_str().unwrap()])
            .args(extra)
            .output()
            .expect("run ledgerctl demo")
    };
    let out = run(&["--rounds", "5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--rounds 5"), "{err}");
    assert!(!d.exists(), "nothing is written");
    let out = run(&["--rounds", "3", "--honest"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("demo OK") && !text.contains("FAILED"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("evidence of the round "), "{text}");
}
