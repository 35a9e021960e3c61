//! Events as JSON Lines: one `EventBody` per line in the proto's canonical JSON mapping, without
//! `deviceId` and `sequence` (the agent fills them in), e.g.
//!
//! ```json
//! {"occurredAtMs": "1764300000000", "gamePlayed": {"machineId": "M-01", "gameNumber": "12", "wagerCents": "100", "winCents": "0"}}
//! ```
//!
//! Field names in lowerCamelCase or as in the proto (`occurred_at_ms`), 64-bit integers as
//! strings or numbers, enums by name. A line without `occurredAtMs` happened when the agent took
//! it. Each line is checked as the ledger checks a body (ids, amounts, lists, text), so a bad
//! line is refused here, naming its line and field, before it gets a sequence number.

use ledger_agent::outbox::NewEvent;
use ledger_proto::v1;

/// Why a line is not an event.
#[derive(Debug)]
pub struct BadLine {
    pub source: String,
    pub problem: String,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.source, self.problem)
    }
}

/// Read one line (`source` names it for messages: `FILE:LINE`) as an event of `device_id`.
/// Blank lines are `Ok(None)`.
pub fn parse_line(
    line: &str,
    source: String,
    device_id: &str,
    now_ms: i64,
) -> Result<Option<NewEvent>, BadLine> {
    let text = line.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let bad = |problem: String| BadLine {
        source: source.clone(),
        problem,
    };
    let body: v1::EventBody = serde_json::from_str(text)
        .map_err(|e| bad(format!("not an EventBody in the proto's JSON mapping: {e}")))?;
    if !body.device_id.is_empty() && body.device_id != device_id {
        return Err(bad(format!(
            "deviceId {:?} is not this agent's device ({device_id}); leave it out",
            body.device_id
        )));
    }
    if body.sequence != 0 {
        return Err(bad(
            "sequence: the agent numbers events itself; leave it out".to_string(),
        ));
    }
    let occurred_at_ms = if body.occurred_at_ms == 0 {
        now_ms
    } else {
        body.occurred_at_ms
    };
    let Some(payload) = body.payload else {
        return Err(bad(
            "no payload (one of gamePlayed, meterReading, ...: docs/events.md)".to_string(),
        ));
    };
    // The ledger's own checks of a body, with this device and a placeholder sequence.
    ledger_core::Event::from_proto(v1::EventBody {
        device_id: device_id.to_string(),
        sequence: 1,
        occurred_at_ms,
        payload: Some(payload.clone()),
    })
    .map_err(|e| bad(e.to_string()))?;
    Ok(Some(NewEvent {
        occurred_at_ms,
        payload,
        source,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use v1::event_body::Payload as P;

    fn parse(line: &str) -> Result<Option<NewEvent>, BadLine> {
        parse_line(line, "f:1".into(), "machine-1", 5)
    }

    #[test]
    fn canonical_json_with_either_field_spelling() {
        for line in [
            r#"{"occurredAtMs":"1764300000000","gamePlayed":{"machineId":"M-01","gameNumber":"12","wagerCents":"100","winCents":"0"}}"#,
            r#"{"occurred_at_ms":1764300000000,"game_played":{"machine_id":"M-01","game_number":12,"wager_cents":100}}"#,
        ] {
            let e = parse(line).unwrap().unwrap();
            assert_eq!(e.occurred_at_ms, 1_764_300_000_000);
            assert_eq!(e.source, "f:1");
            match e.payload {
                P::GamePlayed(g) => {
                    assert_eq!((g.machine_id.as_str(), g.game_number), ("M-01", 12));
                    assert_eq!((g.wager_cents, g.win_cents), (100, 0));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn meters_enums_and_the_time_of_taking() {
        let e = parse(
            r#"{"meterReading":{"machineId":"M-01","meters":[{"name":"coin_in","value":"1200","rollover":"100000000"}]}}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(e.occurred_at_ms, 5, "no time: when the agent took it");
        assert!(matches!(e.payload, P::MeterReading(ref m) if m.meters[0].value == 1200));
        assert!(parse("   ").unwrap().is_none());
    }

    #[test]
    fn bad_lines_name_the_line_and_the_problem() {
        let cases = [
            ("{", "not an EventBody"),
            (
                r#"{"gamePlayed":{"machineId":"M-01"},"sequence":"3"}"#,
                "sequence",
            ),
            (
                r#"{"deviceId":"other","gamePlayed":{"machineId":"M-01"}}"#,
                "not this agent's device",
            ),
            (r#"{"occurredAtMs":"7"}"#, "no payload"),
            (
                r#"{"gamePlayed":{"machineId":"M-01","wagerCents":"-5"}}"#,
                "wager_cents",
            ),
            (
                r#"{"gamePlayed":{"machineId":"bad id with spaces"}}"#,
                "machine_id",
            ),
            (
                r#"{"gamePlayed":{"machineId":"M-01"},"colour":"red"}"#,
                "colour",
            ),
        ];
        for (line, want) in cases {
            let e = parse(line)
                .err()
                .unwrap_or_else(|| panic!("{line} accepted"));
            assert_eq!(e.source, "f:1");
            assert!(e.problem.contains(want), "{line}: {}", e.problem);
        }
    }
}
