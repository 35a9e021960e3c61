//! craps placeholder
use rules_core::*;
use serde::{Deserialize, Serialize};
#[derive(Clone, Debug)]
pub struct CrapsConfig {}
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrapsState {}
pub(crate) fn configure(_t: &TableConfig) -> Result<Configured<CrapsConfig>, ConfigError> { Ok(Configured { config: CrapsConfig {}, violations: vec![] }) }
pub(crate) fn adjudicate(_c: &CrapsConfig, _s: &mut CrapsState, r: &Round, _o: &Options) -> Result<Adjudication, RoundError> { Ok(Adjudication::new(GameId::Craps, r.round_id.clone())) }
