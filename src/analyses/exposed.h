/* Exposed communication: what computation waited for (exposed.c). */
#ifndef TA_EXPOSED_H
#define TA_EXPOSED_H

#include "intervals.h"

struct ta_exposed {
	int64_t exposed;  /* communication that computation waited for */
	int64_t wait;     /* of it, the collectives' wait for a late peer */
};

/* comm, comp and waits: disjoint groups in ascending order (ta_union) of
 * a rank's communication, computation and peer waits in one window. A
 * stretch in which communication runs and computation does not is
 * exposed when it ends with the communication and computation resumes
 * within resume_ns: computation was waiting for it. Any other such
 * stretch (computation idle for the host's reasons, not the network's)
 * goes to other(ctx, a, b). */
void ta_exposed_comm(const struct ta_union *comm, const struct ta_union *comp,
		     const struct ta_union *waits, int64_t resume_ns,
		     struct ta_exposed *out,
		     void (*other)(void *ctx, int64_t a, int64_t b), void *ctx);

#endif
