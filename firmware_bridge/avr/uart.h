/* SPDX-License-Identifier: MIT */
/*
 * UART0 at 115200 8N1, both directions interrupt-driven through ring buffers, so that neither
 * a LED refresh nor an EEPROM write loses a received byte or stalls on a sent one.
 */
#ifndef UART_H
#define UART_H

#include <stdbool.h>
#include <stdint.h>

void uart_init(void);

/* The next received byte, or -1 when none is waiting. */
int16_t uart_getc(void);

/* True when received bytes are waiting (the main loop must not go to sleep). */
bool uart_rx_pending(void);

/*
 * True once after bytes were lost (ring overflow, overrun or framing error) since the last call:
 * the frame being received is then damaged and must be dropped.
 */
bool uart_take_rx_damage(void);

/* Queue bytes for sending; waits while the transmit ring is full. Interrupts must be enabled. */
void uart_write(const uint8_t *data, uint8_t len);

#endif
