/* SPDX-License-Identifier: MIT */
#include "link.h"

#include <stdbool.h>
#include <string.h>
#include <util/crc16.h>

#include "bgl_protocol.h"
#include "settings.h"
#include "show.h"
#include "uart.h"

/* The firmware's version is BGL_FW_MAJOR.BGL_FW_MINOR.BGL_FW_PATCH, set in firmware_bridge/protocol.py. */
#define FW_MAJOR BGL_FW_MAJOR
#define FW_MINOR BGL_FW_MINOR
#define FW_PATCH BGL_FW_PATCH
#define CAPABILITIES (BGL_CAP_RGB | BGL_CAP_ANIMATION | BGL_CAP_BLANK | BGL_CAP_SELF_TEST | BGL_CAP_PALETTE)

#define HEADER 3 /* version, type, seq */
#define CRC_SIZE 2
#define MIN_BODY (HEADER + CRC_SIZE)
#define TYPE_UNKNOWN 0xFF
/* The longest reply body: HELLO_ACK / BOOT. */
#define MAX_REPLY (HEADER + BGL_HELLO_ACK_SIZE + CRC_SIZE)

/*
 * The frame being received, COBS-decoded byte by byte as it arrives, so no second buffer holds
 * the encoded form.
 */
static uint8_t body[BGL_MAX_BODY];
static uint8_t body_len;
static uint8_t block_left; /* data bytes left in the current COBS block; 0: a code byte is next */
static uint8_t block_code;
static bool in_frame;      /* a code byte (or damage) came since the last delimiter */
static bool damaged;       /* lost bytes or too long: drop the frame at its delimiter */

static uint8_t reset_cause;
static uint16_t boot_id;
static uint32_t uptime_ms;
static uint16_t silence_ms;
static bool link_was_lost;
static uint8_t scene_seq;
static uint8_t bad_frames;

/* The last request acted on, to answer a resend (same type and seq) without acting again. */
static bool have_last;
static uint8_t last_type;
static uint8_t last_seq;

void link_init(uint8_t cause, uint16_t id)
{
    reset_cause = cause;
    boot_id = id;
}

/* ------------------------------------------------------------------------------------------ */
/* Sending                                                                                     */

/* COBS-encode `len` bytes and add the delimiter; returns the encoded length (at most len + 2). */
static uint8_t cobs_encode(const uint8_t *in, uint8_t len, uint8_t *out)
{
    uint8_t code_at = 0;
    uint8_t code = 1;
    uint8_t o = 1;

    for (uint8_t i = 0; i < len; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
            continue;
        }
        out[o++] = in[i];
        if (++code == 0xFF) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        }
    }
    out[code_at] = code;
    out[o++] = 0;
    return o;
}

static void send(uint8_t type, uint8_t seq, const uint8_t *payload, uint8_t len)
{
    uint8_t frame[MAX_REPLY];
    uint8_t wire[MAX_REPLY + 2];
    uint8_t n = HEADER + len;
    uint16_t crc = 0xFFFF;

    frame[0] = BGL_PROTO_MAJOR;
    frame[1] = type;
    frame[2] = seq;
    memcpy(frame + HEADER, payload, len);
    for (uint8_t i = 0; i < n; i++)
        crc = _crc_xmodem_update(crc, frame[i]);
    frame[n++] = (uint8_t)(crc >> 8);
    frame[n++] = (uint8_t)crc;
    uart_write(wire, cobs_encode(frame, n, wire));
}

static void send_hello_ack(uint8_t type, uint8_t seq)
{
    const uint8_t payload[BGL_HELLO_ACK_SIZE] = {
        BGL_PROTO_MAJOR, BGL_PROTO_MINOR, FW_MAJOR, FW_MINOR, FW_PATCH,
        BGL_MAX_LEDS, show_led_count(), CAPABILITIES, BGL_MAX_BODY,
        reset_cause, (uint8_t)(boot_id >> 8), (uint8_t)boot_id,
        show_status_led(), BGL_BRIGHTNESS_CAP,
    };
    send(type, seq, payload, sizeof payload);
}

static void send_ack(uint8_t seq, uint8_t type, uint8_t status)
{
    const uint8_t payload[BGL_ACK_SIZE] = {type, status};
    send(BGL_ACK, seq, payload, sizeof payload);
}

static void send_nak(uint8_t seq, uint8_t reason, uint8_t type)
{
    const uint8_t payload[BGL_NAK_SIZE] = {reason, type};
    send(BGL_NAK, seq, payload, sizeof payload);
}

static void send_pong(uint8_t seq)
{
    uint8_t flags = 0;

    if (show_is_safe())
        flags |= BGL_FLAG_SAFE;
    if (link_was_lost)
        flags |= BGL_FLAG_LINK_WAS_LOST;
    if (reset_cause & BGL_RESET_WATCHDOG)
        flags |= BGL_FLAG_WATCHDOG_RESET;
    const uint8_t payload[BGL_PONG_SIZE] = {
        (uint8_t)(uptime_ms >> 24), (uint8_t)(uptime_ms >> 16),
        (uint8_t)(uptime_ms >> 8), (uint8_t)uptime_ms,
        flags, scene_seq, bad_frames,
    };
    send(BGL_PONG, seq, payload, sizeof payload);
}

void link_send_boot(void)
{
    send_hello_ack(BGL_BOOT, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Requests                                                                                    */

static uint16_t u16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static void on_hello(uint8_t seq, const uint8_t *p, uint8_t len)
{
    if (len != BGL_HELLO_SIZE) {
        send_nak(seq, BGL_NAK_BAD_LENGTH, BGL_HELLO);
        return;
    }
    uint8_t major = p[0], count = p[2], status = p[3];
    if (major != BGL_PROTO_MAJOR) {
        send_nak(seq, BGL_NAK_BAD_VERSION, BGL_HELLO);
    } else if (count == 0 || count > BGL_MAX_LEDS) {
        send_nak(seq, BGL_NAK_BAD_LED_COUNT, BGL_HELLO);
    } else if (status >= count) {
        send_nak(seq, BGL_NAK_BAD_VALUE, BGL_HELLO);
    } else {
        settings_save(count, status);
        show_configure(count, status);
        /* A new session: its sequence numbers must never be taken for resends of the last one. */
        have_last = false;
        link_was_lost = false;
        send_hello_ack(BGL_HELLO_ACK, seq);
    }
}

/* Why a request of a known type would be refused (a NAK reason), or 0 when it is acceptable. */
static uint8_t refusal(uint8_t type, const uint8_t *p, uint8_t len)
{
    switch (type) {
    case BGL_SET_SCENE:
        if (len < 1)
            return BGL_NAK_BAD_LENGTH;
        if (len - 1u != show_led_count())
            return BGL_NAK_BAD_LED_COUNT;
        for (uint8_t i = 1; i < len; i++) {
            if ((p[i] & 0x0F) > BGL_PATTERN_SLOW_PULSE)
                return BGL_NAK_BAD_VALUE;
        }
        return 0;
    case BGL_SET_PALETTE:
        if (len < 4 || (len - 1u) % 3u != 0)
            return BGL_NAK_BAD_LENGTH;
        if (p[0] < 1 || p[0] + (len - 1u) / 3u > BGL_PALETTE_SIZE)
            return BGL_NAK_BAD_VALUE;
        return 0;
    case BGL_PING:
        return len == 0 ? 0 : BGL_NAK_BAD_LENGTH;
    default: /* BLANK, SELF_TEST */
        return len == 2 ? 0 : BGL_NAK_BAD_LENGTH;
    }
}

static void apply(uint8_t type, uint8_t seq, const uint8_t *p, uint8_t len)
{
    switch (type) {
    case BGL_SET_SCENE:
        show_set_scene(p[0], p + 1);
        scene_seq = seq;
        break;
    case BGL_SET_PALETTE:
        show_set_palette(p[0], (uint8_t)((len - 1u) / 3u), p + 1);
        break;
    case BGL_BLANK:
        show_blank(u16(p));
        break;
    case BGL_SELF_TEST:
        show_self_test(u16(p));
        break;
    default:
        break;
    }
}

static void on_frame(uint8_t type, uint8_t seq, const uint8_t *p, uint8_t len)
{
    if (type == BGL_HELLO) {
        on_hello(seq, p, len);
        return;
    }
    if (type != BGL_SET_SCENE && type != BGL_SET_PALETTE && type != BGL_PING && type != BGL_BLANK &&
        type != BGL_SELF_TEST) {
        send_nak(seq, BGL_NAK_UNKNOWN_TYPE, type);
        return;
    }
    uint8_t reason = refusal(type, p, len);
    if (reason) {
        send_nak(seq, reason, type);
        return;
    }
    bool duplicate = have_last && last_type == type && last_seq == seq;
    /*
     * PING is remembered too, though it changes nothing: then the memory is always the request
     * just before, and a BLANK or SELF_TEST 256 sequence numbers after an identical one (all
     * PINGs in between) is not mistaken for its resend.
     */
    have_last = true;
    last_type = type;
    last_seq = seq;
    if (type == BGL_PING) {
        send_pong(seq);
        return;
    }
    if (!duplicate)
        apply(type, seq, p, len);
    send_ack(seq, type, duplicate ? BGL_ACK_DUPLICATE : BGL_ACK_APPLIED);
}

/* ------------------------------------------------------------------------------------------ */
/* Receiving                                                                                   */

static void count_bad_frame(void)
{
    if (bad_frames < 0xFF)
        bad_frames++;
}

static void check_frame(void)
{
    uint8_t n = body_len - CRC_SIZE;
    uint16_t crc = 0xFFFF;

    for (uint8_t i = 0; i < n; i++)
        crc = _crc_xmodem_update(crc, body[i]);
    if (crc != u16(body + n)) {
        /* Nothing in a corrupt frame can be trusted, its seq and type included. */
        count_bad_frame();
        send_nak(BGL_SEQ_UNKNOWN, BGL_NAK_BAD_CRC, TYPE_UNKNOWN);
        return;
    }
    if (body[0] != BGL_PROTO_MAJOR) {
        count_bad_frame();
        send_nak(body[2], BGL_NAK_BAD_VERSION, body[1]);
        return;
    }
    /* An intact frame proves the host alive, whether or not its request is acceptable. */
    silence_ms = 0;
    on_frame(body[1], body[2], body + HEADER, (uint8_t)(n - HEADER));
}

static void append(uint8_t byte)
{
    if (body_len < sizeof body)
        body[body_len++] = byte;
    else
        damaged = true;
}

static void end_of_frame(void)
{
    /* A lone delimiter (the host's "end any half frame") is no frame, and no bad one either. */
    if (in_frame) {
        if (damaged || block_left != 0 || body_len < MIN_BODY)
            count_bad_frame();
        else
            check_frame();
    }
    body_len = 0;
    block_left = 0;
    in_frame = false;
    damaged = false;
}

static void feed(uint8_t byte)
{
    if (byte == 0) {
        end_of_frame();
        return;
    }
    if (damaged)
        return; /* wait for the delimiter: that is where the next frame starts */
    if (block_left == 0) {
        /* A code byte: the block before it ended with an implied zero, unless it was a full one. */
        if (in_frame && block_code != 0xFF)
            append(0);
        in_frame = true;
        block_code = byte;
        block_left = (uint8_t)(byte - 1u);
    } else {
        append(byte);
        block_left--;
    }
}

void link_poll(void)
{
    if (uart_take_rx_damage()) {
        in_frame = true;
        damaged = true;
    }
    for (int16_t c; (c = uart_getc()) >= 0;)
        feed((uint8_t)c);
}

void link_tick(void)
{
    uptime_ms++;
    if (silence_ms < BGL_LINK_TIMEOUT_MS && ++silence_ms == BGL_LINK_TIMEOUT_MS && !show_is_safe()) {
        show_enter_safe();
        link_was_lost = true;
    }
}
