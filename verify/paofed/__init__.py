"""PAO-Fed (seed 004_180cd372987d137b.txt, Chapter 4 / Publication P4): mean and mean-square analysis claims."""
