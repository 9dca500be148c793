"""Claims of spec §6.2 on the matrices E, E' (Lemmas 13, 15, 16, 17, Eqn 90, Eqn 93) — being written."""
