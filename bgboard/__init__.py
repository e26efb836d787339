# SPDX-License-Identifier: MIT
"""bgboard: referee, teach and record backgammon played on a real board.

The application package: the command line, and (as they arrive) the controller loop, the
match store and the web view. The libraries it drives are ``engine`` (rules), ``vision``
(camera), ``hardware`` (LEDs and buttons) and ``firmware_bridge`` (the LED controller link).
"""

__version__ = "0.1.0"
