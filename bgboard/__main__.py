# SPDX-License-Identifier: MIT
"""``python -m bgboard`` and the ``bgboard`` command: the command line (:func:`bgboard.cli.main`)."""

import sys


def run() -> None:
    """Run the command line and exit with its status.

    Ctrl-C while the command line is still loading (its imports take a tenth of a second, before
    :func:`~bgboard.cli.main` handles Ctrl-C itself) ends with one line and status 130, not a
    traceback.
    """
    try:
        from bgboard.cli import main

        status = main()
    except KeyboardInterrupt:
        print("bgboard: interrupted", file=sys.stderr)
        status = 130
    raise SystemExit(status)


if __name__ == "__main__":
    run()
