# SPDX-License-Identifier: MIT
"""LED scenes and panels, and buttons: how the board shows verdicts, the cube and the turn.

Drivers for GPIO libraries are imported only inside the adapter that needs them (``RPi.GPIO``
refuses to import anywhere but on a Raspberry Pi).
"""
