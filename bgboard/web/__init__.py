# SPDX-License-Identifier: MIT
"""The live page and the match browser: what a browser sees of a table.

- :mod:`bgboard.web.hub`: the table's events turned into the page's state (:class:`WebHub`),
  and the console commands the page may send.
- :mod:`bgboard.web.server`: the Starlette app and the uvicorn server in a thread of the
  table's process (:class:`LiveWeb`), the match browser (:func:`history_app`), and the one
  address parser every server uses (:class:`Bind`).
- :mod:`bgboard.web.camera_view`: the camera's frames for the page, with the board's outline.
- :mod:`bgboard.web.calibration_view`: calibrating a board from the page (``/calibrate``).
- ``static/``: the pages, scripts and style served as they are.

The table's own modules never import this package: a table runs without a page, and the page
is attached to it by :mod:`bgboard.session`.
"""
