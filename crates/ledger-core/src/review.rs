//! Reviews of audit findings ([`v1::FindingReviewed`] ledger records): the rules a review must
//! keep, shared by ledgerd (which refuses a review that breaks them) and `verify` (which refuses a
//! chain holding one that is malformed).
//!
//! A finding is open until reviewed; each review's action sets its status (acknowledged,
//! disputed, resolved). A resolved finding takes no further review, a review never repeats the
//! status the finding already has, and resolving needs a comment saying how.

use ledger_proto::v1::{self, FindingAction, FindingStatus};

/// Most characters in a review's comment.
pub const MAX_COMMENT_CHARS: usize = 2000;

/// Why a review is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReviewError {
    /// A malformed field (named first).
    #[error("{0}")]
    Invalid(String),
    /// The finding's status does not allow it.
    #[error("{0}")]
    Transition(String),
}

/// The status a review with `action` leaves.
pub fn status_after(action: FindingAction) -> FindingStatus {
    match action {
        FindingAction::Acknowledge => FindingStatus::Acknowledged,
        FindingAction::Dispute => FindingStatus::Disputed,
        FindingAction::Resolve => FindingStatus::Resolved,
        FindingAction::Unspecified => FindingStatus::Open,
    }
}

/// The status of a finding whose last review (in chain order) had `last` (None: never reviewed).
pub fn status_of(last: Option<FindingAction>) -> FindingStatus {
    last.map_or(FindingStatus::Open, status_after)
}

/// A status's name as the CLI and the console show it and take it.
pub fn status_name(s: FindingStatus) -> &'static str {
    match s {
        FindingStatus::Unspecified => "any",
        FindingStatus::Open => "open",
        FindingStatus::Acknowledged => "acknowledged",
        FindingStatus::Disputed => "disputed",
        FindingStatus::Resolved => "resolved",
    }
}

/// An action's name as the CLI and the console show it and take it.
pub fn action_name(a: FindingAction) -> &'static str {
    match a {
        FindingAction::Unspecified => "unspecified",
        FindingAction::Acknowledge => "acknowledge",
        FindingAction::Dispute => "dispute",
        FindingAction::Resolve => "resolve",
    }
}

/// The action named `s` (as [`action_name`]).
pub fn parse_action(s: &str) -> Option<FindingAction> {
    [
        FindingAction::Acknowledge,
        FindingAction::Dispute,
        FindingAction::Resolve,
    ]
    .into_iter()
    .find(|a| action_name(*a) == s)
}

/// The status named `s` (as [`status_name`], "any" included).
pub fn parse_status(s: &str) -> Option<FindingStatus> {
    [
        FindingStatus::Unspecified,
        FindingStatus::Open,
        FindingStatus::Acknowledged,
        FindingStatus::Disputed,
        FindingStatus::Resolved,
    ]
    .into_iter()
    .find(|a| status_name(*a) == s)
}

/// A comment: at most [`MAX_COMMENT_CHARS`] characters, no control characters but line breaks
/// and tabs.
pub fn check_comment(comment: &str) -> Result<(), ReviewError> {
    let n = comment.chars().count();
    if n > MAX_COMMENT_CHARS {
        return Err(ReviewError::Invalid(format!(
            "comment: {n} characters, at most {MAX_COMMENT_CHARS}"
        )));
    }
    if let Some(c) = comment
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(ReviewError::Invalid(format!(
            "comment: control character {c:?} not allowed"
        )));
    }
    Ok(())
}

/// Whether a review with `action` and `comment` may be made of a finding in status `current`.
pub fn check_review(
    current: FindingStatus,
    action: FindingAction,
    comment: &str,
) -> Result<(), ReviewError> {
    if action == FindingAction::Unspecified {
        return Err(ReviewError::Invalid(
            "action: missing (acknowledge, dispute or resolve)".into(),
        ));
    }
    check_comment(comment)?;
    if action == FindingAction::Resolve && comment.trim().is_empty() {
        return Err(ReviewError::Invalid(
            "comment: required to resolve a finding (say how it was dealt with)".into(),
        ));
    }
    if current == FindingStatus::Resolved {
        return Err(ReviewError::Transition(
            "the finding is resolved: a resolved finding takes no further review".into(),
        ));
    }
    if status_after(action) == current {
        return Err(ReviewError::Transition(format!(
            "the finding is already {}",
            status_name(current)
        )));
    }
    Ok(())
}

/// A recorded review's own form (what `verify` checks of each one): a finding id, a known
/// action, a principal, a comment within bounds (present when resolving), a known previous
/// status that allowed the action.
pub fn check_record(r: &v1::FindingReviewed) -> Result<(), ReviewError> {
    if r.finding_id.is_empty() {
        return Err(ReviewError::Invalid(
            "finding_reviewed.finding_id: empty".into(),
        ));
    }
    if r.principal.is_empty() {
        return Err(ReviewError::Invalid(
            "finding_reviewed.principal: empty".into(),
        ));
    }
    let action = FindingAction::try_from(r.action).map_err(|_| {
        ReviewError::Invalid(format!(
            "finding_reviewed.action: {} is not an action",
            r.action
        ))
    })?;
    let previous = FindingStatus::try_from(r.previous_status)
        .ok()
        .filter(|s| *s != FindingStatus::Unspecified)
        .ok_or_else(|| {
            ReviewError::Invalid(format!(
                "finding_reviewed.previous_status: {} is not a status",
                r.previous_status
            ))
        })?;
    check_review(previous, action, &r.comment)
}

#[cfg(test)]
mod tests {
    use super::*;
    use FindingAction as A;
    use FindingStatus as S;

    #[test]
    fn each_action_sets_its_status_and_an_unreviewed_finding_is_open() {
        assert_eq!(status_of(None), S::Open);
        assert_eq!(status_of(Some(A::Acknowledge)), S::Acknowledged);
        assert_eq!(status_of(Some(A::Dispute)), S::Disputed);
        assert_eq!(status_of(Some(A::Resolve)), S::Resolved);
    }

    #[test]
    fn the_transitions_allowed_and_refused() {
        let ok = |s, a, c| check_review(s, a, c).is_ok();
        assert!(ok(S::Open, A::Acknowledge, ""));
        assert!(ok(S::Open, A::Dispute, "not ours"));
        assert!(ok(S::Acknowledged, A::Dispute, ""));
        assert!(ok(S::Disputed, A::Acknowledge, ""));
        assert!(ok(S::Disputed, A::Resolve, "paid back"));
        assert!(ok(S::Open, A::Resolve, "paid back"));
        // Resolving needs a comment; whitespace is not one.
        assert!(matches!(
            check_review(S::Acknowledged, A::Resolve, "  \n"),
            Err(ReviewError::Invalid(m)) if m.starts_with("comment:")
        ));
        // Nothing after resolved, nothing twice.
        for a in [A::Acknowledge, A::Dispute, A::Resolve] {
            assert!(matches!(
                check_review(S::Resolved, a, "again"),
                Err(ReviewError::Transition(_))
            ));
        }
        assert!(matches!(
            check_review(S::Acknowledged, A::Acknowledge, ""),
            Err(ReviewError::Transition(m)) if m.contains("already acknowledged")
        ));
        assert!(matches!(
            check_review(S::Open, A::Unspecified, ""),
            Err(ReviewError::Invalid(m)) if m.starts_with("action:")
        ));
    }

    #[test]
    fn a_comment_is_bounded_and_has_no_control_characters() {
        assert!(check_comment(&"é".repeat(MAX_COMMENT_CHARS)).is_ok());
        assert!(check_comment("linha 1\nlinha 2\tfim").is_ok());
        let long = check_comment(&"a".repeat(MAX_COMMENT_CHARS + 1)).unwrap_err();
        assert!(long.to_string().contains("at most 2000"), "{long}");
        let ctl = check_comment("bell\u{7}").unwrap_err();
        assert!(ctl.to_string().contains("control character"), "{ctl}");
    }

    #[test]
    fn names_parse_back() {
        for a in [A::Acknowledge, A::Dispute, A::Resolve] {
            assert_eq!(parse_action(action_name(a)), Some(a));
        }
        for s in [
            S::Unspecified,
            S::Open,
            S::Acknowledged,
            S::Disputed,
            S::Resolved,
        ] {
            assert_eq!(parse_status(status_name(s)), Some(s));
        }
        assert_eq!(parse_action("close"), None);
    }

    #[test]
    fn a_record_must_name_its_finding_principal_and_a_status_that_allowed_it() {
        let good = v1::FindingReviewed {
            finding_id: "f1".into(),
            action: A::Acknowledge as i32,
            principal: "compliance-lx".into(),
            previous_status: S::Open as i32,
            ..Default::default()
        };
        assert!(check_record(&good).is_ok());
        let bad: [fn(&mut v1::FindingReviewed); 5] = [
            |r| r.finding_id.clear(),
            |r| r.principal.clear(),
            |r| r.action = 9,
            |r| r.previous_status = 0,
            |r| r.previous_status = S::Resolved as i32,
        ];
        for (i, f) in bad.iter().enumerate() {
            let mut r = good.clone();
            f(&mut r);
            assert!(check_record(&r).is_err(), "case {i}");
        }
    }
}
