/* SPDX-License-Identifier: MIT */
#include "uart.h"

#include <avr/interrupt.h>
#include <avr/io.h>
#include <util/atomic.h>

#include "bgl_protocol.h"

/*
 * Double speed (U2X): at 16 MHz, 115200 baud is then 117647 (+2.1 %), within what a USB serial
 * bridge accepts; normal speed would be -3.5 %, too far off.
 */
#define UBRR_VALUE ((F_CPU + 4UL * BGL_BAUDRATE) / (8UL * BGL_BAUDRATE) - 1UL)

/*
 * Powers of two, so the indices wrap with a mask. 128 received bytes cover a refresh of the
 * longest chain (about 3 ms, 35 bytes at 115200) with room to spare; replies are at most 21 bytes.
 */
#define RX_SIZE 128u
#define TX_SIZE 64u

static volatile uint8_t rx_buf[RX_SIZE];
static volatile uint8_t rx_head; /* written by the interrupt only */
static volatile uint8_t rx_tail; /* written by the main loop only */
static volatile bool rx_damaged;

static volatile uint8_t tx_buf[TX_SIZE];
static volatile uint8_t tx_head; /* written by the main loop only */
static volatile uint8_t tx_tail; /* written by the interrupt only */

void uart_init(void)
{
    UBRR0 = UBRR_VALUE;
    UCSR0A = _BV(U2X0);
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0);
}

ISR(USART_RX_vect)
{
    /*
     * Take every byte the receiver holds (it buffers two), so a delayed interrupt catches up.
     * The status must be read before UDR0: its error bits describe the byte in UDR0.
     */
    for (;;) {
        uint8_t status = UCSR0A;
        if (!(status & _BV(RXC0)))
            break;
        uint8_t byte = UDR0;
        if (status & (_BV(FE0) | _BV(DOR0)))
            rx_damaged = true;
        uint8_t next = (uint8_t)((rx_head + 1u) & (RX_SIZE - 1u));
        if (next == rx_tail) {
            rx_damaged = true;
            continue;
        }
        rx_buf[rx_head] = byte;
        rx_head = next;
    }
}

int16_t uart_getc(void)
{
    uint8_t tail = rx_tail;

    if (tail == rx_head)
        return -1;
    uint8_t byte = rx_buf[tail];
    rx_tail = (uint8_t)((tail + 1u) & (RX_SIZE - 1u));
    return byte;
}

bool uart_rx_pending(void)
{
    return rx_tail != rx_head;
}

bool uart_take_rx_damage(void)
{
    bool damaged;

    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        damaged = rx_damaged;
        rx_damaged = false;
    }
    return damaged;
}

ISR(USART_UDRE_vect)
{
    uint8_t tail = tx_tail;

    if (tail == tx_head) {
        /* Nothing left: stop this interrupt, which would otherwise fire for ever. */
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
        return;
    }
    UDR0 = tx_buf[tail];
    tx_tail = (uint8_t)((tail + 1u) & (TX_SIZE - 1u));
}

void uart_write(const uint8_t *data, uint8_t len)
{
    while (len--) {
        uint8_t next = (uint8_t)((tx_head + 1u) & (TX_SIZE - 1u));
        while (next == tx_tail) {
            /* Full: the data-register-empty interrupt makes room within one byte time. */
        }
        tx_buf[tx_head] = *data++;
        tx_head = next;
        ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
            UCSR0B |= _BV(UDRIE0);
        }
    }
}
