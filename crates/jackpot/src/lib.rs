//! Slot-machine meters, return to player, jackpot and superjackpot captive values and their force-majeure transfer (P217/2007 T.III). Pure accounting: no I/O.
