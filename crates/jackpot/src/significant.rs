//! Machines' significant events (proto `MachineEvent`): recorded, not yet checked.

use crate::book::{Book, check_id};
use crate::error::ApplyError;
use crate::event::{ChangeAuthorized, EventCtx, MachineEvent, ProgramApproved};
use crate::finding::Finding;

impl Book {
    pub(crate) fn on_machine_event(
        &mut self,
        e: &MachineEvent,
        _ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("machine_id", &e.machine_id)?;
        if !self.machines.contains_key(&*e.machine_id) {
            return Err(ApplyError::unknown("machine_id", "machine", &e.machine_id));
        }
        Ok(Vec::new())
    }

    pub(crate) fn on_change_authorized(
        &mut self,
        e: &ChangeAuthorized,
        _ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("authorization_id", &e.authorization_id)?;
        check_id("machine_id", &e.machine_id)?;
        Ok(Vec::new())
    }

    pub(crate) fn on_program_approved(
        &mut self,
        e: &ProgramApproved,
        _ctx: EventCtx,
    ) -> Result<Vec<Finding>, ApplyError> {
        check_id("model_id", &e.model_id)?;
        check_id("component", &e.component)?;
        Ok(Vec::new())
    }

    pub(crate) fn hand_out_events(&mut self, _machine_id: &str) {}
}
