/* SPDX-License-Identifier: MIT */
/*
 * WS2812B / SK6812 output on PD6 (Arduino pin D6): 800 kHz, bytes in wire order (G, R, B per LED).
 */
#ifndef WS2812_H
#define WS2812_H

#include <stdint.h>

void ws2812_init(void);

/*
 * Send `leds` LEDs (3 bytes each) and wait for the chain to latch them. Interrupts are held off
 * for one LED at a time (30 us), never longer, so UART bytes keep being received.
 */
void ws2812_show(const uint8_t *grb, uint8_t leds);

#endif
