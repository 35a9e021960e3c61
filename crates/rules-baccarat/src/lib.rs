//! Rule engines for bacará ponto e banca, ponto e banca/Macau and chemin de fer (P217/2007 T.I C.III S.III-S.IV; T.II S.I). Pure: no I/O.
