# SPDX-License-Identifier: MIT
#
# The LED controller's firmware and its emulator harness.
#
#   make firmware                 regenerate bgl_protocol.h, build the ELF and the HEX, show sizes
#   make harness                  build the simavr harness the tests run the firmware in
#   make flash PORT=/dev/ttyUSB0  upload with avrdude (UPLOAD_BAUD=57600 for old-bootloader Nanos)
#
# Debian packages: gcc-avr avr-libc binutils-avr (firmware), libsimavr-dev pkg-config gcc
# (harness), avrdude (flash).

PYTHON ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)

MCU ?= atmega328p
F_CPU ?= 16000000UL
AVR_CC ?= avr-gcc
AVR_OBJCOPY ?= avr-objcopy
AVR_SIZE ?= avr-size
AVR_CFLAGS ?= -mmcu=$(MCU) -DF_CPU=$(F_CPU) -Os -std=gnu11 -Wall -Wextra \
	-ffunction-sections -fdata-sections
AVR_LDFLAGS ?= -mmcu=$(MCU) -Wl,--gc-sections

AVR_DIR := firmware_bridge/avr
FW_BUILD ?= $(AVR_DIR)/build
FW_ELF := $(FW_BUILD)/bgboard-leds.elf
FW_HEX := $(FW_BUILD)/bgboard-leds.hex
FW_HEADER := $(AVR_DIR)/bgl_protocol.h
FW_SOURCES := $(wildcard $(AVR_DIR)/*.c)
FW_HEADERS := $(wildcard $(AVR_DIR)/*.h)

SIM_DIR := firmware_bridge/sim
SIM_BUILD ?= $(SIM_DIR)/build
HARNESS := $(SIM_BUILD)/harness
# Debian's simavr.pc requires libelf.pc, which only libelf-dev ships; the headers are all we need.
SIMAVR_CFLAGS := $(shell pkg-config --cflags simavr simavrparts 2>/dev/null \
	|| echo -I/usr/include/simavr -I/usr/include/simavr/parts)
SIMAVR_LIBS := -lsimavrparts -lsimavr -lpthread -lutil
CFLAGS ?= -O2
HARNESS_CFLAGS := $(CFLAGS) -std=gnu11 -Wall -Wextra $(SIMAVR_CFLAGS)

PORT ?= /dev/ttyUSB0
UPLOAD_BAUD ?= 115200
AVRDUDE ?= avrdude

.PHONY: firmware firmware-elf header harness flash

# The header first, in a make of its own, so the compile sees the regenerated file.
firmware: header
	@$(MAKE) --no-print-directory $(FW_HEX)
	$(AVR_SIZE) $(FW_ELF)

# Rewritten only when its content changes, so an unchanged protocol rebuilds nothing.
header:
	$(PYTHON) -m firmware_bridge.protocol --header > $(FW_HEADER).tmp
	@if cmp -s $(FW_HEADER).tmp $(FW_HEADER); then rm -f $(FW_HEADER).tmp; \
	else mv $(FW_HEADER).tmp $(FW_HEADER); echo "updated $(FW_HEADER)"; fi

# The ELF from the committed header, without Python (the tests build this into a temp dir).
firmware-elf: $(FW_ELF)

harness: $(HARNESS)

flash: firmware
	$(AVRDUDE) -c arduino -p m328p -P $(PORT) -b $(UPLOAD_BAUD) -U flash:w:$(FW_HEX):i

$(FW_ELF): $(FW_SOURCES) $(FW_HEADERS) | $(FW_BUILD)
	$(AVR_CC) $(AVR_CFLAGS) $(AVR_LDFLAGS) -o $@ $(FW_SOURCES)

$(FW_HEX): $(FW_ELF)
	$(AVR_OBJCOPY) -O ihex -j .text -j .data $< $@

$(HARNESS): $(SIM_DIR)/harness.c | $(SIM_BUILD)
	$(CC) $(HARNESS_CFLAGS) -o $@ $< $(SIMAVR_LIBS)

$(FW_BUILD) $(SIM_BUILD):
	mkdir -p $@

# bgboard on the Pi's architecture (arm64 Debian 12 under qemu), without a Pi: root, on a Debian
# x86-64 machine. About 70 minutes the first time (the arm64 root, gnubg, the wheels), then about
# 47 (the emulated tests and demo); see scripts/arm64-check.sh.
.PHONY: arm64-check
arm64-check:
	scripts/arm64-check.sh

# The README's commands on a brand-new Debian 12 root (debootstrap, chroot): root, on a Debian
# x86-64 machine. About 2 minutes for the main command (plus the root, once); --tests adds the
# test command. See scripts/fresh-check.sh.
.PHONY: fresh-check
fresh-check:
	scripts/fresh-check.sh --tests
