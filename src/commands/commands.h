/* The registry of commands (registry.c) main.c dispatches from. */
#ifndef TA_COMMANDS_H
#define TA_COMMANDS_H

#include "ta_command.h"

/* The registry (registry.c), ended by NULL. */
extern const struct ta_command *const ta_commands[];
const struct ta_command *ta_command_find(const char *name);
const char *ta_spread_name(enum ta_spread s);
/* -1 (said) when a mode is asked of a command that refuses it. */
int ta_command_compat_check(const char *name, enum ta_mode mode);
/* A mode's flag ("--hta-compat") and whose numbers it gives ("HTA"). */
const char *ta_mode_flag(enum ta_mode m);
const char *ta_mode_whose(enum ta_mode m);

#endif
