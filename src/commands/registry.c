/* The registry: every command, in the order --help lists them. Each is
 * declared where it lives (struct ta_command, ta_command.h): a command
 * with options and presentation of its own in src/commands/cmd_*.c, an
 * analysis that is its own command in its analysis file. main.c
 * dispatches from here, the shard runner takes its rule from here, and
 * --list-commands prints it for the completion and the tests. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

/* In the order --help lists them. */
#define TA_COMMANDS(X) \
	X(report) \
	X(temporal) \
	X(idle) \
	X(kernels) \
	X(overlap) \
	X(launch) \
	X(queue) \
	X(membw) \
	X(annotations) \
	X(ops) \
	X(modules) \
	X(diagnose) \
	X(stragglers) \
	X(comms) \
	X(critical) \
	X(diff) \
	X(counters) \
	X(roofline) \
	X(overview) \
	X(steps) \
	X(memory) \
	X(ingest) \
	X(cache) \
	X(schema)

#define DECLARE(id) extern const struct ta_command ta_command_##id;
TA_COMMANDS(DECLARE)

#define ENTRY(id) &ta_command_##id,
const struct ta_command *const ta_commands[] = { TA_COMMANDS(ENTRY) NULL };

const struct ta_command *ta_command_find(const char *name)
{
	size_t i;

	for (i = 0; name && ta_commands[i]; i++)
		if (strcmp(ta_commands[i]->name, name) == 0)
			return ta_commands[i];
	return NULL;
}

/* Each mode's flag and whose numbers it gives, for messages. */
static const struct {
	const char *flag, *whose, *see;
} modes[TA_NMODES] = {
	[TA_MODE_OWN] = { "the default", "ours", "" },
	[TA_MODE_HTA] = { "--hta-compat", "HTA", " (see DIFFERENCES FROM HTA in traceanalyze(1))" },
	[TA_MODE_TB] = { "--tb-compat", "TensorBoard plugin",
			 " (see DIFFERENCES FROM THE TENSORBOARD PLUGIN in traceanalyze(1))" },
};

const char *ta_mode_flag(enum ta_mode m)
{
	return modes[m].flag;
}

const char *ta_mode_whose(enum ta_mode m)
{
	return modes[m].whose;
}

int ta_command_compat_check(const char *name, enum ta_mode mode)
{
	const struct ta_command *c = ta_command_find(name);

	if (mode == TA_MODE_OWN || !c || c->compat[mode] != TA_COMPAT_REFUSED)
		return 0;
	/* the plugin's views are built one by one (#39): say which exist */
	if (mode == TA_MODE_TB) {
		struct ta_buf have = { 0 };
		size_t i, n = 0;

		for (i = 0; ta_commands[i]; i++)
			if (ta_commands[i]->compat[mode] == TA_COMPAT_OWN)
				ta_buf_addf(&have, "%s%s", n++ ? ", " : "", ta_commands[i]->name);
		fprintf(stderr, "traceanalyze: %s has no %s view under %s (%s %s)%s\n",
			name, modes[mode].whose, modes[mode].flag, have.s ? have.s : "none",
			n == 1 ? "has one" : "have one", modes[mode].see);
		ta_buf_free(&have);
	} else
		fprintf(stderr, "traceanalyze: %s has no %s counterpart: %s does not apply%s\n",
			name, modes[mode].whose, modes[mode].flag, modes[mode].see);
	return -1;
}

const char *ta_spread_name(enum ta_spread s)
{
	static const char *const names[] = { "none", "merged", "per-rank", "peers",
		"joined", "by-options" };

	return names[s];
}
