"""Kernels of "Scan and Snap" (prefix ``ss``): the scalar level (h, h*, γ, Theorem 4's surrogate) so far."""
