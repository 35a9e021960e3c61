//! Rule engines for banca francesa, craps and cussec (P217/2007 T.I C.II). Pure: no I/O.
