"""Closed-form quantities of the papers checked by fedcheck.

Pure functions only: no randomness, no files, no plotting. Organised by concept
(``theory.bounds``, ``theory.privacy``, ...), not by paper.
"""
