"""Claims of zCDP-NFL (seed 004_180cd372987d137b.txt, thesis Chapter 3 and Publication 2)."""
