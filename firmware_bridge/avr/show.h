/* SPDX-License-Identifier: MIT */
/*
 * What the LEDs show: the host's scene and palette, the device-side animation, BLANK, SELF_TEST
 * and the safe state, rendered into the chain only when the result changes.
 *
 * What shows, most important first:
 *   1. BLANK: everything dark, until its time is up;
 *   2. SELF_TEST: one LED at a time in TEST_COLOUR, at BRIGHTNESS_CAP;
 *   3. the safe state: everything dark but status_led, slow-pulsing SAFE_COLOUR at BRIGHTNESS_CAP;
 *   4. the scene.
 * BLANK and SELF_TEST show "what it showed" afterwards by not touching the layers below them.
 */
#ifndef SHOW_H
#define SHOW_H

#include <stdbool.h>
#include <stdint.h>

/* Start in the safe state with this chain; the first refresh clears every LED a chain can have. */
void show_init(uint8_t led_count, uint8_t status_led);

/* HELLO: a new chain length and status LED, an empty (dark) scene, no BLANK or SELF_TEST left. */
void show_configure(uint8_t led_count, uint8_t status_led);

/* SET_SCENE: `leds` holds one `colour << 4 | pattern` byte per LED, led_count of them. */
void show_set_scene(uint8_t brightness, const uint8_t *leds);

/* SET_PALETTE: colours first .. first + n - 1 from n R, G, B triples (the caller checks ranges). */
void show_set_palette(uint8_t first, uint8_t n, const uint8_t *rgb);

/* BLANK for `ms` milliseconds from now (0 ends a BLANK early). */
void show_blank(uint16_t ms);

/* SELF_TEST: walk the chain, `step_ms` per LED (0 ends a walk early). */
void show_self_test(uint16_t step_ms);

/* The link watchdog fired: drop the scene and show the safe state. */
void show_enter_safe(void);

bool show_is_safe(void);
uint8_t show_led_count(void);
uint8_t show_status_led(void);

/* One millisecond has passed: advance the animation and the timed modes. */
void show_tick(void);

/* Refresh the chain if what it should show has changed. Called from the main loop. */
void show_update(void);

#endif
