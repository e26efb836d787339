# SPDX-License-Identifier: MIT
"""Tables without a camera or players: the demo, and what tests and benchmarks play.

- :mod:`bgboard.sim.simulation`: simulated players and a rendered camera at a real table
  (:class:`DemoGame`, :class:`GnubgDemoGame`), with the figures they score.
- :mod:`bgboard.sim.demo`: the ``bgboard demo`` command around them.
- :mod:`bgboard.sim.samples`: rendered sample photos (``bgboard vision sample``).
- :mod:`bgboard.sim.scripted`: matches typed into the controller from a record, no camera
  (the hall's load test).

The table's own modules never import this package.
"""
