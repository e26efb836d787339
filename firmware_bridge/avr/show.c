/* SPDX-License-Identifier: MIT */
#include "show.h"

#include <avr/pgmspace.h>
#include <string.h>

#include "bgl_protocol.h"
#include "ws2812.h"

#define PATTERNS (BGL_PATTERN_SLOW_PULSE + 1)
#define BIT(pattern) (1u << (pattern))
#define PULSES (BIT(BGL_PATTERN_PULSE) | BIT(BGL_PATTERN_SLOW_PULSE))

/*
 * Pulses are redrawn every 20 ms (50 per second: smooth to the eye, 3 ms of a 20 ms frame for
 * the longest chain). Blinks are redrawn exactly at their edges instead.
 */
#define ANIM_FRAME_MS 20

/* A pattern's level (0-255) multiplies a channel by (level + 1) / 256: 255 leaves it as it is. */
#define FULL 255u

static const uint8_t default_palette[BGL_PALETTE_SIZE][3] PROGMEM = BGL_DEFAULT_PALETTE_INIT;

/* Index 0 (steady) has no clock; the others count milliseconds modulo their period. */
static const uint16_t period_ms[PATTERNS] = {
    1, BGL_BLINK_MS, BGL_FAST_BLINK_MS, BGL_PULSE_MS, BGL_SLOW_PULSE_MS,
};
static uint16_t phase_ms[PATTERNS];
static uint8_t frame_left_ms = ANIM_FRAME_MS;

static uint8_t led_count;
static uint8_t status_led;
static uint8_t palette[BGL_PALETTE_SIZE][3]; /* R, G, B */
static uint8_t scene[BGL_MAX_LEDS];
static uint8_t brightness;
static bool safe;
static uint16_t blank_left_ms;
static uint16_t test_step_ms; /* 0: no walk */
static uint16_t test_left_ms;
static uint8_t test_led;

/* What the chain was last sent, in wire order; compared against to skip needless refreshes. */
static uint8_t grb[BGL_MAX_LEDS * 3];
/* Bit p set: pattern p (not steady) is on a lit LED, so the picture changes with time. */
static uint8_t animated;
static bool dirty;
/* The next refresh covers at least this many LEDs, darkening those beyond led_count. */
static uint8_t refresh_at_least;

void show_init(uint8_t count, uint8_t status)
{
    memcpy_P(palette, default_palette, sizeof palette);
    led_count = count;
    status_led = status;
    safe = true;
    /*
     * After a watchdog or reset-pin restart the LEDs still show the old scene, perhaps on more
     * LEDs than led_count: the first refresh covers the longest chain, whatever it compares to.
     */
    refresh_at_least = BGL_MAX_LEDS;
    dirty = true;
}

void show_configure(uint8_t count, uint8_t status)
{
    if (led_count > refresh_at_least)
        refresh_at_least = led_count; /* darken LEDs the shorter chain no longer covers */
    led_count = count;
    status_led = status;
    memset(scene, 0, sizeof scene);
    brightness = 0;
    blank_left_ms = 0;
    test_step_ms = 0;
    dirty = true;
}

void show_set_scene(uint8_t level, const uint8_t *leds)
{
    memcpy(scene, leds, led_count);
    brightness = level;
    safe = false;
    dirty = true;
}

void show_set_palette(uint8_t first, uint8_t n, const uint8_t *rgb)
{
    memcpy(palette[first], rgb, 3u * n);
    dirty = true;
}

void show_blank(uint16_t ms)
{
    blank_left_ms = ms;
    dirty = true;
}

void show_self_test(uint16_t step_ms)
{
    test_step_ms = step_ms;
    test_left_ms = step_ms;
    test_led = 0;
    dirty = true;
}

void show_enter_safe(void)
{
    /* Drop the scene for good: no stale "illegal" or "your turn" light may come back. */
    memset(scene, 0, sizeof scene);
    safe = true;
    dirty = true;
}

bool show_is_safe(void)
{
    return safe;
}

uint8_t show_led_count(void)
{
    return led_count;
}

uint8_t show_status_led(void)
{
    return status_led;
}

static bool at_blink_edge(uint8_t pattern)
{
    uint16_t phase = phase_ms[pattern];

    return (animated & BIT(pattern)) && (phase == 0 || phase == period_ms[pattern] / 2);
}

void show_tick(void)
{
    for (uint8_t p = 1; p < PATTERNS; p++) {
        if (++phase_ms[p] >= period_ms[p])
            phase_ms[p] = 0;
    }
    if (at_blink_edge(BGL_PATTERN_BLINK) || at_blink_edge(BGL_PATTERN_FAST_BLINK))
        dirty = true;
    if (--frame_left_ms == 0) {
        frame_left_ms = ANIM_FRAME_MS;
        if (animated & PULSES)
            dirty = true;
    }
    if (blank_left_ms && --blank_left_ms == 0)
        dirty = true;
    if (test_step_ms && --test_left_ms == 0) {
        if (++test_led >= led_count)
            test_step_ms = 0;
        else
            test_left_ms = test_step_ms;
        dirty = true;
    }
}

/* Dark at the start of the period, full at its middle, dark again at its end; linear between. */
static uint8_t triangle(uint16_t phase, uint16_t period)
{
    uint16_t half = period / 2;
    uint16_t rise = phase < half ? phase : (uint16_t)(period - phase);

    return (uint8_t)(((uint32_t)rise * FULL) / half);
}

static uint8_t pattern_level(uint8_t pattern)
{
    uint16_t phase = phase_ms[pattern];

    switch (pattern) {
    case BGL_PATTERN_BLINK:
    case BGL_PATTERN_FAST_BLINK:
        return phase < period_ms[pattern] / 2 ? FULL : 0; /* on for the first half */
    case BGL_PATTERN_PULSE:
    case BGL_PATTERN_SLOW_PULSE:
        return triangle(phase, period_ms[pattern]);
    default:
        return FULL;
    }
}

/* Channel c at brightness b: c * (b + 1) >> 8, as PROTOCOL.md fixes it. */
static uint8_t scale(uint8_t c, uint8_t b)
{
    return (uint8_t)(((uint16_t)c * (uint16_t)(b + 1u)) >> 8);
}

/* The `colour << 4 | pattern` LED i shows now, by the order in show.h. */
static uint8_t cell(uint8_t i)
{
    if (i >= led_count || blank_left_ms)
        return 0;
    if (test_step_ms)
        return i == test_led ? (uint8_t)(BGL_TEST_COLOUR << 4 | BGL_PATTERN_STEADY) : 0;
    if (safe)
        return i == status_led ? (uint8_t)(BGL_SAFE_COLOUR << 4 | BGL_PATTERN_SLOW_PULSE) : 0;
    return scene[i];
}

static void render(void)
{
    uint8_t scaled[BGL_PALETTE_SIZE][3];
    uint8_t level[PATTERNS];
    uint8_t n = led_count > refresh_at_least ? led_count : refresh_at_least;
    bool changed = refresh_at_least != 0;
    uint8_t visible = 0;
    uint8_t *out = grb;

    /*
     * The device's own colours (safe state, self-test) come from the default palette at the cap,
     * so a host's SET_PALETTE can never make the safe state look like something else.
     */
    bool own = blank_left_ms || test_step_ms || safe;
    uint8_t b = own || brightness > BGL_BRIGHTNESS_CAP ? BGL_BRIGHTNESS_CAP : brightness;
    if (own)
        memcpy_P(scaled, default_palette, sizeof scaled);
    else
        memcpy(scaled, palette, sizeof scaled);
    for (uint8_t c = 0; c < BGL_PALETTE_SIZE; c++) {
        for (uint8_t k = 0; k < 3; k++)
            scaled[c][k] = scale(scaled[c][k], b);
    }
    for (uint8_t p = 0; p < PATTERNS; p++)
        level[p] = pattern_level(p);

    for (uint8_t i = 0; i < n; i++, out += 3) {
        uint8_t led = cell(i);
        uint8_t colour = led >> 4;
        uint8_t pattern = led & 0x0F; /* SET_SCENE refused anything above the last pattern */
        const uint8_t *rgb = scaled[colour];
        uint8_t lv = level[pattern];
        uint8_t g = scale(rgb[1], lv);
        uint8_t r = scale(rgb[0], lv);
        uint8_t bl = scale(rgb[2], lv);

        if (colour)
            visible |= (uint8_t)BIT(pattern);
        if (out[0] != g || out[1] != r || out[2] != bl) {
            out[0] = g;
            out[1] = r;
            out[2] = bl;
            changed = true;
        }
    }
    animated = visible & (uint8_t)~BIT(BGL_PATTERN_STEADY);
    if (changed) {
        ws2812_show(grb, n);
        refresh_at_least = 0;
    }
}

void show_update(void)
{
    if (dirty) {
        dirty = false;
        render();
    }
}
