//! The audit's view of the real rule engines (the `rules` crate).

use rules::{ConfiguredTable, TableState};
use rules_core::{
    Adjudication, ConfigError, GameId, Options, Round, RoundError, TableConfig, Violation,
};

use crate::Adjudicator;

/// Every rule engine of the product, as the audit drives them.
#[derive(Clone, Copy, Debug, Default)]
pub struct RulesEngines;

impl Adjudicator for RulesEngines {
    type Table = ConfiguredTable;
    type State = TableState;

    fn has_engine(&self, game: GameId) -> bool {
        rules::has_engine(game)
    }

    fn configure(
        &self,
        config: &TableConfig,
    ) -> Result<(ConfiguredTable, Vec<Violation>), ConfigError> {
        let table = ConfiguredTable::new(config.clone())?;
        let violations = table.violations().to_vec();
        Ok((table, violations))
    }

    fn fresh_state(&self, table: &ConfiguredTable) -> TableState {
        table.fresh_state()
    }

    fn adjudicate(
        &self,
        table: &ConfiguredTable,
        state: &mut TableState,
        round: &Round,
    ) -> Result<Adjudication, RoundError> {
        table.adjudicate(state, round, &Options::default())
    }
}
