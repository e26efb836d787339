# SPDX-License-Identifier: MIT
"""3D-rendered camera frames of real-looking boards, with exact labels, for training and benchmarks.

Run from the project root, with Blender's Python module installed (``pip install -e '.[render3d]'``)::

    python -m tools.render3d --out DIR --setups N --frames M --seed S --size 1280x720 --samples 8

A *setup* is one board under one fixed camera and light. Setup ``k`` has seed ``S + k`` and is
written to ``DIR/s<seed, six digits>/``: frame ``00.jpg`` shows the starting position with no dice
and the cube centred (the calibration frame), later frames random positions from
:func:`vision.render.random_scene`, each with ``<nn>.json`` beside it:

- ``corners``: the playing field's corners in image pixels, beside player 1's 13, 24, 1 and
  12 points (the calibration's order); ``bar_fraction``, ``checker_fraction``: the field's
  geometry (:class:`vision.geometry.FieldGeometry`);
- ``points`` (24, player 1's numbering, + for his checkers), ``bar`` and ``off`` (player 1's,
  player 2's), ``bar_halves`` (what lies on the bar's lower and upper half, player 1's
  positive), ``dice`` (``value``, ``half``, ``flat``, image ``box``), ``cube`` (``value``,
  ``owner``), ``hand``; ``scene``: the setup's random choices, for debugging.

With ``--varied`` each setup's board and positions vary as real tables do (see
:meth:`~tools.render3d.plan.Style.vary` and :func:`vision.render.arranged`): points the colour of
a side's checkers, squarer or longer fields, narrow hinged bars, stacks lined up six or seven,
checkers anywhere along the bar, dice cups standing over the points' tips.

Modules: :mod:`~tools.render3d.plan` (random choices, camera geometry), :mod:`~tools.render3d.layout`
(where the pieces lie), :mod:`~tools.render3d.blender` (the Blender scene, Cycles),
:mod:`~tools.render3d.camera` (exposure, lens, noise, JPEG), :mod:`~tools.render3d.frames`
(setups and labels).
"""
