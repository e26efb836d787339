/* SPDX-License-Identifier: MIT */
#include "ws2812.h"

#include <avr/io.h>
#include <util/delay.h>

#if F_CPU != 16000000UL
#error "the WS2812 bit timing below is counted in cycles of a 16 MHz clock"
#endif

/*
 * The chain takes a low line longer than this as "show what you have": 280 us for the WS2812B
 * since its V5 (older parts and the SK6812 need 50-80 us).
 */
#define LATCH_US 300

void ws2812_init(void)
{
    PORTD &= (uint8_t)~_BV(PD6);
    DDRD |= _BV(PD6);
}

/*
 * One bit is 20 cycles (1.25 us, 800 kHz). The line goes high at cycle 0; a 0 bit drops it at
 * cycle 6 (375 ns high, spec 250-550 ns), a 1 bit at cycle 13 (812 ns, spec 650-950 ns).
 * `sbrs` takes 2 cycles when it skips the early `out`, 1 when it does not, so both paths stay in
 * step. Between bytes the low time grows by 4 cycles, which the LEDs tolerate (the latch needs
 * tens of microseconds). Must be called with interrupts off: an interrupt inside a bit would
 * stretch a 0 into a 1.
 */
static void send_bytes(const uint8_t *data, uint8_t count, uint8_t hi, uint8_t lo)
{
    uint8_t byte, bits;

    __asm__ volatile(
        "1:                          \n\t"
        "ld   %[byte], %a[ptr]+      \n\t" /* 2 */
        "ldi  %[bits], 8             \n\t" /* 1 */
        "2:                          \n\t"
        "out  %[port], %[hi]         \n\t" /* [0]  rising edge */
        "nop                         \n\t" /* [1] */
        "nop                         \n\t" /* [2] */
        "nop                         \n\t" /* [3] */
        "nop                         \n\t" /* [4] */
        "sbrs %[byte], 7             \n\t" /* [5]  skip (2 cycles) for a 1 bit */
        "out  %[port], %[lo]         \n\t" /* [6]  a 0 bit falls here */
        "nop                         \n\t" /* [7] */
        "nop                         \n\t" /* [8] */
        "nop                         \n\t" /* [9] */
        "nop                         \n\t" /* [10] */
        "nop                         \n\t" /* [11] */
        "nop                         \n\t" /* [12] */
        "out  %[port], %[lo]         \n\t" /* [13] a 1 bit falls here */
        "lsl  %[byte]                \n\t" /* [14] */
        "dec  %[bits]                \n\t" /* [15] */
        "breq 3f                     \n\t" /* [16] */
        "nop                         \n\t" /* [17] */
        "rjmp 2b                     \n\t" /* [18-19] */
        "3:                          \n\t"
        "dec  %[count]               \n\t" /* [18] */
        "brne 1b                     \n\t" /* [19-20], then 3 more to load the next byte */
        : [ptr] "+e"(data), [byte] "=&r"(byte), [bits] "=&d"(bits), [count] "+r"(count)
        : [port] "I"(_SFR_IO_ADDR(PORTD)), [hi] "r"(hi), [lo] "r"(lo)
        : "memory");
}

void ws2812_show(const uint8_t *grb, uint8_t leds)
{
    /* Whole-port writes are 1 cycle; PD6 is the only pin of port D this firmware drives. */
    uint8_t hi = PORTD | _BV(PD6);
    uint8_t lo = PORTD & (uint8_t)~_BV(PD6);

    while (leds--) {
        uint8_t sreg = SREG;
        __asm__ volatile("cli" ::: "memory");
        send_bytes(grb, 3, hi, lo);
        SREG = sreg; /* let the UART and tick interrupts in between LEDs: a few us of low line */
        grb += 3;
    }
    /* Blocking, but short; the receive interrupt keeps running meanwhile. */
    _delay_us(LATCH_US);
}
