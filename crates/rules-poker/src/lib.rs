//! Rule engines for non-banked poker: hold'em, omaha, póquer sintético, hold'em online (P217/2007 T.II S.II; P461/2001; Reg806/2015). Pure: no I/O.
