"""Checks of FedPDM-DP (seed 001_322f61f9958f64f9.txt): Lemma 1, Theorems 1 and 2 (privacy claims)."""
