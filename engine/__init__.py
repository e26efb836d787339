# SPDX-License-Identifier: MIT
"""The bgboard rules engine: positions, dice, legal plays, notation, IDs, match state, the judge.

Pure standard-library Python; nothing here does I/O beyond reading and writing text formats.
"""
