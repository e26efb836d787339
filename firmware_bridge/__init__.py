# SPDX-License-Identifier: MIT
"""Host side of the serial link to the LED microcontroller, and the microcontroller's firmware.

Standard library and pyserial only; the firmware's C sources live in ``firmware_bridge/avr``.
"""
