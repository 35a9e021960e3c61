//! The Audit and Jackpots query contracts that keep an answer's size and cost bounded, against
//! the real ledgerd: pool history in pages, machines without their meter increases, and requests
//! refused with INVALID_ARGUMENT naming the field.

use e2e::slots::*;
use e2e::*;
use jackpot::{MachineOverview, MachineOverviewPage, PoolEntry, PoolHistoryPage};
use ledger_core::proto::{self as v1, audit_client::AuditClient, jackpots_client::JackpotsClient};

fn invalid<T: std::fmt::Debug>(r: Result<T, tonic::Status>, field: &str) {
    let s = r.expect_err("INVALID_ARGUMENT");
    assert_eq!(s.code(), tonic::Code::InvalidArgument, "{s:?}");
    assert!(s.message().starts_with(&format!("{field}: ")), "{s:?}");
}

async fn page(
    j: &mut JackpotsClient<tonic::transport::Channel>,
    pool: &str,
    before: Option<u64>,
    limit: u32,
) -> Result<PoolHistoryPage, tonic::Status> {
    let doc = j
        .get_pool(v1::GetPoolRequest {
            pool_id: pool.into(),
            history_before: before,
            history_limit: limit,
        })
        .await?
        .into_inner();
    Ok(serde_json::from_str(&doc.json).expect("a PoolHistoryPage"))
}

/// A pool's whole history, paged back from the newest line `limit` lines at a time (0: the
/// default), oldest first; every reply at most `max_reply` bytes, none empty, the lines in order.
async fn whole_history(
    j: &mut JackpotsClient<tonic::transport::Channel>,
    pool: &str,
    limit: u32,
    max_reply: usize,
) -> Vec<PoolEntry> {
    use prost::Message as _;
    let mut all: Vec<PoolEntry> = Vec::new();
    let mut before = None;
    loop {
        let raw = j
            .get_pool(v1::GetPoolRequest {
                pool_id: pool.into(),
                history_before: before,
                history_limit: limit,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(raw.encoded_len() <= max_reply, "{}", raw.encoded_len());
        let p: PoolHistoryPage = serde_json::from_str(&raw.json).unwrap();
        assert!(!p.history.is_empty());
        assert!(limit == 0 || p.history.len() <= limit as usize);
        let mut older = p.history;
        older.append(&mut all);
        all = older;
        match p.next_before {
            Some(b) => before = Some(b),
            None => break,
        }
    }
    assert!(all.windows(2).all(|w| w[0].index <= w[1].index));
    all
}

#[tokio::test]
async fn jackpot_answers_are_bounded_and_paged() {
    let s = SlotFloor::start(plan(), 31, 12, 5).await;
    s.caught_up().await;
    let mut j = JackpotsClient::new(s.channel().await);

    // GetPool: the newest lines by default (at most 100), the pool without its history.
    let newest = page(&mut j, "SJP", None, 0).await.unwrap();
    let lines = newest.pool.history_lines;
    assert!(lines > 20, "{lines}");
    assert_eq!(newest.first + newest.history.len() as u64, lines);
    let raw = j
        .get_pool(v1::GetPoolRequest {
            pool_id: "SJP".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .json;
    let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert!(v["pool"].get("history").is_none(), "{raw}");

    // Paging back 7 lines at a time gives the whole history, in order, once.
    let all = whole_history(&mut j, "SJP", 7, 4 << 20).await;
    assert_eq!(all.len() as u64, lines);
    assert_eq!(
        all,
        page(&mut j, "SJP", None, 10_000).await.unwrap().history
    );

    // Out of range: named fields; an unknown pool is NOT_FOUND.
    invalid(page(&mut j, "SJP", None, 10_001).await, "history_limit");
    invalid(
        page(&mut j, "SJP", Some(lines + 1), 5).await,
        "history_before",
    );
    let s404 = page(&mut j, "nope", None, 5).await.unwrap_err();
    assert_eq!(s404.code(), tonic::Code::NotFound, "{s404:?}");

    // ListMachines: meters and the return, not the meter increases behind it.
    let doc = j
        .list_machines(v1::ListMachinesRequest::default())
        .await
        .unwrap()
        .into_inner();
    let v: serde_json::Value = serde_json::from_str(&doc.json).unwrap();
    for m in v["machines"].as_array().unwrap() {
        assert!(m["machine"].get("deltas").is_none(), "{m}");
    }
    let whole: MachineOverviewPage = serde_json::from_str(&doc.json).unwrap();
    assert_eq!(whole.next_after, None);
    let list = whole.machines;
    assert_eq!(list.len(), 4);
    for m in &list {
        let r = m.return_to_player.as_ref().expect("a return");
        assert_eq!(m.machine.credited_readings, r.readings, "{}", m.machine.id);
        assert!(r.readings >= 11, "{}: {}", m.machine.id, r.readings);
    }
    // A period needs both ends, in order.
    let machines = |from_ms, to_ms| v1::ListMachinesRequest {
        from_ms,
        to_ms,
        ..Default::default()
    };
    invalid(j.list_machines(machines(Some(0), None)).await, "to_ms");
    invalid(
        j.list_machines(machines(None, Some(now_ms()))).await,
        "from_ms",
    );
    invalid(j.list_machines(machines(Some(5), Some(5))).await, "to_ms");
    // Paged in id order: pages of one machine give the whole list, each naming the next but
    // the last; a limit above the maximum is refused.
    let mut paged: Vec<MachineOverview> = Vec::new();
    let mut after = String::new();
    loop {
        let doc = j
            .list_machines(v1::ListMachinesRequest {
                after_machine_id: after.clone(),
                limit: 1,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let page: MachineOverviewPage = serde_json::from_str(&doc.json).unwrap();
        assert_eq!(page.machines.len(), 1);
        paged.extend(page.machines);
        match page.next_after {
            Some(id) => after = id.to_string(),
            None => break,
        }
    }
    assert_eq!(paged, list);
    invalid(
        j.list_machines(v1::ListMachinesRequest {
            limit: 10_001,
            ..Default::default()
        })
        .await,
        "limit",
    );

    // ledgerctl pages for its user.
    let (code, out, err) =
        ledgerctl(&["jackpot", "pool", "SJP", "--last", "5", "--server", &s.url]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!("History ({lines} line(s), the last 5)")),
        "{out}"
    );
    let (code, out, err) = ledgerctl(&[
        "jackpot", "pool", "SJP", "--last", "0", "--json", "--server", &s.url,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let whole: PoolHistoryPage = serde_json::from_str(&out).unwrap();
    assert_eq!(whole.history, all);
    assert_eq!((whole.first, whole.next_before), (0, None));
    s.ledgerd.stop();
}

#[tokio::test]
async fn findings_queries_refuse_what_cannot_match() {
    let s = SlotFloor::start(plan(), 32, 2, 5).await;
    s.caught_up().await;
    let mut a = AuditClient::new(s.channel().await);
    let q = |f: fn(&mut v1::ListFindingsRequest)| {
        let mut r = v1::ListFindingsRequest::default();
        f(&mut r);
        r
    };
    invalid(a.list_findings(q(|r| r.code = "NONE".into())).await, "code");
    let empty = |r: &mut v1::ListFindingsRequest| {
        r.from_ms = Some(1_000);
        r.to_ms = Some(1_000);
    };
    invalid(a.list_findings(q(empty)).await, "to_ms");
    // A well-formed code no finding has: an empty answer, not an error.
    let none = a
        .list_findings(q(|r| r.code = "RL_NO_SUCH_CODE".into()))
        .await
        .unwrap()
        .into_inner();
    assert!(none.findings.is_empty() && none.next_after_seq.is_none());
    // A code's findings are all of them with that code.
    let all = s.findings().await;
    if let Some(f) = all.first() {
        let mut r = v1::ListFindingsRequest {
            code: f.code.clone(),
            ..Default::default()
        };
        r.limit = 10_000;
        let got = a.list_findings(r).await.unwrap().into_inner().findings;
        let want: Vec<_> = all.iter().filter(|x| x.code == f.code).cloned().collect();
        assert_eq!(got, want);
    }
    s.ledgerd.stop();
}

/// Every id a query names is checked for an identifier's form (what ingest accepts) before it
/// is looked up: one that no event can carry is INVALID_ARGUMENT naming the field. Before, an
/// unknown id came back inside the NOT_FOUND message, and an id of 20 KB made that message too
/// large for HTTP/2's headers: the client got INTERNAL ("h2 protocol error"), of 3 MB
/// RESOURCE_EXHAUSTED, neither saying what was wrong.
#[tokio::test]
async fn ids_a_query_names_must_have_an_identifiers_form() {
    let s = SlotFloor::start(plan(), 33, 2, 5).await;
    s.caught_up().await;
    let ch = s.channel().await;
    let mut a = AuditClient::new(ch.clone());
    let mut j = JackpotsClient::new(ch.clone());
    let mut q = ledger_core::proto::query_client::QueryClient::new(ch);
    for bad in [
        "x".repeat(20_000),
        "x".repeat(3 << 20),
        "SJP\0".into(),
        "SJ P".into(),
        "é".into(),
    ] {
        let round = |table_id: &str, round_id: &str| v1::GetRoundRequest {
            table_id: table_id.into(),
            round_id: round_id.into(),
            explain: false,
        };
        invalid(a.get_round(round("", &bad)).await, "round_id");
        invalid(a.get_round(round("T1", &bad)).await, "round_id");
        invalid(a.get_round(round(&bad, "R1")).await, "table_id");
        invalid(page(&mut j, &bad, None, 0).await, "pool_id");
        invalid(
            j.transfer_candidates(v1::TransferCandidatesRequest {
                machine_id: bad.clone(),
            })
            .await,
            "machine_id",
        );
        invalid(
            j.get_liability(v1::LiabilityRequest {
                casino_id: bad.clone(),
            })
            .await,
            "casino_id",
        );
        invalid(
            q.get_device(v1::GetDeviceRequest {
                device_id: bad.clone(),
            })
            .await,
            "device_id",
        );
        invalid(
            q.list_device_entries(v1::ListDeviceEntriesRequest {
                device_id: bad.clone(),
                from_sequence: 0,
            })
            .await,
            "device_id",
        );
    }
    // Well-formed ids nothing has are still NOT_FOUND (and an empty casino is every casino).
    fn nf<T: std::fmt::Debug>(r: Result<T, tonic::Status>) {
        let s = r.expect_err("NOT_FOUND");
        assert_eq!(s.code(), tonic::Code::NotFound, "{s:?}");
    }
    nf(a.get_round(v1::GetRoundRequest {
        round_id: "R-none".into(),
        ..Default::default()
    })
    .await);
    let none = page(&mut j, "P-none", None, 0).await.unwrap_err();
    assert_eq!(none.code(), tonic::Code::NotFound, "{none:?}");
    nf(j.transfer_candidates(v1::TransferCandidatesRequest {
        machine_id: "M-none".into(),
    })
    .await);
    j.get_liability(v1::LiabilityRequest::default())
        .await
        .unwrap();
    s.ledgerd.stop();
}

/// ValidateTransfer answers whether the ledger would take the transfer: one that ingest refuses
/// as malformed (an id that is not an identifier, a reason too long or with control characters,
/// an amount that is not positive) is not accepted, and `error` names the field. Before, the
/// book's own checks (only non-empty ids and a non-negative amount) said `accepted` to
/// transfers the ledger then rejected, nothing stored.
#[tokio::test]
async fn validate_transfer_refuses_what_ingest_refuses() {
    let mut s = SlotFloor::start(plan(), 34, 2, 25).await;
    let ev = s.floor.fail(&"A2".into(), "destroyed", true);
    s.send(&ev).await;
    s.caught_up().await;
    let captive = s.captive_e4("JP-A2").await;
    let mut j = JackpotsClient::new(s.channel().await);
    let good = v1::JackpotTransfer {
        transfer_id: "TR-1".into(),
        from_pool_id: "JP-A2".into(),
        to_pool_id: "JP-B1".into(),
        amount_cents: i64::try_from(captive / 10_000).unwrap(),
        reason: "machine destroyed".into(),
        authorization_id: String::new(),
    };
    let v = j
        .validate_transfer(good.clone())
        .await
        .unwrap()
        .into_inner();
    assert!(v.accepted && v.error.is_empty(), "{v:?}");
    let refused = |f: fn(&mut v1::JackpotTransfer), field: &'static str| {
        let mut t = good.clone();
        f(&mut t);
        (t, field)
    };
    for (t, field) in [
        refused(|t| t.transfer_id = "TR 1".into(), "transfer_id"),
        refused(|t| t.transfer_id = "T".repeat(129), "transfer_id"),
        refused(|t| t.reason = "r".repeat(4097), "reason"),
        refused(|t| t.reason = "destroyed\u{7}".into(), "reason"),
    ] {
        let v = j.validate_transfer(t).await.unwrap().into_inner();
        assert!(!v.accepted, "{field}: {v:?}");
        assert!(v.error.starts_with(&format!("`{field}`: ")), "{v:?}");
    }
    s.ledgerd.stop();
}

/// GetReport: a period needs both ends, in order, and not a day besides; the refusal names the
/// field. Any day chrono can read has its report, the last one too (its day period was empty,
/// and the day was refused as an empty period).
#[tokio::test]
async fn report_requests_name_the_field_they_refuse() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let ledgerd = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let mut a = AuditClient::new(ledger_agent::connect(&ledgerd.url()).await.unwrap());
    let req = |from_ms, to_ms, day: &str| v1::ReportRequest {
        from_ms,
        to_ms,
        day: day.into(),
        days: 0,
        event_counts: false,
    };
    invalid(a.get_report(req(Some(5), Some(5), "")).await, "to_ms");
    invalid(a.get_report(req(Some(6), Some(5), "")).await, "to_ms");
    invalid(a.get_report(req(Some(5), None, "")).await, "to_ms");
    invalid(a.get_report(req(None, Some(5), "")).await, "from_ms");
    invalid(a.get_report(req(None, None, "")).await, "day");
    invalid(
        a.get_report(req(Some(5), Some(6), "2026-11-21")).await,
        "day",
    );
    invalid(a.get_report(req(None, None, "2026-13-01")).await, "day");
    for day in ["2026-11-21", "+262142-12-31", "-262143-01-01"] {
        let r = a
            .get_report(req(None, None, day))
            .await
            .unwrap()
            .into_inner();
        let names: Vec<&str> = r.periods.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["day", "month_to_date", "year_to_date"], "{day}");
        assert!(
            r.periods.iter().all(|p| p.from_ms < p.to_ms),
            "{day}: {r:?}"
        );
    }
    let days = |from_ms: Option<i64>, day: &str, days| v1::ReportRequest {
        from_ms,
        to_ms: from_ms.map(|f| f + 1),
        day: day.into(),
        days,
        event_counts: false,
    };
    invalid(a.get_report(days(None, "2026-11-21", 367)).await, "days");
    invalid(a.get_report(days(Some(5), "", 3)).await, "days");
    let r = a
        .get_report(days(None, "2026-11-21", 366))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.periods.len(), 3 + 366);
    assert_eq!(r.periods[3].first_day, "2025-11-21");
    assert_eq!(r.periods[368].last_day, "2026-11-21");
    let r = a
        .get_report(req(Some(i64::MIN), Some(i64::MAX), ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.periods.len(), 1);
    ledgerd.stop();
}

/// Every paged answer stops short of `grpc.max_message_bytes` and names where the next page
/// starts, whatever its limit: here the limit is 4,096 bytes, so a page holds a few machines,
/// devices or history lines, not the default 1,000 or 100. Before, a page over the limit was
/// refused whole (OUT_OF_RANGE, "encoded message length too large"): with the default 4 MiB, a
/// page of 10,000 machines (about 9.7 MB) could never be read.
#[tokio::test]
async fn every_page_fits_in_one_reply_and_names_the_next() {
    use prost::Message as _;
    const MAX: usize = 4_096;
    let mut s = SlotFloor::start_with(
        plan(),
        34,
        12,
        5,
        &format!("[ingest]\nmax_body_bytes = 2048\n[grpc]\nmax_message_bytes = {MAX}\n"),
    )
    .await;
    // Ten more devices whose records are about 1,100 bytes each.
    let extra: Vec<v1::Envelope> = (0..10u8)
        .map(|i| {
            let key = ed25519_dalek::SigningKey::from_bytes(&[0x40 + i; 32]);
            s.sign_payload(
                "operator-1",
                v1::event_body::Payload::DeviceRegistered(v1::DeviceRegistered {
                    device_id: format!("table-{i:02}"),
                    public_key: key.verifying_key().as_bytes().to_vec(),
                    kind: v1::DeviceKind::Table as i32,
                    casino_id: "C1".into(),
                    table_ids: vec![format!("T{i}")],
                    description: format!("table {i} ").repeat(110),
                    ..Default::default()
                }),
            )
        })
        .collect();
    s.submit(&extra).await;
    s.caught_up().await;
    let ch = s.channel().await;
    let mut j = JackpotsClient::new(ch.clone());
    let mut q = ledger_core::proto::query_client::QueryClient::new(ch);

    // Devices: pages of a few, in id order, each within the limit, the whole list once.
    let mut devices = Vec::new();
    let mut after = String::new();
    let mut pages = 0;
    loop {
        let page = q
            .list_devices(v1::ListDevicesRequest {
                after_device_id: after.clone(),
                limit: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(page.encoded_len() <= MAX, "{}", page.encoded_len());
        assert!(!page.devices.is_empty());
        pages += 1;
        devices.extend(page.devices.into_iter().map(|d| d.device_id));
        if page.next_after_device_id.is_empty() {
            break;
        }
        assert_eq!(&page.next_after_device_id, devices.last().unwrap());
        after = page.next_after_device_id;
    }
    assert_eq!(devices.len(), 4 + 2 + 10, "{devices:?}");
    assert!(devices.windows(2).all(|w| w[0] < w[1]), "{devices:?}");
    assert!(pages >= 4, "{pages} pages");
    // A limit still applies below what fits, and an after id must be an id.
    let two = q
        .list_devices(v1::ListDevicesRequest {
            after_device_id: String::new(),
            limit: 2,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(two.devices.len(), 2);
    assert_eq!(two.next_after_device_id, devices[1]);
    invalid(
        q.list_devices(v1::ListDevicesRequest {
            after_device_id: "a b".into(),
            limit: 0,
        })
        .await,
        "after_device_id",
    );
    invalid(
        q.list_devices(v1::ListDevicesRequest {
            after_device_id: String::new(),
            limit: 10_001,
        })
        .await,
        "limit",
    );

    // Machines: the four do not fit in one page of the default 1,000.
    let mut machines: Vec<MachineOverview> = Vec::new();
    let mut after = String::new();
    let mut pages = 0;
    loop {
        let doc = j
            .list_machines(v1::ListMachinesRequest {
                after_machine_id: after.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(doc.encoded_len() <= MAX, "{}", doc.encoded_len());
        let page: MachineOverviewPage = serde_json::from_str(&doc.json).unwrap();
        assert!(!page.machines.is_empty());
        pages += 1;
        machines.extend(page.machines);
        match page.next_after {
            Some(id) => {
                assert_eq!(id, machines.last().unwrap().machine.id);
                after = id.to_string();
            }
            None => break,
        }
    }
    assert!(pages >= 2, "{pages} pages");
    let ids: Vec<_> = machines.iter().map(|m| m.machine.id.to_string()).collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    // Pool history: the default 100 lines do not fit; each page keeps the newest it can, and
    // paging back gives every line once, in order.
    let newest = page(&mut j, "SJP", None, 0).await.unwrap();
    let lines = newest.pool.history_lines;
    assert!(newest.history.len() < 100 && (newest.history.len() as u64) < lines);
    assert_eq!(newest.first + newest.history.len() as u64, lines);
    assert_eq!(newest.next_before, Some(newest.first));
    let all = whole_history(&mut j, "SJP", 0, MAX).await;
    assert_eq!(all.len() as u64, lines);

    // ledgerctl follows the pages for its user.
    let (code, out, err) = ledgerctl(&["device", "list", "--json", "--server", &s.url]);
    assert_eq!(code, 0, "{out}{err}");
    let listed: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let listed: Vec<String> = listed
        .iter()
        .map(|d| d["device_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, devices);
    let (code, out, err) = ledgerctl(&["jackpot", "machines", "--json", "--server", &s.url]);
    assert_eq!(code, 0, "{out}{err}");
    let listed: Vec<MachineOverview> = serde_json::from_str(&out).unwrap();
    assert_eq!(listed, machines);
    s.ledgerd.stop();
}
