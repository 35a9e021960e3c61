//! Transport security and access control, against the real ledgerd over real TLS: the whole
//! role x RPC matrix from ledgerd's own rule table, casino scoping with two casinos, unknown,
//! foreign and expired certificates, plaintext refused, and reloading on SIGHUP.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use e2e::*;
use ledger_core::proto::{self as v1, query_client::QueryClient};
use ledgerd::access::{Admits, RULES, Role};
use tonic::Code;
use tonic::transport::Channel;

/// Any message: sent empty, and any answer decodes into it (prost skips unknown fields).
#[derive(Clone, PartialEq, prost::Message)]
struct Nothing {}

/// The methods whose requests are streams.
const CLIENT_STREAMING: &[&str] = &[
    "/casino_ledger.v1.Ingest/Submit",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
];

/// A channel as `client` (with its certificate), trusting `ca`.
async fn channel_as(url: &str, ca: &Path, client: Option<&str>) -> Result<Channel, String> {
    let p = pki();
    let mut tls = tonic::transport::ClientTlsConfig::new().ca_certificate(
        tonic::transport::Certificate::from_pem(std::fs::read(ca).unwrap()),
    );
    if let Some(c) = client {
        tls = tls.identity(tonic::transport::Identity::from_pem(
            std::fs::read(p.cert(c)).unwrap(),
            std::fs::read(p.key(c)).unwrap(),
        ));
    }
    tonic::transport::Endpoint::from_shared(url.to_string())
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .map_err(|e| format!("{e:?}"))
}

/// Call `path` with one empty message, whatever its kind (a streaming call carries a unary one
/// the same way); the status it ends with, or OK once it answers.
async fn call(ch: Channel, path: &str) -> tonic::Status {
    let mut g = tonic::client::Grpc::new(ch);
    if let Err(e) = g.ready().await {
        return tonic::Status::unavailable(format!("not ready: {e}"));
    }
    let codec = tonic_prost::ProstCodec::<Nothing, Nothing>::default();
    // One message. A client-streaming call's request then stays open: a refusal that comes
    // before the server reads it is reported as the status it is, not as a cancelled upload (a
    // unary call's server waits for the end of the request, so it gets one).
    use tokio_stream::StreamExt as _;
    let one = tokio_stream::iter([Nothing {}]);
    let req = if CLIENT_STREAMING.contains(&path) {
        tonic::Request::new(Box::pin(one.chain(tokio_stream::pending()))
            as std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Nothing> + Send>>)
    } else {
        tonic::Request::new(Box::pin(one) as _)
    };
    let path = http::uri::PathAndQuery::try_from(path).unwrap();
    match tokio::time::timeout(Duration::from_secs(10), g.streaming(req, path, codec)).await {
        Err(_) => tonic::Status::ok("still streaming"),
        Ok(Err(s)) => s,
        Ok(Ok(mut r)) => {
            match tokio::time::timeout(Duration::from_millis(500), r.get_mut().message()).await {
                Ok(Err(s)) => s,
                _ => tonic::Status::ok("answered"),
            }
        }
    }
}

fn role_of(client: &str) -> Role {
    let (_, role, _) = CLIENTS.iter().find(|(n, _, _)| *n == client).unwrap();
    Role::parse(role).unwrap()
}

/// Every principal of every role against every method of the rule table: a method admits
/// exactly the roles the table names (others get PERMISSION_DENIED naming the role they lack),
/// a caller without a certificate only the health service, and one limited to a casino only
/// the methods that narrow their answers to it.
#[tokio::test]
async fn every_role_against_every_method() {
    let dir = tempdir();
    // Clients without a certificate get through the handshake here, to show what they may call.
    let cfg = write_config_without_tls(
        dir.path(),
        &pki()
            .config()
            .replace("[tls]\n", "[tls]\nrequire_client_cert = false\n"),
    );
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let ca = pki().ca();
    let mut checked = 0;
    for who in CLIENTS
        .iter()
        .map(|(n, _, _)| Some(*n))
        .chain([None::<&str>])
    {
        let ch = channel_as(&url, &ca, who).await.expect("connect");
        for (path, admits) in RULES {
            let s = call(ch.clone(), path).await;
            let scoped =
                who.is_some_and(|w| CLIENTS.iter().any(|(n, _, c)| *n == w && !c.is_empty()));
            let expected_ok = match (who, admits) {
                (_, Admits::Anyone) => true,
                (None, _) => false,
                (Some(_), Admits::Authenticated) => true,
                (Some(w), Admits::Roles(rs)) => rs.contains(&role_of(w)),
            };
            let label = format!("{who:?} -> {path}: {:?} {}", s.code(), s.message());
            match (who, expected_ok) {
                (None, false) => {
                    assert_eq!(s.code(), Code::Unauthenticated, "{label}");
                    assert!(s.message().contains("no client certificate"), "{label}");
                }
                (Some(_), false) => {
                    assert_eq!(s.code(), Code::PermissionDenied, "{label}");
                    assert!(s.message().contains("needs the role"), "{label}");
                }
                (Some(_), true)
                    if scoped
                        && !ledgerd::access::CASINO_SCOPED.contains(path)
                        && *admits != Admits::Anyone =>
                {
                    assert_eq!(s.code(), Code::PermissionDenied, "{label}");
                    assert!(s.message().contains("is limited to"), "{label}");
                }
                // Admitted: the service answered (OK, or its own error for an empty request).
                _ => assert!(
                    !matches!(
                        s.code(),
                        Code::PermissionDenied
                            | Code::Unauthenticated
                            | Code::Unknown
                            | Code::Unavailable
                            | Code::Cancelled
                    ),
                    "{label}"
                ),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, (CLIENTS.len() + 1) * RULES.len());
    l.stop();
}

/// Two casinos on one ledger: a principal limited to one reads its devices, their registration
/// and their entries, and of the other casino learns nothing, not even that a device exists.
#[tokio::test]
async fn a_principal_limited_to_a_casino_sees_only_that_casino() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut lisboa = table("L-T1", "L1");
    lisboa.casino_id = "lisboa".into();
    let mut porto = table("P-T1", "P1");
    porto.casino_id = "porto".into();
    let mut signers = register(&url, 1, &[lisboa, porto]).await;
    let envs: Vec<_> = signers
        .iter_mut()
        .zip(["L1", "P1"])
        .map(|(s, t)| s.sign(now_ms(), bet(t, "r1", 1)))
        .collect();
    assert!(
        submit(&url, &envs)
            .await
            .iter()
            .all(|r| st(r) == v1::ReceiptStatus::Accepted)
    );
    let ca = pki().ca();
    for (who, mine, theirs) in [
        ("lisboa-compliance", "L-T1", "P-T1"),
        ("lisboa-device", "L-T1", "P-T1"),
        ("porto-compliance", "P-T1", "L-T1"),
    ] {
        let mut q = QueryClient::new(channel_as(&url, &ca, Some(who)).await.unwrap());
        let d = q
            .get_device(v1::GetDeviceRequest {
                device_id: mine.into(),
            })
            .await
            .unwrap_or_else(|e| panic!("{who} reads {mine}: {e}"))
            .into_inner();
        assert_eq!(d.device_id, mine);
        let e = q
            .get_device(v1::GetDeviceRequest {
                device_id: theirs.into(),
            })
            .await
            .unwrap_err();
        let e2 = q
            .get_device(v1::GetDeviceRequest {
                device_id: "no-such-device".into(),
            })
            .await
            .unwrap_err();
        assert_eq!(
            (e.code(), e2.code()),
            (Code::NotFound, Code::NotFound),
            "{who}"
        );
        assert_eq!(
            e.message().replace(theirs, "X"),
            e2.message().replace("no-such-device", "X"),
            "{who}: another casino's device is answered as one that does not exist"
        );
        // The operator's key is not a device of any casino.
        assert_eq!(
            q.get_device(v1::GetDeviceRequest {
                device_id: "operator-1".into(),
            })
            .await
            .unwrap_err()
            .code(),
            Code::NotFound
        );
        let mut entries = q
            .list_device_entries(v1::ListDeviceEntriesRequest {
                device_id: mine.into(),
                from_sequence: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(
            entries.message().await.unwrap().is_some(),
            "{who}: own entries"
        );
        let e = q
            .list_device_entries(v1::ListDeviceEntriesRequest {
                device_id: theirs.into(),
                from_sequence: 0,
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), Code::NotFound, "{who}");
        if role_of(who) == Role::Compliance {
            let list = q
                .list_devices(v1::ListDevicesRequest::default())
                .await
                .unwrap()
                .into_inner();
            let ids: Vec<_> = list.devices.iter().map(|d| d.device_id.as_str()).collect();
            assert_eq!(ids, [mine], "{who}");
        }
    }
    // Findings and reports: its casino's only.
    let mut a = ledger_core::proto::audit_client::AuditClient::new(
        channel_as(&url, &ca, Some("lisboa-compliance"))
            .await
            .unwrap(),
    );
    let e = a
        .list_findings(v1::ListFindingsRequest {
            casino_id: "porto".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    a.list_findings(v1::ListFindingsRequest::default())
        .await
        .expect("its own casino's findings");
    let report = a
        .get_report(v1::ReportRequest {
            day: chrono::Utc::now().format("%Y-%m-%d").to_string(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    for p in &report.periods {
        assert!(p.rows.iter().all(|r| r.casino_id == "lisboa"), "{p:?}");
    }
    // A principal of every casino sees both, and the principals.
    let mut q = QueryClient::new(channel_as(&url, &ca, Some("e2e-compliance")).await.unwrap());
    let list = q
        .list_devices(v1::ListDevicesRequest::default())
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<_> = list.devices.iter().map(|d| d.device_id.as_str()).collect();
    assert!(
        ["L-T1", "P-T1", "operator-1"]
            .iter()
            .all(|d| ids.contains(d)),
        "{ids:?}"
    );
    l.stop();
}

/// A device's registry history (Query.GetDeviceHistory, `ledgerctl device show`): its
/// registration, key rotation and revocation, each with its entry and signer, for who reads the
/// registry of its casino; another casino's principal learns nothing (the answer of a device
/// that does not exist) and a device, which the rule leaves out, is refused.
#[tokio::test]
async fn a_devices_registry_history_is_read_by_its_casinos_readers_only() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut lisboa = table("L-T1", "L1");
    lisboa.casino_id = "lisboa".into();
    let mut porto = table("P-T1", "P1");
    porto.casino_id = "porto".into();
    register(&url, 1, &[lisboa, porto]).await;
    let new_key = ed25519_dalek::SigningKey::from_bytes(&[0x77; 32]).verifying_key();
    let mut op = ledger_agent::DeviceSigner::new("operator-1", operator_key(), 3);
    use v1::event_body::Payload as P;
    let receipts = submit(
        &url,
        &[
            op.sign(
                now_ms(),
                P::DeviceKeyRotated(v1::DeviceKeyRotated {
                    device_id: "L-T1".into(),
                    public_key: new_key.as_bytes().to_vec(),
                    reason: "terminal replaced".into(),
                }),
            ),
            op.sign(
                now_ms(),
                P::DeviceRevoked(v1::DeviceRevoked {
                    device_id: "L-T1".into(),
                    reason: "table closed".into(),
                }),
            ),
        ],
    )
    .await;
    assert!(
        receipts
            .iter()
            .all(|r| st(r) == v1::ReceiptStatus::Accepted),
        "{receipts:?}"
    );
    let ca = pki().ca();
    let mut q = QueryClient::new(
        channel_as(&url, &ca, Some("lisboa-compliance"))
            .await
            .unwrap(),
    );
    let registered_at = q
        .get_device(v1::GetDeviceRequest {
            device_id: "L-T1".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .registered_at_index;
    let h = q
        .get_device_history(v1::GetDeviceRequest {
            device_id: "L-T1".into(),
        })
        .await
        .expect("lisboa's compliance reads lisboa's device")
        .into_inner();
    let d = h.device.unwrap();
    assert!(d.revoked);
    assert_eq!(d.public_key, new_key.as_bytes());
    let got: Vec<_> = h
        .entries
        .iter()
        .map(|e| {
            (
                e.index,
                e.action.as_str(),
                e.signed_by.as_str(),
                e.reason.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (registered_at, "registered", "operator-1", ""),
            (
                receipts[0].index,
                "key_rotated",
                "operator-1",
                "terminal replaced"
            ),
            (receipts[1].index, "revoked", "operator-1", "table closed"),
        ]
    );
    assert_eq!(h.entries[1].public_key, new_key.as_bytes());
    assert_eq!(h.entries[1].received_at_ms, receipts[0].received_at_ms);
    // Porto's device: as unknown to lisboa as one that does not exist.
    let theirs = q
        .get_device_history(v1::GetDeviceRequest {
            device_id: "P-T1".into(),
        })
        .await
        .unwrap_err();
    let none = q
        .get_device_history(v1::GetDeviceRequest {
            device_id: "no-such-device".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        (theirs.code(), none.code()),
        (Code::NotFound, Code::NotFound)
    );
    assert_eq!(
        theirs.message().replace("P-T1", "X"),
        none.message().replace("no-such-device", "X")
    );
    // A bad id is named by its field.
    let bad = q
        .get_device_history(v1::GetDeviceRequest {
            device_id: "a b".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(bad.message().starts_with("device_id"), "{bad:?}");
    // Porto's compliance reads its own, not lisboa's.
    let mut pq = QueryClient::new(
        channel_as(&url, &ca, Some("porto-compliance"))
            .await
            .unwrap(),
    );
    assert_eq!(
        pq.get_device_history(v1::GetDeviceRequest {
            device_id: "P-T1".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .entries
        .len(),
        1
    );
    assert_eq!(
        pq.get_device_history(v1::GetDeviceRequest {
            device_id: "L-T1".into(),
        })
        .await
        .unwrap_err()
        .code(),
        Code::NotFound
    );
    // The device role is outside the rule, even for its own casino's device.
    let e = QueryClient::new(channel_as(&url, &ca, Some("lisboa-device")).await.unwrap())
        .get_device_history(v1::GetDeviceRequest {
            device_id: "L-T1".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    assert!(e.message().contains("needs the role"), "{e:?}");
    // A principal of every casino sees a principal's declaration.
    let op = QueryClient::new(channel_as(&url, &ca, Some("e2e-compliance")).await.unwrap())
        .get_device_history(v1::GetDeviceRequest {
            device_id: "operator-1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let got: Vec<_> = op
        .entries
        .iter()
        .map(|e| (e.action.as_str(), e.signed_by.as_str()))
        .collect();
    assert_eq!(got, [("declared", "ledger")]);
    // ledgerctl device show prints the same history, and names the flag when refused.
    let (code, out, err) = ledgerctl_as(
        "lisboa-compliance",
        &["device", "show", "--device-id", "L-T1", "--server", &url],
    );
    assert_eq!(code, 0, "{out}{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("entry"))
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert_eq!(rows[1][0], receipts[0].index.to_string(), "{out}");
    assert_eq!(&rows[1][1..3], ["key", "rotated"], "{out}");
    assert!(rows[1].contains(&"operator-1"), "{out}");
    assert!(
        rows[1].contains(&hex::encode(new_key.as_bytes()).as_str()),
        "{out}"
    );
    assert_eq!(rows[2][0], receipts[1].index.to_string(), "{out}");
    assert_eq!(rows[2][1], "revoked", "{out}");
    assert!(out.contains("status      revoked"), "{out}");
    let (code, out, err) = ledgerctl_as(
        "lisboa-compliance",
        &["device", "show", "--device-id", "P-T1", "--server", &url],
    );
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains("--device-id P-T1") && err.contains("no device P-T1"),
        "{err}"
    );
    l.stop();
}

/// The CA's certificate and key are enough to issue: the same name, the same key.
fn issue_with_the_test_ca(name: &str, not_after: time::OffsetDateTime) -> (String, String) {
    let p = pki();
    let ca_name = std::fs::read_to_string(p.dir.join("ca.name")).unwrap();
    let ca_key =
        rcgen::KeyPair::from_pem(&std::fs::read_to_string(p.dir.join("ca.key")).unwrap()).unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name = rcgen::DistinguishedName::new();
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, ca_name.trim());
    ca.distinguished_name
        .push(rcgen::DnType::OrganizationName, "casino-ledger");
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Constrained(0));
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let mut c = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    c.distinguished_name = rcgen::DistinguishedName::new();
    c.distinguished_name.push(rcgen::DnType::CommonName, name);
    c.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    c.use_authority_key_identifier_extension = true;
    c.not_before = not_after - time::Duration::days(30);
    c.not_after = not_after;
    let cert = c.signed_by(&key, &issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

async fn connect_with(url: &str, cert: &str, key: &str) -> Result<Channel, String> {
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(
            std::fs::read(pki().ca()).unwrap(),
        ))
        .identity(tonic::transport::Identity::from_pem(cert, key));
    tonic::transport::Endpoint::from_shared(url.to_string())
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .map_err(|e| format!("{e:?}"))
}

async fn head(ch: Channel) -> Result<v1::Head, tonic::Status> {
    QueryClient::new(ch)
        .get_head(v1::GetHeadRequest {})
        .await
        .map(|r| r.into_inner())
}

/// A certificate the CA signed whose key is not a client: UNAUTHENTICATED naming its
/// fingerprint. An expired one, one from another CA, and a plaintext client do not get
/// through the handshake; ledgerd serves the others meanwhile.
#[tokio::test]
async fn unknown_expired_and_foreign_certificates_and_plaintext_are_refused() {
    let dir = tempdir();
    let cfg = write_config(dir.path(), "");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let now = time::OffsetDateTime::now_utc();
    // Known to the CA, unknown to ledgerd.
    let (cert, key) = issue_with_the_test_ca("stranger", now + time::Duration::days(1));
    let s = head(connect_with(&url, &cert, &key).await.unwrap())
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unauthenticated, "{s:?}");
    assert!(
        s.message().contains("unknown client") && s.message().contains("fingerprint"),
        "{s:?}"
    );
    // Expired: the handshake fails (or the first call on it).
    let (cert, key) = issue_with_the_test_ca("expired", now - time::Duration::days(1));
    // (Not UNAUTHENTICATED: that would be the access layer answering a certificate that passed
    // the handshake.)
    if let Ok(ch) = connect_with(&url, &cert, &key).await {
        let s = head(ch)
            .await
            .expect_err("an expired certificate got through");
        assert!(
            !matches!(s.code(), Code::Unauthenticated | Code::PermissionDenied),
            "an expired certificate passed the handshake: {s:?}"
        );
    }
    // Another CA's client certificate.
    let other = dir.path().join("other-ca");
    for args in [
        vec!["pki", "ca", "--name", "other CA"],
        vec![
            "pki",
            "client",
            "--name",
            "e2e-regulator",
            "--role",
            "regulator",
        ],
    ] {
        let (code, out, err) =
            ledgerctl(&[&args[..], &["--dir", other.to_str().unwrap()]].concat());
        assert_eq!(code, 0, "{out}{err}");
    }
    if let Ok(ch) = connect_with(
        &url,
        &std::fs::read_to_string(other.join("e2e-regulator.pem")).unwrap(),
        &std::fs::read_to_string(other.join("e2e-regulator.key")).unwrap(),
    )
    .await
    {
        let s = head(ch)
            .await
            .expect_err("a certificate of another CA got through");
        assert!(
            !matches!(s.code(), Code::Unauthenticated | Code::PermissionDenied),
            "a certificate of another CA passed the handshake: {s:?}"
        );
    }
    // No certificate at all: the handshake is refused (tls.require_client_cert by default).
    let bare = tonic::transport::Endpoint::from_shared(url.clone())
        .unwrap()
        .tls_config(tonic::transport::ClientTlsConfig::new().ca_certificate(
            tonic::transport::Certificate::from_pem(std::fs::read(pki().ca()).unwrap()),
        ))
        .unwrap()
        .connect()
        .await;
    if let Ok(ch) = bare {
        let s = head(ch)
            .await
            .expect_err("a client without a certificate got through");
        assert!(
            !matches!(s.code(), Code::Unauthenticated | Code::PermissionDenied),
            "a client without a certificate passed the handshake: {s:?}"
        );
    }
    // Plaintext to a TLS listener.
    let plain = tonic::transport::Endpoint::from_shared(format!("http://{}", l.addr))
        .unwrap()
        .connect()
        .await;
    if let Ok(ch) = plain {
        assert!(head(ch).await.is_err(), "plaintext was answered");
    }
    // The known clients are served all along.
    head(
        channel_as(&url, &pki().ca(), Some("e2e-admin"))
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    l.stop();
}

/// Without TLS, ledgerd starts only when told to serve plaintext, and then only on loopback:
/// otherwise it refuses, naming the setting, before it creates anything.
#[test]
fn plaintext_is_refused_unless_asked_for_on_loopback() {
    let dir = tempdir();
    let data = dir.path().join("data");
    for (extra, listen, says) in [
        ("", "127.0.0.1:0", "no TLS: set tls.cert_chain"),
        (
            "[tls]\nplaintext = true\n",
            "0.0.0.0:0",
            "tls.plaintext = true, but listen = 0.0.0.0:0 is not a loopback address",
        ),
    ] {
        let cfg = write_config_without_tls(dir.path(), extra);
        let e = Ledgerd::try_start(&data, &cfg, listen)
            .err()
            .expect("refused");
        assert!(e.contains(says), "{e}");
        assert!(!data.exists(), "created {}", data.display());
    }
    // Asked for, on loopback: served, to every local caller.
    let cfg = write_config_without_tls(dir.path(), "[tls]\nplaintext = true\n");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let (code, out, err) = ledgerctl(&["status", "--server", &format!("http://{}", l.addr)]);
    assert_eq!(code, 0, "{out}{err}");
    l.stop();
}

/// SIGHUP: a client removed from [[clients]] is refused on its next call, a new server
/// certificate is presented to new connections, and a stream opened before goes on.
#[tokio::test]
async fn sighup_reloads_clients_and_certificates_without_dropping_streams() {
    let dir = tempdir();
    let p = pki();
    // ledgerd's certificate in files of its own, to be replaced.
    let (cert, key) = (dir.path().join("server.pem"), dir.path().join("server.key"));
    std::fs::copy(p.dir.join("ledgerd.pem"), &cert).unwrap();
    std::fs::copy(p.dir.join("ledgerd.key"), &key).unwrap();
    let config = |clients: &[&str]| {
        let mut t = format!(
            "[tls]\ncert_chain = {cert:?}\nkey = {key:?}\nclient_ca = [{:?}]\n",
            p.ca()
        );
        for c in clients {
            t += &format!(
                "[[clients]]\nname = \"{c}\"\nrole = \"{}\"\nfingerprint = \"{}\"\n",
                role_of(c),
                p.fingerprint(c)
            );
        }
        write_config_without_tls(dir.path(), &t)
    };
    let cfg = config(&["e2e-regulator", "e2e-compliance"]);
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let regulator = channel_as(&url, &p.ca(), Some("e2e-regulator"))
        .await
        .unwrap();
    let compliance = channel_as(&url, &p.ca(), Some("e2e-compliance"))
        .await
        .unwrap();
    head(compliance.clone()).await.unwrap();
    let mut tail = QueryClient::new(regulator.clone())
        .tail(v1::TailRequest { from_index: 0 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(tail.message().await.unwrap().unwrap().index, 0);

    // New server certificate from another CA; e2e-compliance removed.
    let other = dir.path().join("other-ca");
    for args in [
        vec!["pki", "ca", "--name", "next CA"],
        vec!["pki", "server", "--host", "127.0.0.1"],
    ] {
        let (code, out, err) =
            ledgerctl(&[&args[..], &["--dir", other.to_str().unwrap()]].concat());
        assert_eq!(code, 0, "{out}{err}");
    }
    std::fs::copy(other.join("ledgerd.pem"), &cert).unwrap();
    std::fs::copy(other.join("ledgerd.key"), &key).unwrap();
    config(&["e2e-regulator"]);
    let hup = Command::new("kill")
        .args(["-HUP", &l.child.id().to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    // The removed client is refused on its established connection's next call.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match head(compliance.clone()).await {
            Err(s) if s.code() == Code::Unauthenticated => break,
            r => assert!(std::time::Instant::now() < deadline, "still served: {r:?}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // New connections get the new certificate: trusting only the old CA fails, the new works.
    assert!(
        match channel_as(&url, &p.ca(), Some("e2e-regulator")).await {
            Err(_) => true,
            Ok(ch) => head(ch).await.is_err(),
        },
        "the old certificate is still presented"
    );
    head(
        channel_as(&url, &other.join("ca.pem"), Some("e2e-regulator"))
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    // The stream opened before the reload still follows the chain: an entry appended now (over
    // a new connection that trusts the new CA) reaches it.
    let fresh = channel_as(&url, &other.join("ca.pem"), Some("e2e-regulator"))
        .await
        .unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&[0x77; 32]);
    let env = ledger_agent::DeviceSigner::new("operator-1", operator_key(), 1).sign(
        now_ms(),
        casino_play::registration(&table("T-after", "T9"), &key.verifying_key()),
    );
    let mut receipts = v1::ingest_client::IngestClient::new(fresh)
        .submit(tokio_stream::iter([env]))
        .await
        .unwrap()
        .into_inner();
    let r = receipts.message().await.unwrap().unwrap();
    assert_eq!(st(&r), v1::ReceiptStatus::Accepted, "{r:?}");
    let e = tokio::time::timeout(Duration::from_secs(10), tail.message())
        .await
        .expect("the tail stream still delivers")
        .unwrap()
        .unwrap();
    assert!(e.index >= 1);
    l.stop();
}

/// The ledger's identity: ledgerd creates a ledger only with --init, refuses a data directory
/// that lost its ledger, and with ledger_public_key pinned refuses one that holds another
/// ledger; nothing is created in a refused directory.
#[test]
fn a_lost_or_replaced_data_directory_is_refused() {
    let dir = tempdir();
    let data = dir.path().join("data");
    let start = |cfg: &Path, init: bool| {
        let out = Command::new(bin("ledgerd"))
            .args(init.then_some("--init"))
            .args(["--config", cfg.to_str().unwrap(), "--listen", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(&data)
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let cfg = write_config(dir.path(), "");
    let (code, err) = start(&cfg, false);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("no ledger in") && err.contains("--init"),
        "{err}"
    );
    assert!(!data.exists(), "created {}", data.display());
    // Created with --init (by the harness), served, stopped.
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    let key = l.ledger_key.clone();
    assert_eq!(key.len(), 64);
    l.stop();
    // --init again: refused, the ledger is there.
    let (code, err) = start(&cfg, true);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("already holds a ledger"), "{err}");
    // Pinned to its key: served. Pinned to another: refused, naming both.
    // A top-level key: before the configuration's tables.
    let pinned = |k: &str| {
        let p = write_config(dir.path(), "");
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, format!("ledger_public_key = \"{k}\"\n{text}")).unwrap();
        p
    };
    Ledgerd::start(&data, &pinned(&key), "127.0.0.1:0").stop();
    let other = "11".repeat(32);
    let e = Ledgerd::try_start(&data, &pinned(&other), "127.0.0.1:0")
        .err()
        .expect("refused");
    assert!(
        e.contains(&key) && e.contains(&other) && e.contains("pins"),
        "{e}"
    );
    // The directory lost: refused, not a new ledger.
    std::fs::remove_dir_all(&data).unwrap();
    let (code, err) = start(&pinned(&key), false);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no ledger in"), "{err}");
    assert!(!data.exists());
}

/// A device over its rate: the envelopes past its burst are not stored, its stream ends with
/// RESOURCE_EXHAUSTED saying when to retry, and an agent that retries gets everything in at
/// the rate. Another device is not slowed.
#[tokio::test]
async fn a_device_over_its_rate_is_told_to_wait_and_nothing_past_it_is_stored() {
    let dir = tempdir();
    let cfg = write_config(
        dir.path(),
        "[ingest]\ndevice_rate_per_sec = 100\ndevice_burst = 50\n",
    );
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let mut devs = register(&url, 1, &[table("fast", "T1"), table("calm", "T2")]).await;
    let envs: Vec<_> = (1..=300)
        .map(|n| devs[0].sign(now_ms(), bet("T1", "r1", n)))
        .collect();
    // One stream, no retry: the burst is accepted, then the stream ends.
    let ch = ledger_agent::connect(&url).await.unwrap();
    let mut receipts = v1::ingest_client::IngestClient::new(ch)
        .submit(tokio_stream::iter(envs.clone()))
        .await
        .unwrap()
        .into_inner();
    let mut accepted = 0;
    let status = loop {
        match receipts.message().await {
            Ok(Some(r)) => {
                assert_eq!(st(&r), v1::ReceiptStatus::Accepted, "{r:?}");
                accepted += 1;
            }
            Ok(None) => panic!("the stream ended without a status after {accepted}"),
            Err(s) => break s,
        }
    };
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert!(
        status.message().contains("device fast is over its rate"),
        "{status:?}"
    );
    let retry: u64 = status
        .metadata()
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("retry-after-ms");
    assert!((1..=1000).contains(&retry), "{retry}");
    assert!((50..300).contains(&accepted), "{accepted} accepted");
    let mut q = QueryClient::new(ledger_agent::connect(&url).await.unwrap());
    let info = q
        .get_device(v1::GetDeviceRequest {
            device_id: "fast".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        info.last_sequence, accepted,
        "exactly what was receipted is stored"
    );
    // Another device is not slowed by it.
    let calm: Vec<_> = (1..=20)
        .map(|n| devs[1].sign(now_ms(), bet("T2", "r1", n)))
        .collect();
    assert!(
        submit(&url, &calm)
            .await
            .iter()
            .all(|r| st(r) == v1::ReceiptStatus::Accepted)
    );
    // An agent that retries gets the rest in, at the rate.
    let rest = ledger_agent::submit_all(
        &url,
        &envs[accepted as usize..],
        &ledger_agent::ClientOptions {
            max_attempts: 1000,
            backoff: Duration::from_millis(50),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(rest.iter().all(|r| st(r) == v1::ReceiptStatus::Accepted));
    l.stop();
}

/// A thousand idle connections from one address hold at most grpc.max_connections_per_peer
/// places (each for the handshake deadline at most); a device from another address still
/// connects and streams meanwhile.
#[tokio::test]
async fn a_thousand_idle_connections_from_one_host_do_not_lock_out_devices() {
    let dir = tempdir();
    let cfg = write_config(
        dir.path(),
        "[grpc]\nmax_connections = 300\nmax_connections_per_peer = 100\n",
    );
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let to: std::net::SocketAddr = l.addr.parse().unwrap();
    let mut idle = Vec::new();
    for _ in 0..1000 {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        s.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        if let Ok(c) = s.connect(to).await {
            idle.push(c);
        }
    }
    // Half-open too: a TLS ClientHello's first bytes and nothing more.
    for c in idle.iter_mut().take(50) {
        use tokio::io::AsyncWriteExt;
        let _ = c.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01]).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = std::time::Instant::now();
    let mut d = register(&url, 1, &[table("honest", "T1")]).await;
    let envs: Vec<_> = (1..=200)
        .map(|n| d[0].sign(now_ms(), bet("T1", "r1", n)))
        .collect();
    assert!(
        submit(&url, &envs)
            .await
            .iter()
            .all(|r| st(r) == v1::ReceiptStatus::Accepted)
    );
    eprintln!(
        "with 1000 idle connections from one host: a device registered and streamed 200 events in {:?}",
        t.elapsed()
    );
    drop(idle);
    l.stop();
}

/// An idle connection holds its place only until it is `grpc.max_connection_age_secs` old: then
/// ledgerd says GOAWAY and closes it. A stream open across that age goes on, and a client's
/// channel makes its next call on a new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_at_its_age_and_open_streams_go_on() {
    use std::io::{Read, Write};
    let dir = tempdir();
    let cfg = write_config(dir.path(), "[grpc]\nmax_connection_age_secs = 2\n");
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let addr: std::net::SocketAddr = l.addr.parse().unwrap();
    // An authenticated HTTP/2 connection that opens no stream.
    let idle = tokio::task::spawn_blocking(move || {
        let mut s = tls_stream(addr, "e2e-regulator");
        let t = std::time::Instant::now();
        s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
            .unwrap();
        // Read frames (9-byte headers) until the end, answering pings as an HTTP/2 client does.
        let (mut got, mut at) = (Vec::new(), 0);
        let mut buf = [0u8; 4096];
        let end = loop {
            match s.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => break Err(e),
            }
            while at + 9 <= got.len() {
                let len = u32::from_be_bytes([0, got[at], got[at + 1], got[at + 2]]) as usize;
                if at + 9 + len > got.len() {
                    break;
                }
                if got[at + 3] == 6 && got[at + 4] & 1 == 0 {
                    let mut ack = vec![0, 0, 8, 6, 1, 0, 0, 0, 0];
                    ack.extend_from_slice(&got[at + 9..at + 17]);
                    s.write_all(&ack).unwrap();
                }
                at += 9 + len;
            }
        };
        (t.elapsed(), end, got)
    });
    // Meanwhile a device's stream, open across the age.
    let d = register(&url, 1, &[table("aged", "T1")]).await.remove(0);
    let d = std::sync::Arc::new(std::sync::Mutex::new(d));
    let ch = channel_as(&url, &pki().ca(), Some("e2e-device"))
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let mut receipts = v1::ingest_client::IngestClient::new(ch.clone())
        .submit(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let send = |from: u64| {
        let (tx, d) = (tx.clone(), d.clone());
        async move {
            for n in from..from + 5 {
                let e = d.lock().unwrap().sign(now_ms(), bet("T1", "r1", n));
                tx.send(e).await.unwrap();
            }
        }
    };
    send(1).await;
    for _ in 0..5 {
        let r = receipts.message().await.unwrap().unwrap();
        assert_eq!(st(&r), v1::ReceiptStatus::Accepted);
    }
    let (took, end, got) = idle.await.unwrap();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(9),
        "the idle connection ended after {took:?} ({end:?})"
    );
    // Frames: 9-byte headers; one is GOAWAY (type 7).
    let mut at = 0;
    let mut goaway = false;
    while at + 9 <= got.len() {
        let len = u32::from_be_bytes([0, got[at], got[at + 1], got[at + 2]]) as usize;
        goaway |= got[at + 3] == 7;
        at += 9 + len;
    }
    assert!(goaway, "no GOAWAY among {} bytes ({end:?})", got.len());
    // The stream opened before its connection's age goes on after it (that connection was
    // opened after the idle one: 2.5 s more make it older than its age too).
    tokio::time::sleep(Duration::from_millis(2500)).await;
    send(6).await;
    for _ in 0..5 {
        let r = receipts.message().await.unwrap().unwrap();
        assert_eq!(st(&r), v1::ReceiptStatus::Accepted);
    }
    drop(tx);
    assert!(receipts.message().await.unwrap().is_none());
    // Its stream over, the old connection closes; the channel's next call goes out on a new
    // one. (A call sent in the instant the old one closes fails once with CANCELLED, as on any
    // server restart: docs/agents.md.)
    tokio::time::sleep(Duration::from_millis(1000)).await;
    head(ch).await.expect("a call after the connection's age");
    l.stop();
}

/// One principal cannot take every stream of entries, nor make calls without bound: past its
/// share it gets RESOURCE_EXHAUSTED naming the setting, and other principals are served.
#[tokio::test]
async fn one_principal_cannot_take_every_stream_or_call_without_bound() {
    let dir = tempdir();
    let cfg = write_config(
        dir.path(),
        "[grpc]\nmax_entry_streams = 8\nmax_entry_streams_per_principal = 3\nprincipal_calls_per_sec = 2\nprincipal_call_burst = 20\n",
    );
    let l = Ledgerd::start(&dir.path().join("data"), &cfg, "127.0.0.1:0");
    let url = l.url();
    let ca = pki().ca();
    let tail = |ch: Channel| async move {
        QueryClient::new(ch)
            .tail(v1::TailRequest { from_index: 0 })
            .await
    };
    let reg = channel_as(&url, &ca, Some("e2e-regulator")).await.unwrap();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(tail(reg.clone()).await.unwrap());
    }
    let s = tail(reg.clone()).await.unwrap_err();
    assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
    assert!(
        s.message().contains("e2e-regulator")
            && s.message().contains("max_entry_streams_per_principal"),
        "{s:?}"
    );
    let admin = channel_as(&url, &ca, Some("e2e-admin")).await.unwrap();
    held.push(
        tail(admin.clone())
            .await
            .expect("another principal still gets one"),
    );
    drop(held);
    // Calls: a burst of 20, then 2 a second.
    let comp = channel_as(&url, &ca, Some("e2e-compliance")).await.unwrap();
    let mut refused = None;
    for i in 0..40 {
        if let Err(s) = head(comp.clone()).await {
            refused = Some((i, s));
            break;
        }
    }
    let (i, s) = refused.expect("the call rate was never reached");
    assert!((15..=25).contains(&i), "refused after {i} calls");
    assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
    assert!(
        s.message().contains("grpc.principal_calls_per_sec"),
        "{s:?}"
    );
    assert!(s.metadata().get("retry-after-ms").is_some());
    head(admin).await.expect("another principal is not slowed");
    l.stop();
}

/// The ledger's key in a PKCS#8 PEM file outside the data directory, made beforehand with
/// `ledgerctl keygen`: `--init` uses it, the data directory holds no key, and the ledger signs
/// with it.
#[test]
fn the_ledger_key_may_live_outside_the_data_directory_in_pkcs8() {
    let dir = tempdir();
    let base = dir.path().join("ledger");
    let (code, out, err) = ledgerctl(&["keygen", "--out", base.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let key_file = dir.path().join("ledger.key");
    let text = std::fs::read_to_string(&key_file).unwrap();
    assert!(text.starts_with("-----BEGIN PRIVATE KEY-----"), "{text}");
    let public = std::fs::read_to_string(dir.path().join("ledger.pub")).unwrap();
    let cfg = write_config(dir.path(), "");
    let t = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("ledger_key_file = {key_file:?}\n{t}")).unwrap();
    let data = dir.path().join("data");
    let l = Ledgerd::start(&data, &cfg, "127.0.0.1:0");
    assert_eq!(l.ledger_key, public.trim());
    assert!(
        !data.join("ledger.key").exists(),
        "no key in the data directory"
    );
    l.stop();
    Ledgerd::start(&data, &cfg, "127.0.0.1:0").stop();
}
