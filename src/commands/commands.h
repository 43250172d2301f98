/* The registry of commands (registry.c) main.c dispatches from. */
#ifndef TA_COMMANDS_H
#define TA_COMMANDS_H

#include "ta_command.h"

/* The registry (registry.c), ended by NULL. */
extern const struct ta_command *const ta_commands[];
const struct ta_command *ta_command_find(const char *name);
const char *ta_spread_name(enum ta_spread s);
/* -1 (said) when --hta-compat is given to a command that refuses it. */
int ta_command_compat_check(const char *name, int hta_compat);

#endif
