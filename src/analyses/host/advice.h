/* diagnose's findings and the advice for each, fitted to what the finding
 * names and to what the run already uses (advice.c). */
#ifndef TA_ADVICE_H
#define TA_ADVICE_H

#include "ta_model.h"

enum finding_kind {
	F_HOST_REGION, F_SYNC, F_PAGEABLE, F_LAUNCH, F_COMM, F_SMALL, F_ALIGN,
	F_WAIT_PEER, F_MEM_GROWTH, F_MEM_PEAK, F_LOW_EFF, F_QUEUED, F_COPY, NKINDS
};

extern const char *const ta_finding_names[NKINDS + 1];  /* NULL-ended */

/* A queued_idle finding's where: the hole before a launch's work, or
 * between the kernels of one launch (a CUDA graph's replay). */
#define TA_QUEUED_BEFORE "before work queued earlier"
#define TA_QUEUED_INSIDE "between the kernels of one launch (a CUDA graph's replay)"

/* A misaligned GEMM's cost is this share of its time: the least that
 * padding to a multiple of 8 saved in GEMMs measured on an H200
 * (tools/capture/gemm_align.py: 41 % for TF32 2048x1001x1001, 53-81 %
 * for bf16 and fp16). */
#define TA_ALIGN_SAVING 0.40

/* A low_efficiency finding's cost: its GPU time beyond what it would take
 * at this share of its roof, what well-tuned kernels reach (cuBLAS's
 * bf16 GEMMs of testdata/roof_train: 66 % of an H100's peak). */
#define TA_ROOF_ATTAINABLE 0.7
/* ... reported below this share of the roof */
#define TA_ROOF_LOW_PCT 35.0

/* How much of each computation kernel's time, by rank and kernel name,
 * ran beside a collective (diagnose's comm_costs), for the
 * low_efficiency findings: a GEMM that NCCL shares the SMs with is not
 * cured by its shapes. */
struct ta_beside {
	/* dur, over: sums of ns as doubles (hostile traces sum past 2^63) */
	struct ta_beside_kernel { int64_t rank, name; double dur, over; } *v;
	size_t n, cap;
};
void ta_beside_add(struct ta_beside *s, int64_t rank, int64_t name, int64_t dur,
		   int64_t over);
/* the share of a kernel name's time on rank that ran beside one (0: none) */
double ta_beside_share(const struct ta_beside *s, int64_t rank, int64_t name);

/* A memory peak's advice: where it is under half of the GPU's memory
 * (roomy), that there is room to spare, not how to shrink it (helper-58:
 * 1.3 GB on an 80 GB card was told "activation checkpointing"). */
const char *ta_advice_peak(int roomy);
/* The advice for a finding of this kind whose where is where. */
const char *ta_advice(enum finding_kind kind, const char *where,
		      const struct ta_traits *run);

#endif
