//! Sign-in: argon2id passwords, sessions, CSRF tokens, lockout after repeated failures.
//!
//! Sessions live in memory (a restart signs everyone out); the browser holds only a random
//! 256-bit id in a `Secure; HttpOnly; SameSite=Strict` cookie. Every session has its own CSRF
//! token, which every form carries and every POST must present. Time is passed in by the caller
//! (`Instant`), so the rules are tested without waiting.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use ring::rand::{SecureRandom, SystemRandom};
use subtle::ConstantTimeEq;

/// 32 random bytes, hex.
pub fn random_token() -> String {
    let mut b = [0u8; 32];
    SystemRandom::new()
        .fill(&mut b)
        .expect("the system's random number generator");
    hex::encode(b)
}

/// Equal without revealing where two tokens differ.
pub fn tokens_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

fn argon2() -> Argon2<'static> {
    // OWASP's argon2id minimum (19 MiB, 2 passes, 1 lane): the crate's defaults.
    Argon2::new(Algorithm::Argon2id, Version::V0x13, Params::default())
}

/// An argon2id PHC string for `password`, with a random salt.
pub fn hash_password(password: &str) -> Result<String, argon2::password_hash::Error> {
    let mut salt = [0u8; 16];
    SystemRandom::new()
        .fill(&mut salt)
        .map_err(|_| argon2::password_hash::Error::Crypto)?;
    let salt = SaltString::encode_b64(&salt)?;
    Ok(argon2()
        .hash_password(password.as_bytes(), &salt)?
        .to_string())
}

/// Whether `password` matches the PHC string `hash` (false for a hash that does not parse).
pub fn verify_password(password: &str, hash: &str) -> bool {
    match PasswordHash::new(hash) {
        Ok(h) => argon2().verify_password(password.as_bytes(), &h).is_ok(),
        Err(_) => false,
    }
}

#[derive(Debug, Clone)]
pub struct Session {
    /// Index of the account in the configuration.
    pub account: usize,
    pub csrf: String,
    pub created: Instant,
    pub last_seen: Instant,
}

/// What a sign-in attempt came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignIn {
    Ok,
    /// Wrong name or password (not said which).
    Refused,
    /// Too many failures: locked until the lock ends, whatever the password.
    Locked,
}

#[derive(Default)]
struct Failures {
    count: u32,
    locked_until: Option<Instant>,
}

/// Counters of sign-ins, for the log and `/healthz`.
#[derive(Default)]
pub struct Counters {
    pub ok: AtomicU64,
    pub refused: AtomicU64,
    pub locked: AtomicU64,
}

pub struct Auth {
    sessions: Mutex<HashMap<String, Session>>,
    failures: Mutex<HashMap<String, Failures>>,
    pub counters: Counters,
    idle: Duration,
    max: Duration,
    max_failures: u32,
    lock: Duration,
    /// Verified against for unknown names, so that they take as long as known ones.
    dummy_hash: String,
}

impl Auth {
    pub fn new(s: &crate::config::Session, l: &crate::config::Lockout) -> Auth {
        Auth {
            sessions: Mutex::default(),
            failures: Mutex::default(),
            counters: Counters::default(),
            idle: Duration::from_secs(s.idle_secs),
            max: Duration::from_secs(s.max_secs),
            max_failures: l.max_failures,
            lock: Duration::from_secs(l.lock_secs),
            dummy_hash: hash_password(&random_token()).expect("argon2id"),
        }
    }

    /// Check a sign-in of `name` (known as account index `account`, or unknown) with `password`
    /// against `hash` at `now`, counting failures towards the lockout.
    pub fn check(
        &self,
        name: &str,
        account: Option<usize>,
        hash: Option<&str>,
        password: &str,
        now: Instant,
    ) -> SignIn {
        let locked = {
            let f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
            f.get(name)
                .and_then(|f| f.locked_until)
                .is_some_and(|t| now < t)
        };
        // Verify even when locked or unknown: the time taken says nothing.
        let good = verify_password(password, hash.unwrap_or(&self.dummy_hash))
            && account.is_some()
            && hash.is_some();
        let outcome = if locked {
            SignIn::Locked
        } else if good {
            SignIn::Ok
        } else {
            SignIn::Refused
        };
        let mut fails = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            SignIn::Ok => {
                fails.remove(name);
                self.counters.ok.fetch_add(1, Ordering::Relaxed);
            }
            SignIn::Refused => {
                self.counters.refused.fetch_add(1, Ordering::Relaxed);
                // Failures of unknown names are not kept (no memory grows with guesses).
                if account.is_some() {
                    let f = fails.entry(name.to_string()).or_default();
                    if f.locked_until.is_some_and(|t| now >= t) {
                        *f = Failures::default();
                    }
                    f.count += 1;
                    if f.count >= self.max_failures {
                        f.locked_until = Some(now + self.lock);
                        f.count = 0;
                    }
                }
            }
            SignIn::Locked => {
                self.counters.locked.fetch_add(1, Ordering::Relaxed);
            }
        }
        outcome
    }

    /// A new session for `account`; returns its id.
    pub fn create(&self, account: usize, now: Instant) -> (String, Session) {
        let id = random_token();
        let s = Session {
            account,
            csrf: random_token(),
            created: now,
            last_seen: now,
        };
        let mut m = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|_, s| self.alive(s, now));
        m.insert(id.clone(), s.clone());
        (id, s)
    }

    fn alive(&self, s: &Session, now: Instant) -> bool {
        now.saturating_duration_since(s.last_seen) < self.idle
            && now.saturating_duration_since(s.created) < self.max
    }

    /// The live session `id`, its idle time restarted.
    pub fn get(&self, id: &str, now: Instant) -> Option<Session> {
        let mut m = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let alive = m.get(id).map(|s| self.alive(s, now))?;
        if !alive {
            m.remove(id);
            return None;
        }
        let s = m.get_mut(id)?;
        s.last_seen = now;
        Some(s.clone())
    }

    pub fn end(&self, id: &str) {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Lockout, Session as S};

    fn auth(max_failures: u32) -> Auth {
        Auth::new(
            &S {
                idle_secs: 60,
                max_secs: 600,
            },
            &Lockout {
                max_failures,
                lock_secs: 300,
            },
        )
    }

    #[test]
    fn passwords_hash_and_verify() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$v=19$"), "{h}");
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("correct hors", &h));
        assert!(!verify_password("correct horse", "not a hash"));
        assert_ne!(h, hash_password("correct horse").unwrap(), "salted");
    }

    #[test]
    fn lockout_after_max_failures_refuses_even_the_right_password() {
        let a = auth(3);
        let h = hash_password("pw").unwrap();
        let t0 = Instant::now();
        assert_eq!(a.check("ana", Some(0), Some(&h), "x", t0), SignIn::Refused);
        assert_eq!(a.check("ana", Some(0), Some(&h), "y", t0), SignIn::Refused);
        // A success in between starts the count again.
        assert_eq!(a.check("ana", Some(0), Some(&h), "pw", t0), SignIn::Ok);
        for _ in 0..3 {
            assert_eq!(a.check("ana", Some(0), Some(&h), "x", t0), SignIn::Refused);
        }
        let t1 = t0 + Duration::from_secs(299);
        assert_eq!(a.check("ana", Some(0), Some(&h), "pw", t1), SignIn::Locked);
        // Another account is not locked.
        assert_eq!(a.check("bea", Some(1), Some(&h), "pw", t1), SignIn::Ok);
        let t2 = t0 + Duration::from_secs(300);
        assert_eq!(a.check("ana", Some(0), Some(&h), "pw", t2), SignIn::Ok);
        // Unknown names and accounts without a password never sign in.
        assert_eq!(a.check("zed", None, None, "pw", t2), SignIn::Refused);
        assert_eq!(a.check("ana", Some(0), None, "pw", t2), SignIn::Refused);
        assert_eq!(a.counters.ok.load(Ordering::Relaxed), 3);
        assert_eq!(a.counters.locked.load(Ordering::Relaxed), 1);
        assert_eq!(a.counters.refused.load(Ordering::Relaxed), 7);
    }

    #[test]
    fn sessions_expire_when_idle_and_at_their_maximum() {
        let a = auth(3);
        let t0 = Instant::now();
        let (id, s) = a.create(2, t0);
        assert_eq!(id.len(), 64);
        assert_ne!(s.csrf, id);
        assert_eq!(a.get(&id, t0 + Duration::from_secs(59)).unwrap().account, 2);
        // Used at 59 s: alive until 59 + 60.
        assert!(a.get(&id, t0 + Duration::from_secs(118)).is_some());
        assert!(a.get(&id, t0 + Duration::from_secs(179)).is_none());
        // The maximum holds however busy the session.
        let (id, _) = a.create(0, t0);
        let mut t = t0;
        for _ in 0..11 {
            t += Duration::from_secs(50);
            assert!(a.get(&id, t).is_some());
        }
        assert!(a.get(&id, t0 + Duration::from_secs(600)).is_none());
        let (id, _) = a.create(0, t0);
        a.end(&id);
        assert!(a.get(&id, t0).is_none());
        assert!(a.get("forged", t0).is_none());
    }

    #[test]
    fn tokens_compare_in_full() {
        let t = random_token();
        assert!(tokens_equal(&t, &t.clone()));
        assert!(!tokens_equal(&t, &t[..63]));
        assert!(!tokens_equal(&t, &random_token()));
    }
}
