//! The command lines themselves, against the real binaries: ledgerctl with its stdout a pipe
//! nobody reads (`| head`), its errors under `--json`, `LEDGER_SERVER`; ledgerd's startup.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use e2e::*;

/// The workspace's root (docs/rounds/...).
fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

/// Run ledgerctl with its stdout a pipe whose reader is already closed (what `| head -1` leaves
/// once head has its line); returns (exit status, stderr). Killed after 30 s.
fn ledgerctl_into_closed_pipe(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut child = Command::new(bin("ledgerctl"))
        .args(args)
        .envs(tls_env(DEFAULT_CLIENT))
        .envs(env.iter().copied())
        .current_dir(root())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ledgerctl");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Every command that writes to stdout ends quietly with status 0 when its reader has gone,
/// where std's println! panicked with "Broken pipe" (exit 101); `tail`, which waits for new
/// entries with nothing to print, notices too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_every_command_quietly() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    register(&url, 1, &[table("table-1", "T1"), table("table-2", "T2")]).await;
    let server = [("LEDGER_SERVER", url.as_str())];
    for args in [
        &["tail", "--from", "0"][..],
        &["--json", "tail", "--from", "0"],
        &["tail"], // from the head: nothing to print, ever
        &["device", "list"],
        &["device", "entries", "--device-id", "operator-1"],
        &["status"],
        &["--json", "status"],
        &["checkpoint"],
        &["findings"],
        &["adjudicate", "docs/rounds/blackjack.json", "--explain"],
        &["adjudicate", "docs/rounds/blackjack.json"],
        &["--help"],
    ] {
        let (code, stderr) = ledgerctl_into_closed_pipe(args, &server);
        assert_eq!(code, Some(0), "ledgerctl {args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "ledgerctl {args:?}: {stderr}"
        );
    }
    l.stop();
}

/// Under `--json` a failing command says why in one JSON line on stdout, `{"error": "..."}`,
/// usage errors too, with the usual status; without it, `error: ...` on stderr.
#[test]
fn errors_are_json_under_json() {
    let dir = tempdir();
    let missing = dir.path().join("missing.json");
    let nowhere = "http://127.0.0.1:1";
    for (args, status, says) in [
        (
            vec!["--json", "status", "--server", nowhere],
            1,
            "is ledgerd running at http://127.0.0.1:1",
        ),
        (
            vec!["tail", "--json", "--server", nowhere, "--from", "0"],
            1,
            "is ledgerd running",
        ),
        (
            vec!["--json", "adjudicate", missing.to_str().unwrap()],
            1,
            "cannot read",
        ),
        (
            vec![
                "--json",
                "export",
                "--out",
                "x.jsonl",
                "--data-dir",
                missing.to_str().unwrap(),
            ],
            1,
            "missing.json",
        ),
        (vec!["--json", "findings", "--bogus"], 2, "--bogus"),
        (vec!["--json", "no-such-command"], 2, "no-such-command"),
    ] {
        let (code, stdout, stderr) = ledgerctl(&args);
        assert_eq!(code, status, "{args:?}: {stdout} {stderr}");
        let line = stdout.trim();
        assert_eq!(line.lines().count(), 1, "{args:?}: {stdout}");
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"));
        let error = v["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{args:?}: {v}"));
        assert!(error.contains(says), "{args:?}: {error}");
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
    }
    // Without --json: plain text on stderr, nothing on stdout.
    let (code, stdout, stderr) = ledgerctl(&["status", "--server", nowhere]);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(stderr.starts_with("error: is ledgerd running"), "{stderr}");
}

/// `LEDGER_SERVER` names the ledger for every command that talks to one, export included
/// (which ignored it), and an explicit --data-dir still exports a directory when it is set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ledger_server_names_the_ledger_for_every_command() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    register(&url, 1, &[table("table-1", "T1")]).await;
    let export = dir.path().join("export.jsonl");
    let run = |args: &[&str]| {
        let out = Command::new(bin("ledgerctl"))
            .args(args)
            .envs(tls_env(DEFAULT_CLIENT))
            .env("LEDGER_SERVER", &url)
            .output()
            .expect("run ledgerctl");
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    for args in [
        &["status"][..],
        &["tail", "--from", "0", "--limit", "1"],
        &["device", "list"],
        &["device", "entries", "--device-id", "operator-1"],
        &["checkpoint"],
        &["findings"],
        &["audit"],
        &["report", "--day", "today"],
        &["jackpot", "liability"],
        &["export", "--out", export.to_str().unwrap()],
    ] {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, Some(0), "ledgerctl {args:?}: {stdout}{stderr}");
    }
    let (code, stdout, stderr) = run(&["verify", "--file", export.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("3 entries"), "{stdout}");
    // A directory, with LEDGER_SERVER set: the directory (here one that is not a ledger).
    let (code, _, stderr) = run(&[
        "export",
        "--out",
        export.to_str().unwrap(),
        "--data-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("holds no ledger"), "{stderr}");
    l.stop();
}

/// ledgerd started at `RUST_LOG=info` with `extra` configuration, until it serves, then
/// stopped with SIGTERM: everything it wrote on stderr.
fn ledgerd_stderr(extra: &str) -> String {
    use std::io::{BufRead, BufReader, Read};
    let dir = tempdir();
    let cfg = write_config(dir.path(), extra);
    let mut child = Command::new(bin("ledgerd"))
        .args([
            "--init",
            "--config",
            cfg.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .env("RUST_LOG", "info")
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ledgerd");
    let mut stderr = child.stderr.take().expect("stderr");
    let collected = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut line = String::new();
    let _ = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
    assert!(line.starts_with("ledgerd listening on"), "{line}");
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(child.wait().expect("wait").success());
    collected.join().expect("stderr reader")
}

/// ledgerd's log into a pipe (a file, journald, a container) carries no terminal colour codes;
/// `[log] format = "json"` makes it one JSON object per line.
#[test]
fn ledgerd_logs_plain_without_colour_into_a_pipe_or_as_json() {
    let plain = ledgerd_stderr("");
    assert!(plain.contains("ledgerd serving"), "{plain}");
    assert!(!plain.contains('\x1b'), "escape codes in {plain:?}");
    let json = ledgerd_stderr("[log]\nformat = \"json\"\n");
    let mut messages = Vec::new();
    for line in json.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(
            v["level"].is_string() && v["timestamp"].is_string(),
            "{line}"
        );
        messages.push(v["fields"]["message"].as_str().unwrap_or("").to_string());
    }
    assert!(messages.iter().any(|m| m == "ledgerd serving"), "{json}");
    assert!(
        messages.iter().any(|m| m == "ledgerd stopped cleanly"),
        "{json}"
    );
    // ledgerctl's log too.
    let out = Command::new(bin("ledgerctl"))
        .args(["status", "--server", "http://127.0.0.1:1"])
        .env("RUST_LOG", "debug")
        .env_remove("NO_COLOR")
        .output()
        .expect("run ledgerctl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("DEBUG"), "{stderr}");
    assert!(!stderr.contains('\x1b'), "escape codes in {stderr:?}");
}

/// ledgerd binds its listeners before it creates or opens anything in the data directory: with
/// the gRPC or the metrics address taken, it exits non-zero naming the address, and the data
/// directory it would have created does not exist (it created a new ledger there, then failed).
#[test]
fn an_address_in_use_leaves_the_data_directory_as_it_was() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let at = taken.local_addr().unwrap().to_string();
    let dir = tempdir();
    let data = dir.path().join("data");
    for (extra, listen, says) in [
        ("", at.as_str(), format!("cannot listen on {at}")),
        (
            &format!("[metrics]\nlisten = \"{at}\"\n")[..],
            "127.0.0.1:0",
            format!("cannot listen on {at} (metrics.listen)"),
        ),
    ] {
        let cfg = write_config(dir.path(), extra);
        let out = Command::new(bin("ledgerd"))
            .args(["--config", cfg.to_str().unwrap(), "--listen", listen])
            .arg("--data-dir")
            .arg(&data)
            .output()
            .expect("run ledgerd");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(&says), "{stderr}");
        assert!(
            !data.exists(),
            "ledgerd created {} before it failed",
            data.display()
        );
    }
    drop(taken);
}

/// `ledgerctl completions SHELL` prints a completion script that knows the subcommands and
/// their flags; `ledgerctl man` prints ledgerctl(1), and with --dir writes a page per
/// subcommand; an unknown shell is a usage error naming the shells; a closed stdout is quiet.
#[test]
fn completions_and_man_pages_come_from_the_command_line_itself() {
    let (code, bash, err) = ledgerctl(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        bash.contains("_ledgerctl()") && bash.contains("--from"),
        "{bash:.300}"
    );
    assert!(
        bash.contains("ledgerctl__subcmd__tail") && bash.contains("ledgerctl__subcmd__init"),
        "{bash:.300}"
    );
    let (code, zsh, _) = ledgerctl(&["completions", "zsh"]);
    assert_eq!(code, 0);
    assert!(zsh.starts_with("#compdef ledgerctl"), "{zsh:.100}");
    let (code, _, err) = ledgerctl(&["completions", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("possible values: bash"), "{err}");

    let (code, page, _) = ledgerctl(&["man"]);
    assert_eq!(code, 0);
    assert!(page.contains(".TH ledgerctl 1"), "{page:.300}");
    assert!(
        page.contains("ledgerctl\\-tail(1)"),
        "subcommands listed: {page:.2000}"
    );
    let dir = tempdir();
    let (code, out, err) = ledgerctl(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let tail = std::fs::read_to_string(dir.path().join("ledgerctl-tail.1")).expect("tail's page");
    assert!(tail.contains("\\-\\-from"), "{tail}");
    assert!(dir.path().join("ledgerctl-jackpot-transfer.1").is_file());
    assert!(dir.path().join("ledgerctl.1").is_file());

    let (code, err) = ledgerctl_into_closed_pipe(&["completions", "fish"], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

/// `tail` and `device entries` show each event's own fields (the proto's JSON mapping), in
/// text and under --json, not only its type.
#[tokio::test]
async fn tail_and_device_entries_show_the_events_fields() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut t = register(&url, 1, &[table("T1", "BJ-1")]).await;
    let t1 = &mut t[0];
    let r = submit(&url, &[t1.sign(now_ms(), bet("BJ-1", "R-77", 5))]).await;
    assert_eq!(st(&r[0]), ledger_core::proto::ReceiptStatus::Accepted);

    // Every entry so far, and no more: tail then ends instead of waiting for new ones.
    let (code, out, _) = ledgerctl(&["--json", "status", "--server", &url]);
    assert_eq!(code, 0, "{out}");
    let head = serde_json::from_str::<serde_json::Value>(&out).unwrap()["head_index"]
        .as_u64()
        .unwrap();
    let all = (head + 1).to_string();
    let (code, out, err) = ledgerctl(&["tail", "--server", &url, "--from", "0", "--limit", &all]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.contains("bet_placed"))
        .unwrap_or_else(|| panic!("no bet in {out}"));
    assert!(
        line.contains("\"roundId\":\"R-77\"") && line.contains("\"amountCents\":\"105\""),
        "{line}"
    );
    let registration = out
        .lines()
        .find(|l| l.contains("device_registered"))
        .unwrap();
    assert!(
        registration.contains("\"deviceId\":\"T1\""),
        "{registration}"
    );

    let (code, out, err) = ledgerctl(&[
        "--json",
        "device",
        "entries",
        "--server",
        &url,
        "--device-id",
        "T1",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(v["event"]["deviceId"], "T1");
    assert_eq!(v["event"]["betPlaced"]["betId"], "b5");
    assert_eq!(v["event"]["betPlaced"]["selection"], serde_json::json!([5]));
    let (code, out, _) = ledgerctl(&[
        "--json", "tail", "--server", &url, "--from", "0", "--limit", "1",
    ]);
    assert_eq!(code, 0);
    let genesis: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(genesis["kind"], "ledger");
    assert_eq!(genesis["record"]["genesis"]["ledgerId"], "e2e", "{genesis}");
    l.stop();
}

/// Every help text of ledgerd, ledger-agent and ledger-console is one line of at most 100
/// characters with no longer `--help` text behind it, as ledgerctl's are (its unit test walks its
/// clap tree; these are read from the binaries): `-h` and `--help` print the same, except
/// ledgerd's top level, whose long text is its manual.
#[test]
fn every_binarys_help_texts_are_short_lines() {
    fn help(bin: &std::path::Path, path: &[String], flag: &str) -> String {
        let out = Command::new(bin)
            .args(path)
            .arg(flag)
            .output()
            .expect("run --help");
        assert!(out.status.success(), "{} {path:?} {flag}", bin.display());
        String::from_utf8(out.stdout).expect("utf-8 help")
    }
    /// The text of an option or command line, without clap's `[env: ..]`/`[default: ..]` notes.
    fn text(line: &str) -> Option<&str> {
        let line = line.trim_start();
        let mut t = line[line.find("  ")?..].trim();
        while t.ends_with(']') {
            match t.rfind(" [") {
                Some(i) => t = t[..i].trim_end(),
                None => break,
            }
        }
        Some(t)
    }
    fn walk(bin: &std::path::Path, path: Vec<String>, bad: &mut Vec<String>) {
        let short = help(bin, &path, "-h");
        let name = format!("{} {}", bin.display(), path.join(" "));
        let manual = path.is_empty() && bin.ends_with("ledgerd");
        if !manual && short != help(bin, &path, "--help") {
            bad.push(format!("{name}: --help has longer texts than -h"));
        }
        let about = short.lines().next().unwrap_or("");
        if about.len() > 100 {
            bad.push(format!("{name}: about is {} characters", about.len()));
        }
        let mut section = "";
        let mut subcommands = Vec::new();
        for line in short.lines() {
            if !line.starts_with(' ') {
                section = line;
                continue;
            }
            let Some(t) = text(line) else { continue };
            if t.len() > 100 {
                bad.push(format!("{name}: {} characters: {t}", t.len()));
            }
            if section == "Commands:" {
                let sub = line.split_whitespace().next().unwrap_or("");
                if sub != "help" {
                    subcommands.push(sub.to_string());
                }
            }
        }
        for sub in subcommands {
            let mut p = path.clone();
            p.push(sub);
            walk(bin, p, bad);
        }
    }
    let mut bad = Vec::new();
    for name in ["ledgerd", "ledger-agent", "ledger-console"] {
        walk(&bin(name), Vec::new(), &mut bad);
    }
    assert!(bad.is_empty(), "help texts too long: {bad:#?}");
}
