//! One entry point to every rule engine: configure a table, adjudicate a round, whatever the game. Pure: no I/O.
