/* SPDX-License-Identifier: MIT */
/*
 * What the device keeps in its EEPROM across power cuts: the chain length and the status LED
 * (so the safe state lights the right LED before any host has spoken) and a boot counter.
 */
#ifndef SETTINGS_H
#define SETTINGS_H

#include <stdint.h>

/* Used when the EEPROM holds no valid chain length (a new chip reads 0xFF everywhere). */
#define SETTINGS_DEFAULT_LED_COUNT 64
#define SETTINGS_DEFAULT_STATUS_LED 0

/* The stored led_count and status_led, replaced by the defaults when out of range. */
void settings_load(uint8_t *led_count, uint8_t *status_led);

/* Store what a HELLO set; bytes already holding the value are not rewritten (EEPROM wear). */
void settings_save(uint8_t led_count, uint8_t status_led);

/* Count this boot and return its number: 0 on a blank EEPROM, then 1, 2, ... (wrapping). */
uint16_t settings_count_boot(void);

#endif
