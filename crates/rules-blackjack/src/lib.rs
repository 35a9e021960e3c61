//! Rule engine for blackjack/21 with jackpot, complementary bets, shuffler and online rules (P217/2007 T.I C.III S.I; P1364/2001; ROBJ/2015). Pure: no I/O.
