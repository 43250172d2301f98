/* Progress on a terminal (progress.c). */
#ifndef TA_PROGRESS_H
#define TA_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

/* Ingestion: bytes done of total in file i of n, under ingestion's lock;
 * done < 0: the summary line (total: events). */
void ta_progress_ingest(const char *path, int64_t done, int64_t total, size_t i,
			size_t n);

/* An analysis ("WHAT: rank DONE of TOTAL"), shown after a second, wiped
 * at DONE == TOTAL. */
void ta_progress_work(const char *what, size_t done, size_t total);

#endif
