/* Kernel classification. HTA's rules (hta-semantics §8) match on name
 * prefixes and substrings; the default uses the category first and knows
 * every NCCL/RCCL/HCCL naming. */
#include "ta_analyses.h"

#include "ta_intern.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int starts_any(const char *s, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (starts(s, *prefixes))
			return 1;
	return 0;
}

static int hta_is_comm(const char *n)
{
	return starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") ||
	       strstr(n, "ncclKernel") != NULL;
}

static int hta_is_memory(const char *n)
{
	static const char *const p[] = { "Memcpy", "hipMemcpy", "Memset",
					 "hipMemset", "dma", NULL };
	return starts_any(n, p);
}

static int hta_not_compute(const char *n)
{
	static const char *const p[] = {
		"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe",
		"packet", "pe_exe", "cpum_exe_subgraph", "hccl",
		"collective_subgraph_execution", NULL
	};

	if (starts_any(n, p) || strstr(n, "Memcpy") || strstr(n, "Memset") ||
	    strstr(n, "dma") || strstr(n, "Sync"))
		return 1;
	return starts(n, "cuda") && strstr(n + 4, "LaunchKernel") != NULL;
}

static int hta_classify(const char *n)
{
	if (hta_is_comm(n))
		return TA_KIND_COMM;
	if (hta_is_memory(n))
		return TA_KIND_MEMORY;
	if (!hta_not_compute(n))
		return TA_KIND_COMPUTE;
	return TA_KIND_OTHER;
}

/* NCCL renamed its kernels (ncclKernel_* -> ncclDevKernel_*); AMD ships
 * RCCL under NCCL's names; Habana uses hccl. Any case. */
static int is_collective(const char *n)
{
	if (starts(n, "void "))
		n += 5;
	return strcasestr(n, "nccl") != NULL || strncasecmp(n, "rccl", 4) == 0 ||
	       strncasecmp(n, "hccl", 4) == 0;
}

int ta_classify(const char *name, const char *cat, int by_name)
{
	if (!name)
		name = "";
	if (by_name)
		return hta_classify(name);
	if (cat && (strcmp(cat, "gpu_memcpy") == 0 ||
		    strcmp(cat, "gpu_memset") == 0 || strcmp(cat, "Memcpy") == 0 ||
		    strcmp(cat, "Memset") == 0))
		return TA_KIND_MEMORY;
	if (cat && strcmp(cat, "cuda_sync") == 0)
		return TA_KIND_OTHER;
	if (is_collective(name))
		return TA_KIND_COMM;
	if (starts(name, "Memcpy") || starts(name, "Memset") ||
	    starts(name, "dma"))
		return TA_KIND_MEMORY;
	return TA_KIND_COMPUTE;
}

/* Tensor-core kernels by name (tb-semantics "Tensor Cores": the plugin's
 * 2019 list misses Hopper's). CUDA-core GEMMs first: CUTLASS's simt,
 * cuBLAS's ffma and gemv kernels and the sgemm ones run no tensor op, and
 * f32 memory-efficient attention neither. Then the tensor ops: mma
 * instruction names (hmma, imma, wmma, gmma and wgmma, mfma on AMD),
 * tensorop, cuBLAS's xmma and nvjet, the shapes of Volta's and Ampere's
 * kernels (h884, s1688, 16816, ...), flash and fused (fmha) attention, and
 * the plugin's cuDNN names. cuDNN's init_device_workspace_kernel (an
 * xmma GEMM's scratch set up, its name the GEMM's) computes nothing. */
int ta_is_tensor_core(const char *name)
{
	static const char *const cuda_cores[] = { "simt", "ffma", "gemv", "sgemm",
		"fmha_cutlassF_f32", "fmha_cutlassB_f32", "init_device_workspace", NULL };
	static const char *const tensor_ops[] = { "hmma", "imma", "wmma", "gmma",
		"mfma", "tensorop", "xmma", "nvjet", "h884", "s884", "h1688", "s1688",
		"c1688", "i8816", "16816", "flash_fwd", "flash_bwd", "fmha",
		"dgrad_1x1_stride_2x2", "first_layer_wgrad_kernel", "conv1x1",
		"conv2d_c1_k1", "direct_group", NULL };
	size_t i;

	if (!name)
		return 0;
	for (i = 0; cuda_cores[i]; i++)
		if (strcasestr(name, cuda_cores[i]))
			return 0;
	for (i = 0; tensor_ops[i]; i++)
		if (strcasestr(name, tensor_ops[i]))
			return 1;
	return 0;
}

/* An op whose work tensor cores are for (the plugin's "Tensor Cores
 * eligible" operators, by today's names): matrix products, convolutions,
 * fused attention and the recurrent layers cuDNN runs, forward and
 * backward; the aten names, not the autograd nodes that call them. */
int ta_op_tensor_core_eligible(const char *name)
{
	static const char *const exact[] = { "aten::mm", "aten::addmm", "aten::bmm",
		"aten::baddbmm", "aten::addbmm", "aten::matmul", "aten::linear",
		"aten::_scaled_mm", "aten::einsum", "aten::tensordot", NULL };
	static const char *const prefix[] = { "aten::conv", "aten::_conv",
		"aten::cudnn_conv", "aten::miopen_conv", "aten::mkldnn_conv",
		"aten::_nnpack_spatial_conv", "aten::lstm", "aten::gru", "aten::rnn_",
		"aten::_cudnn_rnn", NULL };
	size_t i;

	if (!name)
		return 0;
	for (i = 0; exact[i]; i++)
		if (strcmp(name, exact[i]) == 0)
			return 1;
	for (i = 0; prefix[i]; i++)
		if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return strncmp(name, "aten::", 6) == 0 && strstr(name, "attention") != NULL;
}

/* Matrix work by name, on whichever cores: GEMMs, convolutions, fused
 * attention (what tensor cores are for: overview's AMP/TF32 advice), and
 * every tensor-core kernel (CUTLASS's "tensorop ... fprop" convolutions
 * name none of the words). Not gemv: a matrix-vector product is bound by
 * memory, not by the cores; not a GEMM's workspace set up. */
int ta_is_matmul(const char *name)
{
	static const char *const words[] = { "gemm", "nvjet", "xmma", "convolution",
		"conv1d", "conv2d", "conv3d", "dgrad", "wgrad", "sdpa", "fmha", "flash_",
		"attention", NULL };
	size_t i;

	if (!name || strcasestr(name, "init_device_workspace"))
		return 0;
	if (ta_is_tensor_core(name))
		return 1;
	for (i = 0; words[i]; i++)
		if (strcasestr(name, words[i]))
			return 1;
	return 0;
}

struct ta_name_memo {
	struct ta_intern *names;
	unsigned char *traits;     /* by the name's id in names */
	size_t cap;
};

struct ta_name_memo *ta_name_memo_new(void)
{
	struct ta_name_memo *m = ta_xcalloc(1, sizeof(*m));

	m->names = ta_intern_new();
	return m;
}

unsigned ta_name_traits(struct ta_name_memo *m, const char *name)
{
	int64_t id;
	int is_new;

	if (!name)
		return 0;
	id = ta_intern(m->names, name, strlen(name), &is_new);
	if ((size_t)id >= m->cap) {
		size_t cap = (size_t)id * 2 + 64;

		m->traits = ta_xrealloc(m->traits, cap);
		m->cap = cap;
	}
	if (is_new)
		m->traits[id] = (unsigned char)((ta_is_tensor_core(name) ?
						 TA_NAME_TENSOR_CORE : 0) |
						(ta_is_matmul(name) ? TA_NAME_MATMUL : 0));
	return m->traits[id];
}

void ta_name_memo_free(struct ta_name_memo *m)
{
	if (!m)
		return;
	ta_intern_free(m->names);
	free(m->traits);
	free(m);
}

int ta_occupancy_unknown(double occupancy, int64_t shared_mem)
{
	return occupancy == 0 && shared_mem > 49152;
}
