/* SPDX-License-Identifier: MIT */
/*
 * Runs the LED firmware's ELF in simavr, with UART0 on a pseudo-terminal, and reports on stdout:
 *
 *   PTY /dev/pts/N       the port to open (first line, once)
 *   LEDS t_ms hex        the colours the chain latched, decoded from the data pin, in wire order
 *                        (G, R, B per LED), whenever they differ from the last LEDS line
 *   RX t_ms              a 0x00 (end of a frame) went into the device's UART
 *
 * t_ms is simulated time in milliseconds. Simulated time is paced to wall-clock time, so the
 * firmware's timeouts mean what they say to a host talking to the pty.
 *
 * usage: harness [--link PATH] [--wait-open] [--boot-delay MS] firmware.elf
 *
 *   --link PATH       make PATH a symlink to the pty for as long as the harness runs, so a test
 *                     can kill the emulator, start another and reopen the same path (like
 *                     /dev/serial/by-id after a USB replug)
 *   --wait-open       hold the firmware in reset until someone opens the pty, then start it
 *                     after --boot-delay ms (default 50): like a board whose reset line is tied
 *                     to the port opening, so the opener gets the BOOT message
 *
 * Host bytes reach the UART at the line rate; those arriving before the firmware has enabled
 * its receiver are lost, as they would be to a real board's bootloader.
 *
 * SIGTERM or SIGINT ends it cleanly (the link is removed); so does the parent process exiting.
 * The firmware's ELF needs no simavr section: an ATmega328P at 16 MHz is assumed, so the ELF
 * that runs here is the one that is flashed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "avr_ioport.h"
#include "avr_uart.h"
#include "sim_avr.h"
#include "sim_cycle_timers.h"
#include "sim_elf.h"
#include "sim_irq.h"
#include "uart_pty.h"

#define DEFAULT_MMCU "atmega328p"
#define DEFAULT_FREQUENCY 16000000UL

/* The WS2812 data pin: PD6. */
#define DATA_PORT 'D'
#define DATA_PIN 6
/* A high pulse longer than this is a 1 bit (0 bits are about 0.4 us, 1 bits about 0.8 us). */
#define ONE_BIT_NS 600
/* A low line longer than this latches the chain: the frame is complete. */
#define LATCH_US 50
/* Longest chain decoded; longer frames are cut. */
#define MAX_LED_BYTES (1024 * 3)

/* Host-to-device bytes arrive at the line rate: 10 bits (8N1) at 115200 baud. */
#define LINE_BAUD 115200UL
#define LINE_BITS_PER_BYTE 10UL

/* Pacing: checked every PACE_CALLS runs or every simulated millisecond, whichever is first. */
#define PACE_CALLS 1000
/* Behind wall time by more than this (a busy machine), simulated time stops trying to catch up. */
#define MAX_LAG_S 0.05

static avr_t *avr;
static uart_pty_t pty;
static FILE *out;
static volatile sig_atomic_t stop;
static const char *link_path;

/* ------------------------------------------------------------------------------------------ */

static double sim_ms(void)
{
    return (double)avr->cycle * 1000.0 / (double)avr->frequency;
}

/* One report line, flushed at once: a test is waiting for it. */
static void report(const char *format, ...)
{
    va_list args;

    va_start(args, format);
    vfprintf(out, format, args);
    fflush(out);
    va_end(args);
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Point `path` at the pty atomically, so a reopening host never sees a half-made link. */
static int make_link(const char *path, const char *target)
{
    char tmp[PATH_MAX];

    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    unlink(tmp);
    if (symlink(target, tmp) != 0)
        return -1;
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Remove the link unless a newer emulator has already taken the path over. */
static void remove_link(void)
{
    char target[PATH_MAX];
    ssize_t n;

    if (!link_path)
        return;
    n = readlink(link_path, target, sizeof target - 1);
    if (n < 0)
        return;
    target[n] = 0;
    if (strcmp(target, pty.pty.slavename) == 0)
        unlink(link_path);
}

static void finish(int status)
{
    remove_link();
    fflush(out);
    /*
     * _exit, not exit or uart_pty_stop: the pty thread may sit in select() and joining it can
     * hang; nothing here needs atexit handlers.
     */
    _exit(status);
}

/* ------------------------------------------------------------------------------------------ */
/* WS2812 decoding                                                                             */

static uint8_t frame[MAX_LED_BYTES];
static size_t frame_bits;
static uint8_t shown[MAX_LED_BYTES];
static size_t shown_len;
static bool shown_any;
static bool data_high;
static avr_cycle_count_t rose_at;
static avr_cycle_count_t one_bit_cycles;
static avr_cycle_count_t latch_cycles;

static avr_cycle_count_t on_latch(avr_t *a, avr_cycle_count_t when, void *param)
{
    static const char digits[] = "0123456789abcdef";
    static char hex[MAX_LED_BYTES * 2 + 1];
    size_t len = frame_bits / 8;

    (void)a;
    (void)when;
    (void)param;
    if (frame_bits % 8)
        fprintf(stderr, "harness: WS2812 frame of %zu bits is not whole bytes\n", frame_bits);
    if (len && (!shown_any || len != shown_len || memcmp(frame, shown, len) != 0)) {
        for (size_t i = 0; i < len; i++) {
            hex[2 * i] = digits[frame[i] >> 4];
            hex[2 * i + 1] = digits[frame[i] & 0x0F];
        }
        hex[2 * len] = 0;
        report("LEDS %.1f %s\n", sim_ms(), hex);
        memcpy(shown, frame, len);
        shown_len = len;
        shown_any = true;
    }
    frame_bits = 0;
    return 0;
}

static void on_data_pin(avr_irq_t *irq, uint32_t value, void *param)
{
    bool high = value != 0;

    (void)irq;
    (void)param;
    if (high == data_high)
        return;
    data_high = high;
    if (high) {
        rose_at = avr->cycle;
        avr_cycle_timer_cancel(avr, on_latch, NULL);
        return;
    }
    if (frame_bits < MAX_LED_BYTES * 8) {
        size_t byte = frame_bits / 8;
        uint8_t mask = (uint8_t)(0x80u >> (frame_bits % 8));
        if (avr->cycle - rose_at > one_bit_cycles)
            frame[byte] |= mask;
        else
            frame[byte] &= (uint8_t)~mask;
        frame_bits++;
    }
    avr_cycle_timer_cancel(avr, on_latch, NULL);
    avr_cycle_timer_register(avr, latch_cycles, on_latch, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* Host to device                                                                              */

/*
 * uart_pty's thread reads the host's bytes from the pty into its `out` fifo. The harness, not
 * uart_pty, empties that fifo: from the simulation thread (cycle timers and the UART model are
 * not thread-safe) and at the line rate, so every byte reaches the firmware when a real UART
 * would deliver it, and the RX report carries the time the firmware sees the byte. uart_pty's
 * own hand-over is never enabled (its `xon` stays 0), so the fifo has one reader only.
 */
DEFINE_FIFO(uint8_t, uart_pty_fifo);

static bool feeding;
static bool uart_full;
static avr_irq_t *uart_input;
static avr_cycle_count_t byte_cycles;

static void on_uart_xoff(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    uart_full = value != 0;
}

static avr_cycle_count_t feed_uart(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)a;
    (void)param;
    if (uart_full)
        return when + byte_cycles; /* the firmware is not reading: hold the line */
    if (uart_pty_fifo_isempty(&pty.pty.out)) {
        feeding = false;
        return 0;
    }
    uint8_t byte = uart_pty_fifo_read(&pty.pty.out);
    avr_raise_irq(uart_input, byte);
    if (byte == 0)
        report("RX %.1f\n", sim_ms());
    return when + byte_cycles;
}

static void start_feeding(void)
{
    if (feeding || uart_pty_fifo_isempty(&pty.pty.out))
        return;
    feeding = true;
    avr_cycle_timer_register(avr, 1, feed_uart, NULL);
}

static void connect_uart(void)
{
    uint32_t flags = 0;

    /* No console echo of UART output, and no usleep when firmware polls an idle UART. */
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    avr_connect_irq(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                    pty.irq + IRQ_UART_PTY_BYTE_IN);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF),
                            on_uart_xoff, NULL);
    uart_input = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
}

/* ------------------------------------------------------------------------------------------ */
/* Pacing                                                                                      */

static struct timespec wall_start;
static avr_cycle_count_t cycle_start;

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* Sleep while simulated time is ahead of wall time since the start. */
static void pace(void)
{
    double sim = (double)(avr->cycle - cycle_start) / (double)avr->frequency;
    double ahead = sim - seconds_since(&wall_start);

    if (ahead > 0.0002) {
        usleep((useconds_t)(ahead * 1e6));
    } else if (ahead < -MAX_LAG_S) {
        /* Let the missed time go rather than run flat out until simulated time catches up. */
        double shift = -ahead - MAX_LAG_S;
        long ns = wall_start.tv_nsec + (long)((shift - (double)(long)shift) * 1e9);
        wall_start.tv_sec += (time_t)shift + ns / 1000000000L;
        wall_start.tv_nsec = ns % 1000000000L;
    }
}

/* Simavr would usleep for the time the firmware sleeps; pace() does the sleeping instead. */
static void no_sleep(avr_t *a, avr_cycle_count_t how_long)
{
    (void)a;
    (void)how_long;
}

/* ------------------------------------------------------------------------------------------ */

static void wait_for_open(const char *pts, long boot_delay_ms, pid_t parent)
{
    int fd = inotify_init1(IN_CLOEXEC);

    if (fd < 0 || inotify_add_watch(fd, pts, IN_OPEN) < 0) {
        fprintf(stderr, "harness: cannot watch %s: %s\n", pts, strerror(errno));
        finish(1);
    }
    report("PTY %s\n", pts);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (stop || getppid() != parent)
            finish(0);
        if (poll(&p, 1, 100) > 0)
            break;
    }
    close(fd);
    usleep((useconds_t)(boot_delay_ms * 1000));
}

static void usage(void)
{
    fprintf(stderr, "usage: harness [--link PATH] [--wait-open] [--boot-delay MS] firmware.elf\n");
    _exit(2);
}

int main(int argc, char **argv)
{
    const char *elf = NULL;
    bool wait_open = false;
    long boot_delay_ms = 50;
    pid_t parent = getppid();
    elf_firmware_t firmware;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--link") == 0 && i + 1 < argc)
            link_path = argv[++i];
        else if (strcmp(argv[i], "--wait-open") == 0)
            wait_open = true;
        else if (strcmp(argv[i], "--boot-delay") == 0 && i + 1 < argc)
            boot_delay_ms = strtol(argv[++i], NULL, 10);
        else if (argv[i][0] == '-' || elf)
            usage();
        else
            elf = argv[i];
    }
    if (!elf)
        usage();

    /* Reports get their own descriptor; simavr's chatter on stdout goes to stderr instead. */
    out = fdopen(dup(STDOUT_FILENO), "w");
    dup2(STDERR_FILENO, STDOUT_FILENO);
    setvbuf(stdout, NULL, _IOLBF, 0);

    memset(&firmware, 0, sizeof firmware);
    if (elf_read_firmware(elf, &firmware) != 0) {
        fprintf(stderr, "harness: cannot read %s\n", elf);
        return 1;
    }
    if (!firmware.mmcu[0])
        snprintf(firmware.mmcu, sizeof firmware.mmcu, "%s", DEFAULT_MMCU);
    if (!firmware.frequency)
        firmware.frequency = DEFAULT_FREQUENCY;
    avr = avr_make_mcu_by_name(firmware.mmcu);
    if (!avr) {
        fprintf(stderr, "harness: simavr does not know %s\n", firmware.mmcu);
        return 1;
    }
    avr_init(avr);
    avr_load_firmware(avr, &firmware);
    avr->sleep = no_sleep;

    one_bit_cycles = (avr_cycle_count_t)avr->frequency / 1000000u * ONE_BIT_NS / 1000u;
    latch_cycles = (avr_cycle_count_t)avr->frequency / 1000000u * LATCH_US;
    byte_cycles = (avr_cycle_count_t)(avr->frequency * LINE_BITS_PER_BYTE / LINE_BAUD);

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);

    /* The pty thread must not take the signals: they would break its select() loop for good. */
    sigset_t signals, previous;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, &previous);
    uart_pty_init(avr, &pty);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (!pty.pty.s) {
        fprintf(stderr, "harness: no pty\n");
        return 1;
    }
    connect_uart();
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(DATA_PORT), DATA_PIN), on_data_pin,
                            NULL);

    if (link_path && make_link(link_path, pty.pty.slavename) != 0) {
        fprintf(stderr, "harness: cannot link %s: %s\n", link_path, strerror(errno));
        finish(1);
    }
    if (wait_open)
        wait_for_open(pty.pty.slavename, boot_delay_ms, parent);
    else
        report("PTY %s\n", pty.pty.slavename);

    clock_gettime(CLOCK_MONOTONIC, &wall_start);
    cycle_start = avr->cycle;
    avr_cycle_count_t next_check = 0;
    avr_cycle_count_t cycles_per_ms = avr->frequency / 1000u;
    int calls = 0;
    while (!stop) {
        int state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed) {
            fprintf(stderr, "harness: the firmware stopped (state %d) at %.1f ms\n", state, sim_ms());
            finish(1);
        }
        start_feeding();
        if (++calls >= PACE_CALLS || avr->cycle >= next_check) {
            calls = 0;
            next_check = avr->cycle + cycles_per_ms;
            pace();
            if (getppid() != parent)
                break; /* nobody is left to read the reports */
        }
    }
    finish(0);
}
