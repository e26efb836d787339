/* SPDX-License-Identifier: MIT */
/*
 * The device's end of the LED link (PROTOCOL.md): COBS frames off the UART, checks, the
 * messages, replies, duplicate detection and the link watchdog.
 */
#ifndef LINK_H
#define LINK_H

#include <stdint.h>

/* `reset_cause` is MCUSR as found at start; `boot_id` this boot's number. */
void link_init(uint8_t reset_cause, uint16_t boot_id);

/* Announce this boot: BOOT, seq 0, unasked. */
void link_send_boot(void);

/* Take every byte received so far and act on the frames they complete. */
void link_poll(void);

/* One millisecond has passed: the uptime and the silence since the last valid frame grow. */
void link_tick(void);

#endif
