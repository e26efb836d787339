# SPDX-License-Identifier: MIT
"""Camera side of bgboard: frame sources, calibration, the board and dice readers, the stabiliser.

Reads the checkers, dice and cube from frames of a camera above the board and hands the
engine a reading per point with confidences. Needs numpy and OpenCV (the ``vision`` extra).
"""
