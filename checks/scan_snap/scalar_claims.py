"""Claims of spec §6.2 on h, h*, ω and γ (Lemmas 7–9, Remark 2, Theorem 1(b)) — being written."""
