/* GPU time per launch: what the ops and modules walks add up. */
#ifndef TA_GPU_CORR_H
#define TA_GPU_CORR_H

#include <sqlite3.h>

#include "ta.h"

/* Builds temp.gpu_corr (rank, correlation, ns, tc_ns): per rank and
 * correlation id, the GPU activity's time and, of that, the time of
 * tensor-core kernels (all the kernels of a cudaGraphLaunch share its
 * correlation). Needs the model's gpu and label views. */
int ta_gpu_corr_build(sqlite3 *db, struct ta_error *err);

#endif
