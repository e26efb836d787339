/* SPDX-License-Identifier: MIT */
/*
 * bgboard LED controller: an ATmega328P at 16 MHz (Arduino Nano / Uno class) between the host's
 * USB serial link (PROTOCOL.md) and a WS2812B chain on PD6.
 *
 * Everything happens in the main loop; the interrupts only move bytes (UART) and count
 * milliseconds (timer 0). The loop sleeps in idle mode whenever it has nothing to do, which
 * also keeps an emulator running this firmware close to real time.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include <util/atomic.h>

#include "link.h"
#include "settings.h"
#include "show.h"
#include "uart.h"
#include "ws2812.h"

/* Timer 0 in CTC mode, clock / 64, 250 counts: one compare match per millisecond. */
#define TICK_PRESCALER 64UL
#define TICK_TOP (F_CPU / TICK_PRESCALER / 1000UL - 1UL)

/* MCUSR as found at start. In .noinit: the start-up code zeroes .bss after .init3 has run. */
static uint8_t reset_flags __attribute__((section(".noinit")));

static volatile uint8_t ticks;

/*
 * Runs before the C start-up code. MCUSR must be cleared early, or a watchdog reset keeps the
 * watchdog enabled (WDRF forces WDE) at its shortest period and the device resets in a loop.
 * Optiboot (Uno, newer Nanos) clears MCUSR itself and hands its value over in r2; r2 is used
 * only when MCUSR reads 0 and r2 looks like reset flags (the upper four bits are always 0).
 */
void early_reset_cause(void) __attribute__((naked, used, section(".init3")));
void early_reset_cause(void)
{
    uint8_t handed_over;

    __asm__ volatile("mov %0, r2" : "=r"(handed_over));
    uint8_t flags = MCUSR;
    if (flags == 0 && (handed_over & 0xF0) == 0)
        flags = handed_over;
    reset_flags = flags;
    MCUSR = 0;
    wdt_disable();
}

ISR(TIMER0_COMPA_vect)
{
    ticks++;
}

static void tick_init(void)
{
    TCCR0A = _BV(WGM01);
    OCR0A = TICK_TOP;
    TCCR0B = _BV(CS01) | _BV(CS00);
    TIMSK0 = _BV(OCIE0A);
}

static uint8_t take_ticks(void)
{
    uint8_t n;

    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
        n = ticks;
        ticks = 0;
    }
    return n;
}

/* Sleep until the next interrupt unless work is waiting; no wake-up can slip in between. */
static void idle(void)
{
    cli();
    if (ticks == 0 && !uart_rx_pending()) {
        sleep_enable();
        sei(); /* takes effect after the next instruction, so sleep_cpu is reached first */
        sleep_cpu();
        sleep_disable();
    }
    sei();
}

int main(void)
{
    uint8_t led_count, status_led;

    settings_load(&led_count, &status_led);
    uint16_t boot_id = settings_count_boot();

    ws2812_init();
    uart_init();
    tick_init();
    show_init(led_count, status_led);
    link_init(reset_flags & 0x0F, boot_id);
    set_sleep_mode(SLEEP_MODE_IDLE);
    /* 250 ms: the loop comes round at least every millisecond, even a full refresh takes 3 ms. */
    wdt_enable(WDTO_250MS);
    sei();

    link_send_boot();
    for (;;) {
        wdt_reset();
        /* Time first: after a long refresh a PONG must not report an uptime a few ms stale. */
        for (uint8_t n = take_ticks(); n; n--) {
            link_tick();
            show_tick();
        }
        link_poll();
        show_update();
        idle();
    }
}
