/* Between the snapshot analysis's files (snapshot_mem.c, snapshot_parts.c,
 * snapshot_place.c). */
#ifndef SNAPSHOT_INT_H
#define SNAPSHOT_INT_H

#include "ta.h"

#include <sqlite3.h>
#include <stdint.h>

enum snap_part { PART_PARAMS, PART_GRADS, PART_OPTIMIZER, PART_WORKSPACE, NPARTS };

/* in_baseline's answers: a block live at the dump is not in the
 * baseline, in it, or in it without any history (allocated before the
 * recording started: what it is, nothing says). */
enum { BASE_NO, BASE_YES, BASE_UNRECORDED };

/* The bytes (as requested: the tensors' own sizes) of device dev's blocks
 * live at the dump for which in_baseline(addr) holds, by what they are
 * (sums[NPARTS]; the rest is neither), and of those with no history
 * (*unrecorded, in no part); *cxx_frames: whether the stacks have C++
 * frames, without which no workspace is known. */
int snap_parts(sqlite3 *db, int64_t dev, int (*in_baseline)(int64_t addr, void *ctx),
	       void *ctx, int64_t sums[NPARTS], int64_t *unrecorded, int *cxx_frames,
	       struct ta_error *err);

#endif
