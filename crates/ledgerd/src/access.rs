//! Who may call what.
//!
//! Every client is a **principal**: a name, one [`Role`] and, where it applies, the casinos it is
//! limited to. A client proves who it is with its TLS client certificate; the certificate's
//! public key (the SHA-256 of its SubjectPublicKeyInfo, hex: [`spki_fingerprint`]) is looked up
//! in the configuration's `[[clients]]`. A renewed certificate for the same key keeps its
//! principal; a stolen certificate is revoked by removing its line and reloading (SIGHUP).
//!
//! [`RULES`] is the one table of which roles each RPC admits. [`Access`] is the tower layer that
//! enforces it in front of every service: a method absent from the table is refused (nothing is
//! open by accident; a test checks the table against every method of the compiled descriptors),
//! a caller without a known identity gets `UNAUTHENTICATED`, one without the role
//! `PERMISSION_DENIED` naming what it lacks. The principal is then put in the request's
//! extensions ([`Caller`]) for the services that narrow answers to its casinos.
//!
//! Event integrity does not depend on this: every event is still signed by a registered device
//! or principal key and checked by the pipeline. This decides who may talk to the ledger at all.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use http::{Request, Response};
use sha2::{Digest, Sha256};
use tonic::body::Body;
use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};

/// A principal's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// A table system or a machine's reporting agent: submits signed events; reads its own
    /// devices' registration and entries (to resume after a restart) and checkpoints.
    Device,
    /// The casino's operations: submits operator-signed registry, model, pool and transfer
    /// events; reads what concerns its casinos.
    Operator,
    /// The casino's compliance team: reads findings, rounds, reports, machines, pools and
    /// devices of its casinos.
    Compliance,
    /// The inspectorate: reads everything, submits the authorisations it signs, follows the
    /// whole chain (mirrors, witnesses).
    Regulator,
    /// Whoever runs the service: status, ingest statistics, checkpoint requests, metrics, the
    /// whole chain; no rounds, findings or accounts.
    Admin,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Device,
        Role::Operator,
        Role::Compliance,
        Role::Regulator,
        Role::Admin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Role::Device => "device",
            Role::Operator => "operator",
            Role::Compliance => "compliance",
            Role::Regulator => "regulator",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Someone who may connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    pub name: String,
    /// One role, or every role for the local caller of a plaintext (loopback) ledgerd.
    pub roles: BTreeSet<Role>,
    /// The casinos it is limited to; empty = every casino of the ledger.
    pub casinos: BTreeSet<String>,
    /// The SHA-256 of its certificate's public key (hex, [`spki_fingerprint`]); empty for the
    /// local caller.
    pub fingerprint: String,
}

impl Principal {
    pub fn new(name: &str, role: Role, casinos: impl IntoIterator<Item = String>) -> Principal {
        Principal {
            name: name.into(),
            roles: [role].into(),
            casinos: casinos.into_iter().collect(),
            fingerprint: String::new(),
        }
    }

    /// The same, identified by the certificate key `fingerprint`.
    pub fn with_fingerprint(mut self, fingerprint: &str) -> Principal {
        self.fingerprint = fingerprint.to_string();
        self
    }

    /// The caller of a ledgerd that serves plaintext on loopback: the machine's own users, who
    /// could read the data directory anyway.
    pub fn local() -> Principal {
        Principal {
            name: "local (plaintext on loopback)".into(),
            roles: Role::ALL.into(),
            casinos: BTreeSet::new(),
            fingerprint: String::new(),
        }
    }

    /// Whether it sees `casino` (always, when it is not limited to some casinos).
    pub fn sees_casino(&self, casino: &str) -> bool {
        self.casinos.is_empty() || self.casinos.contains(casino)
    }

    fn roles_text(&self) -> String {
        self.roles
            .iter()
            .map(|r| r.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The principal of the call, in the request's extensions once [`Access`] has admitted it.
#[derive(Clone, Debug)]
pub struct Caller(pub Arc<Principal>);

impl Caller {
    /// The caller of a request that went through [`Access`]; in-process callers (unit tests of
    /// the services) are [`Principal::local`]. Only methods that admit principals get a
    /// caller: a method open to anyone (health) must not read it.
    pub fn of<T>(req: &tonic::Request<T>) -> Arc<Principal> {
        req.extensions()
            .get::<Caller>()
            .map(|c| c.0.clone())
            .unwrap_or_else(|| Arc::new(Principal::local()))
    }
}

/// What an RPC admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admits {
    /// Anyone, with or without a certificate (health checks, for load balancers and probes).
    Anyone,
    /// Any known principal.
    Authenticated,
    /// Known principals with one of these roles.
    Roles(&'static [Role]),
}

use Role::{Admin as AD, Compliance as CO, Device as DE, Operator as OP, Regulator as RE};

/// Every method served, by its gRPC path, and what it admits. Methods marked "casino-scoped" in
/// docs/security.md narrow what they return to the caller's casinos (in the service).
pub const RULES: &[(&str, Admits)] = &[
    // Standard services.
    ("/grpc.health.v1.Health/Check", Admits::Anyone),
    ("/grpc.health.v1.Health/Watch", Admits::Anyone),
    (
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        Admits::Authenticated,
    ),
    // Ingest: every event is also checked against its signer's registered key.
    (
        "/casino_ledger.v1.Ingest/Submit",
        Admits::Roles(&[DE, OP, RE]),
    ),
    // Query.
    ("/casino_ledger.v1.Query/GetHead", Admits::Authenticated),
    ("/casino_ledger.v1.Query/GetEntry", Admits::Roles(&[RE, AD])),
    (
        "/casino_ledger.v1.Query/ListEntries",
        Admits::Roles(&[RE, AD]),
    ),
    ("/casino_ledger.v1.Query/Tail", Admits::Roles(&[RE, AD])),
    (
        "/casino_ledger.v1.Query/ListDeviceEntries",
        Admits::Roles(&[DE, OP, CO, RE, AD]),
    ),
    (
        "/casino_ledger.v1.Query/GetDevice",
        Admits::Roles(&[DE, OP, CO, RE, AD]),
    ),
    (
        "/casino_ledger.v1.Query/ListDevices",
        Admits::Roles(&[OP, CO, RE, AD]),
    ),
    // A device's registration, rotations and revocation (who signed them): the registry's
    // readers; a device itself needs only GetDevice to resume.
    (
        "/casino_ledger.v1.Query/GetDeviceHistory",
        Admits::Roles(&[OP, CO, RE, AD]),
    ),
    (
        "/casino_ledger.v1.Query/GetIngestStats",
        Admits::Roles(&[RE, AD]),
    ),
    // Checkpoints: signed heads are evidence for everyone who holds a device or a report.
    (
        "/casino_ledger.v1.Checkpoints/GetLatest",
        Admits::Authenticated,
    ),
    ("/casino_ledger.v1.Checkpoints/List", Admits::Authenticated),
    (
        "/casino_ledger.v1.Checkpoints/Create",
        Admits::Roles(&[RE, AD]),
    ),
    // Proofs: an entry's only to who may read the entry (casino-scoped); consistency proofs
    // are hashes only, evidence for everyone who holds a checkpoint.
    (
        "/casino_ledger.v1.Proofs/GetInclusionProof",
        Admits::Roles(&[OP, CO, RE, AD]),
    ),
    (
        "/casino_ledger.v1.Proofs/GetConsistencyProof",
        Admits::Authenticated,
    ),
    // Audit.
    (
        "/casino_ledger.v1.Audit/GetStatus",
        Admits::Roles(&[OP, CO, RE, AD]),
    ),
    (
        "/casino_ledger.v1.Audit/ListFindings",
        Admits::Roles(&[OP, CO, RE]),
    ),
    (
        "/casino_ledger.v1.Audit/GetFinding",
        Admits::Roles(&[OP, CO, RE]),
    ),
    // A review is recorded in the chain for its principal: the casino's compliance team and the
    // inspectorate; not the operator, whose own conduct the findings judge (docs/security.md).
    (
        "/casino_ledger.v1.Audit/ReviewFinding",
        Admits::Roles(&[CO, RE]),
    ),
    (
        "/casino_ledger.v1.Audit/GetRound",
        Admits::Roles(&[OP, CO, RE]),
    ),
    (
        "/casino_ledger.v1.Audit/GetReport",
        Admits::Roles(&[OP, CO, RE]),
    ),
    // Jackpots.
    (
        "/casino_ledger.v1.Jackpots/ListPools",
        Admits::Roles(&[OP, CO, RE]),
    ),
    (
        "/casino_ledger.v1.Jackpots/GetPool",
        Admits::Roles(&[OP, CO, RE]),
    ),
    (
        "/casino_ledger.v1.Jackpots/GetLiability",
        Admits::Roles(&[OP, CO, RE]),
    ),
    (
        "/casino_ledger.v1.Jackpots/ListMachines",
        Admits::Roles(&[OP, CO, RE]),
    ),
    (
        "/casino_ledger.v1.Jackpots/TransferCandidates",
        Admits::Roles(&[OP, CO, RE]),
    ),
    (
        "/casino_ledger.v1.Jackpots/ValidateTransfer",
        Admits::Roles(&[OP, RE]),
    ),
    (
        "/casino_ledger.v1.Jackpots/GetMachineEvents",
        Admits::Roles(&[OP, CO, RE]),
    ),
    (
        "/casino_ledger.v1.Jackpots/GetPoolActivity",
        Admits::Roles(&[OP, CO, RE]),
    ),
    // A mirror's own state (served by a ledgerd running as a mirror): whoever runs it and the
    // inspectorate.
    (
        "/casino_ledger.v1.Mirror/GetStatus",
        Admits::Roles(&[RE, AD]),
    ),
    (
        "/casino_ledger.v1.Mirror/ListAlarms",
        Admits::Roles(&[RE, AD]),
    ),
    // A mirror (a regulator at its source) reports what it holds; the service counts only the
    // clients `replication.mirrors` names.
    (
        "/casino_ledger.v1.Replication/ReportDurable",
        Admits::Roles(&[RE]),
    ),
];

/// Methods that answer a principal limited to some casinos only with what concerns those
/// casinos. Any other method that a role admits is refused to such a principal
/// (`PERMISSION_DENIED`), so that nothing of another casino leaks through a method that does not
/// narrow its answer yet.
pub const CASINO_SCOPED: &[&str] = &[
    "/casino_ledger.v1.Audit/ListFindings",
    "/casino_ledger.v1.Audit/GetFinding",
    "/casino_ledger.v1.Audit/ReviewFinding",
    "/casino_ledger.v1.Audit/GetReport",
    "/casino_ledger.v1.Audit/GetRound",
    "/casino_ledger.v1.Jackpots/ListPools",
    "/casino_ledger.v1.Jackpots/GetPool",
    "/casino_ledger.v1.Jackpots/GetPoolActivity",
    "/casino_ledger.v1.Jackpots/GetLiability",
    "/casino_ledger.v1.Jackpots/ListMachines",
    "/casino_ledger.v1.Jackpots/GetMachineEvents",
    "/casino_ledger.v1.Jackpots/TransferCandidates",
    "/casino_ledger.v1.Jackpots/ValidateTransfer",
    "/casino_ledger.v1.Query/GetHead",
    "/casino_ledger.v1.Query/GetDevice",
    "/casino_ledger.v1.Query/ListDevices",
    "/casino_ledger.v1.Query/GetDeviceHistory",
    "/casino_ledger.v1.Query/ListDeviceEntries",
    "/casino_ledger.v1.Checkpoints/GetLatest",
    "/casino_ledger.v1.Checkpoints/List",
    "/casino_ledger.v1.Proofs/GetInclusionProof",
    "/casino_ledger.v1.Proofs/GetConsistencyProof",
    "/casino_ledger.v1.Ingest/Submit",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
];

/// What [`RULES`] says of `path`.
pub fn admits(path: &str) -> Option<Admits> {
    RULES.iter().find(|(p, _)| *p == path).map(|(_, a)| *a)
}

/// The HTTP listener's resources (`[metrics] listen`): a path, or a path prefix (ending in
/// `/`), what it admits, and whether a principal limited to casinos may read it. First match
/// wins. Hash tiles and checkpoints are hashes only, evidence for everyone who holds a
/// checkpoint (as `GetConsistencyProof`); entry bundles are the raw chain (as `ListEntries`).
pub const HTTP_RULES: &[(&str, Admits, bool)] = &[
    ("/metrics", Admits::Roles(&[AD, RE]), false),
    ("/tlog/checkpoint", Admits::Authenticated, true),
    ("/tlog/tile/entries/", Admits::Roles(&[RE, AD]), false),
    ("/tlog/tile/", Admits::Authenticated, true),
];

/// What [`HTTP_RULES`] says of an HTTP `path`: (admits, casino-limited principals allowed).
pub fn http_admits(path: &str) -> Option<(Admits, bool)> {
    HTTP_RULES
        .iter()
        .find(|(p, _, _)| {
            if p.ends_with('/') {
                path.starts_with(p) && path.len() > p.len()
            } else {
                path == *p
            }
        })
        .map(|(_, a, scoped)| (*a, *scoped))
}

/// Admit or refuse principal `p` for `path` under `rule`; `scoped`: the resource may be read
/// by a principal limited to casinos.
pub fn admit(path: &str, rule: Admits, scoped: bool, p: &Principal) -> Result<(), Refusal> {
    if let Admits::Roles(roles) = rule
        && !roles.iter().any(|r| p.roles.contains(r))
    {
        return Err(Refusal::Denied(format!(
            "{path} needs the role {}; {} is {}",
            roles
                .iter()
                .map(|r| r.name())
                .collect::<Vec<_>>()
                .join(" or "),
            p.name,
            p.roles_text()
        )));
    }
    if !p.casinos.is_empty() && !scoped {
        return Err(Refusal::Denied(format!(
            "{path} answers only principals of every casino of this ledger; {} is limited to {}",
            p.name,
            p.casinos.iter().cloned().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(())
}

/// SHA-256 of a DER certificate's SubjectPublicKeyInfo, lower-case hex: the principal's
/// fingerprint (`openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | sha256sum`).
pub fn spki_fingerprint(cert_der: &[u8]) -> Result<String, String> {
    let der = rustls::pki_types::CertificateDer::from(cert_der);
    let cert = webpki::EndEntityCert::try_from(&der).map_err(|e| format!("{e:?}"))?;
    Ok(hex::encode(Sha256::digest(
        cert.subject_public_key_info().as_ref(),
    )))
}

/// Principals by the fingerprint of their certificate's key.
pub type ByFingerprint = HashMap<String, Arc<Principal>>;

/// The configured clients by fingerprint, replaced as a whole on reload.
#[derive(Clone, Default)]
pub struct Clients(Arc<RwLock<Arc<ByFingerprint>>>);

impl Clients {
    pub fn new(map: ByFingerprint) -> Clients {
        Clients(Arc::new(RwLock::new(Arc::new(map))))
    }

    pub fn replace(&self, map: ByFingerprint) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(map);
    }

    fn get(&self, fingerprint: &str) -> Option<Arc<Principal>> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(fingerprint)
            .cloned()
    }

    /// The principal of a connection's client certificate (its leaf), or why there is none.
    pub fn of_certificate(&self, leaf: Option<&[u8]>) -> Result<Arc<Principal>, Refusal> {
        let Some(leaf) = leaf else {
            return Err(Refusal::Unauthenticated(
                "no client certificate: connect with the certificate and key of a principal in ledgerd's [[clients]]".into(),
            ));
        };
        let fp = spki_fingerprint(leaf)
            .map_err(|e| Refusal::Unauthenticated(format!("unreadable client certificate: {e}")))?;
        self.get(&fp).ok_or_else(|| {
            Refusal::Unauthenticated(format!(
                "unknown client: the certificate's key (fingerprint {fp}) is not in ledgerd's [[clients]]"
            ))
        })
    }
}

/// How callers are identified.
#[derive(Clone)]
pub enum Identify {
    /// Plaintext on loopback: every caller is [`Principal::local`].
    Local,
    /// By TLS client certificate.
    Certificates(Clients),
}

/// Why a call was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    Unauthenticated(String),
    Denied(String),
}

impl Refusal {
    pub fn status(&self) -> tonic::Status {
        match self {
            Refusal::Unauthenticated(m) => tonic::Status::unauthenticated(m.clone()),
            Refusal::Denied(m) => tonic::Status::permission_denied(m.clone()),
        }
    }
}

impl Identify {
    /// The principal behind a request's connection, or why there is none.
    fn principal<B>(&self, req: &Request<B>) -> Result<Arc<Principal>, Refusal> {
        match self {
            Identify::Local => Ok(Arc::new(Principal::local())),
            Identify::Certificates(clients) => {
                let certs = req
                    .extensions()
                    .get::<TlsConnectInfo<TcpConnectInfo>>()
                    .and_then(|t| t.peer_certs());
                clients.of_certificate(certs.as_ref().and_then(|c| c.first()).map(|c| c.as_ref()))
            }
        }
    }

    /// Admit or refuse a call to `path`.
    pub fn check<B>(
        &self,
        path: &str,
        req: &Request<B>,
    ) -> Result<Option<Arc<Principal>>, Refusal> {
        let Some(rule) = admits(path) else {
            return Err(Refusal::Denied(format!(
                "{path} is not a method of this ledger"
            )));
        };
        if rule == Admits::Anyone {
            return Ok(None);
        }
        let p = self.principal(req)?;
        admit(path, rule, CASINO_SCOPED.contains(&path), &p)?;
        Ok(Some(p))
    }
}

/// The tower layer that applies [`RULES`] to every call, and each principal's call rate
/// (`grpc.principal_calls_per_sec`: every call but ingest streams, which devices' rates bound,
/// and health checks).
#[derive(Clone)]
pub struct Access {
    pub identify: Identify,
    pub calls: Option<Arc<crate::limits::TokenBuckets>>,
}

impl<S> tower::Layer<S> for Access {
    type Service = AccessService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        AccessService {
            inner,
            identify: self.identify.clone(),
            calls: self.calls.clone(),
        }
    }
}

#[derive(Clone)]
pub struct AccessService<S> {
    inner: S,
    identify: Identify,
    calls: Option<Arc<crate::limits::TokenBuckets>>,
}

/// The method whose calls a principal's rate does not count (devices' rates bound it).
const INGEST: &str = "/casino_ledger.v1.Ingest/Submit";

impl<S> tower::Service<Request<Body>> for AccessService<S>
where
    S: tower::Service<Request<Body>, Response = Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = futures_core_boxed::BoxFuture<Result<Response<Body>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<Body>) -> Self::Future {
        match self.identify.check(req.uri().path(), &req) {
            Ok(p) => {
                if let Some(p) = p {
                    if let Some(calls) = &self.calls
                        && req.uri().path() != INGEST
                        && let Err(wait) = calls.take(p.name.as_bytes(), std::time::Instant::now())
                    {
                        crate::limits::Limit::PrincipalCalls.refused();
                        let ms = wait.as_millis().max(1);
                        let mut s = tonic::Status::resource_exhausted(format!(
                            "{} is over its call rate (grpc.principal_calls_per_sec): retry in {ms} ms",
                            p.name
                        ));
                        if let Ok(v) = ms.to_string().parse() {
                            s.metadata_mut().insert("retry-after-ms", v);
                        }
                        let resp = s.into_http();
                        return Box::pin(async move { Ok(resp) });
                    }
                    req.extensions_mut().insert(Caller(p));
                }
                // The clone that was made ready is the one that serves (tower's contract).
                let clone = self.inner.clone();
                let mut inner = std::mem::replace(&mut self.inner, clone);
                Box::pin(async move { inner.call(req).await })
            }
            Err(r) => {
                tracing::debug!(path = %req.uri().path(), refusal = ?r, "call refused");
                let resp = r.status().into_http();
                Box::pin(async move { Ok(resp) })
            }
        }
    }
}

mod futures_core_boxed {
    pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every method of every service the ledger serves has a rule: nothing is open because it
    /// was forgotten. The methods come from the compiled descriptors, not a list kept by hand.
    #[test]
    fn every_method_has_a_rule_and_every_rule_a_method() {
        use prost::Message;
        let mut served = BTreeSet::new();
        for set in [
            ledger_proto::FILE_DESCRIPTOR_SET,
            tonic_health::pb::FILE_DESCRIPTOR_SET,
            tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
        ] {
            let fds = prost_types::FileDescriptorSet::decode(set).unwrap();
            for f in fds.file {
                for s in &f.service {
                    for m in &s.method {
                        served.insert(format!("/{}.{}/{}", f.package(), s.name(), m.name()));
                    }
                }
            }
        }
        let ruled: BTreeSet<String> = RULES.iter().map(|(p, _)| p.to_string()).collect();
        assert_eq!(ruled.len(), RULES.len(), "a method is listed twice");
        let missing: Vec<_> = served.difference(&ruled).collect();
        assert!(missing.is_empty(), "methods without a rule: {missing:?}");
        let stale: Vec<_> = ruled.difference(&served).collect();
        assert!(stale.is_empty(), "rules for no method: {stale:?}");
        for p in CASINO_SCOPED {
            assert!(served.contains(*p), "{p}");
        }
    }

    fn req() -> Request<()> {
        Request::new(())
    }

    #[test]
    fn roles_casinos_and_unknown_methods() {
        let local = Identify::Local;
        // Health answers anyone; an unknown method no one.
        assert_eq!(
            local.check("/grpc.health.v1.Health/Check", &req()),
            Ok(None)
        );
        assert!(matches!(
            local.check("/casino_ledger.v1.Query/Drop", &req()),
            Err(Refusal::Denied(m)) if m.contains("not a method")
        ));
        // Without a certificate, nothing but health.
        let certs = Identify::Certificates(Clients::default());
        assert!(matches!(
            certs.check("/casino_ledger.v1.Query/GetHead", &req()),
            Err(Refusal::Unauthenticated(m)) if m.contains("no client certificate")
        ));
        assert_eq!(
            certs.check("/grpc.health.v1.Health/Watch", &req()),
            Ok(None)
        );
        // The local caller holds every role.
        for (path, _) in RULES {
            assert!(local.check(path, &req()).is_ok(), "{path}");
        }
    }

    #[test]
    fn fingerprints_are_of_the_public_key() {
        let key = rcgen::KeyPair::generate().unwrap();
        let a = rcgen::CertificateParams::new(vec!["a".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let b = rcgen::CertificateParams::new(vec!["b".into()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let fa = spki_fingerprint(a.der()).unwrap();
        assert_eq!(
            fa,
            spki_fingerprint(b.der()).unwrap(),
            "same key, same principal"
        );
        assert_eq!(
            fa,
            hex::encode(Sha256::digest(
                rcgen::PublicKeyData::subject_public_key_info(&key)
            )),
            "SHA-256 of the SubjectPublicKeyInfo"
        );
        let other = rcgen::KeyPair::generate().unwrap();
        let c = rcgen::CertificateParams::new(vec!["a".into()])
            .unwrap()
            .self_signed(&other)
            .unwrap();
        assert_ne!(fa, spki_fingerprint(c.der()).unwrap());
        assert!(spki_fingerprint(b"not a certificate").is_err());
    }
}
