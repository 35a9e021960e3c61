//! Rule engines for American, French and online French roulette (P217/2007 T.I C.I; R807/2015). Pure: no I/O.
