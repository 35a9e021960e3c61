//! Rule engine for póquer sem descarte with jackpot (P217/2007 T.I C.III S.II; P461/2001). Pure: no I/O.
