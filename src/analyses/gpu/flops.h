/* The work one op call does, from what record_shapes wrote of it: FLOPs
 * by torch.utils.flop_counter's formulas (so totals agree with
 * FlopCounterMode) and the bytes of its operands and result. */
#ifndef TA_FLOPS_H
#define TA_FLOPS_H

#include <stdint.h>

#define TA_FLOPS_MAX_ARGS 24
#define TA_FLOPS_MAX_DIMS 8

/* An op's arguments as the trace wrote them: Input Dims (a shape per
 * argument, nd 0 for a scalar or none), Input type, Concrete Inputs. */
struct ta_op_args {
	int n;                                 /* arguments with dims */
	int nd[TA_FLOPS_MAX_ARGS];
	int64_t d[TA_FLOPS_MAX_ARGS][TA_FLOPS_MAX_DIMS];
	int ntypes;
	char type[TA_FLOPS_MAX_ARGS][24];
	int nconc;
	char conc[TA_FLOPS_MAX_ARGS][48];
};

struct ta_work {
	double flops, bytes;
	const char *dtype;  /* "bf16", "fp16", "fp32", "fp64", "fp8", "int8", "" */
	/* the share of the attention score matrix a causal mask leaves (1:
	 * none); FlopCounterMode counts the whole square */
	double causal_share;
};

/* Whether an op name is one whose work is counted (mm, addmm, bmm,
 * baddbmm, convolution, convolution_backward, the fused attentions and
 * their backward). */
int ta_flops_counted(const char *op);

/* Parses the three texts (NULL: absent); -1 if dims is absent or not a
 * list of integer lists (record_shapes off, or damage). */
int ta_op_args_parse(struct ta_op_args *a, const char *dims,
		     const char *types, const char *concrete);

/* The work of one call of op; -1 when its arguments do not fit op's
 * formula (then the call's work is unknown, never 0). */
int ta_flops_work(const char *op, const struct ta_op_args *a,
		  struct ta_work *w);

#endif
