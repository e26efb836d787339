# SPDX-License-Identifier: MIT
"""LED scenes and panels, and buttons: how the board shows verdicts, the cube and the turn.

- :mod:`hardware.scene`: LED names, colours, patterns, immutable :class:`Scene` values;
- :mod:`hardware.layout`: where each named LED sits in the chain (TOML);
- :mod:`hardware.presenter`: match state, verdict and hint in, scene out (pure);
- :mod:`hardware.panels`: what shows scenes, opened by address: ``fake``, ``terminal``,
  ``serial:PORT`` (:mod:`hardware.serial_panel`), ``gpio:...`` and ``gpio595:...``
  (:mod:`hardware.gpio`);
- :mod:`hardware.buttons`: named push buttons on GPIO;
- :mod:`hardware.check`, :mod:`hardware.devices`: ``bgboard leds check`` and ``bgboard devices``.

Drivers for GPIO libraries and pyserial are imported only inside the adapter that needs them
(``RPi.GPIO`` refuses to import anywhere but on a Raspberry Pi).
"""

from hardware.layout import LayoutError, LedLayout
from hardware.panels import FakeLedPanel, LedPanel, PanelAddressError, PanelError, open_panel
from hardware.presenter import DEFAULT_THEME, Theme, present, scene_for
from hardware.scene import LED_NAMES, Colour, Light, Pattern, Scene

__all__ = [
    "DEFAULT_THEME",
    "LED_NAMES",
    "Colour",
    "FakeLedPanel",
    "LayoutError",
    "LedLayout",
    "LedPanel",
    "Light",
    "PanelAddressError",
    "PanelError",
    "Pattern",
    "Scene",
    "Theme",
    "open_panel",
    "present",
    "scene_for",
]
