# SPDX-License-Identifier: MIT
"""``python -m bgboard`` runs the command line."""

from bgboard.cli import main

raise SystemExit(main())
