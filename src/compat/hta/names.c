/* Where a column of ours was renamed since HTA's numbers were matched,
 * --hta-compat keeps the name its output had: a script written against
 * compat mode (and ../shared/tools/conform.py, the output contract) reads
 * the same CSV. HTA's own headers ("idle_time(us)") are not used: the
 * contract maps them to ours, and the man page lists the mapping. */
#include "ta_table.h"
#include "ta_model.h"

#include <string.h>

static const struct {
	const char *command, *names;   /* names: "ours=compat ..." */
} hta_names[] = {
	/* the window's length, which HTA calls kernel_time */
	{ "temporal", "window_us=kernel_us" },
};

const char *ta_compat_names(enum ta_mode mode, const char *command)
{
	size_t i;

	if (mode != TA_MODE_HTA || !command)
		return NULL;
	for (i = 0; i < sizeof(hta_names) / sizeof(hta_names[0]); i++)
		if (strcmp(hta_names[i].command, command) == 0)
			return hta_names[i].names;
	return NULL;
}
