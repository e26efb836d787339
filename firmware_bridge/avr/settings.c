/* SPDX-License-Identifier: MIT */
#include "settings.h"

#include <avr/eeprom.h>

#include "bgl_protocol.h"

/*
 * Fixed addresses rather than EEMEM variables: EEMEM would put an .eeprom section of zeros into
 * the ELF, and a programmer or the emulator loading it would make a blank chip look configured.
 */
#define EE_LED_COUNT ((uint8_t *)0)
#define EE_STATUS_LED ((uint8_t *)1)
#define EE_BOOT_ID ((uint16_t *)2)

void settings_load(uint8_t *led_count, uint8_t *status_led)
{
    uint8_t count = eeprom_read_byte(EE_LED_COUNT);
    uint8_t status = eeprom_read_byte(EE_STATUS_LED);

    if (count == 0 || count > BGL_MAX_LEDS)
        count = SETTINGS_DEFAULT_LED_COUNT;
    if (status >= count)
        status = SETTINGS_DEFAULT_STATUS_LED;
    *led_count = count;
    *status_led = status;
}

void settings_save(uint8_t led_count, uint8_t status_led)
{
    eeprom_update_byte(EE_LED_COUNT, led_count);
    eeprom_update_byte(EE_STATUS_LED, status_led);
}

uint16_t settings_count_boot(void)
{
    /* A blank word reads 0xFFFF, so the first boot of a new chip is number 0. */
    uint16_t id = (uint16_t)(eeprom_read_word(EE_BOOT_ID) + 1u);

    eeprom_update_word(EE_BOOT_ID, id);
    return id;
}
