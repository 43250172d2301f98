/* What a GPU can do at most: dense (no 2:4 sparsity) tensor-core TFLOP/s
 * per data type, and memory bandwidth, looked up by the name in the
 * trace's deviceProperties. The vendors' datasheets print sparse figures
 * beside the dense ones (marked *); these are the dense ones, half the
 * starred. fp32 is the CUDA cores' (a GEMM on them), tf32 the tensor
 * cores' on fp32 data. A GPU not listed has no peaks: the roofline's
 * peak columns stay empty (--peak-tflops, --peak-gbps fill them). */
#include "ta_model.h"

#include <string.h>

/* columns: fp64, fp32, tf32, bf16, fp16, fp8, int8 TFLOP/s (TOP/s), GB/s */
static const struct ta_peaks table[] = {
	/* NVIDIA H200 NVL datasheet (Nov 2024) */
	{ "H200 NVL", "NVIDIA H200 NVL", { 30, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5 }, 4800 },
	/* NVIDIA H200 Tensor Core GPU datasheet (2024), SXM: 989*, 1979*, 3958* */
	{ "H200", "NVIDIA H200 SXM", { 34, 67, 494.5, 989.5, 989.5, 1979, 1979 }, 4800 },
	/* NVIDIA H100 Tensor Core GPU datasheet (2023), H100 NVL column */
	{ "H100 NVL", "NVIDIA H100 NVL", { 30, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5 }, 3900 },
	/* the same datasheet, H100 PCIe column */
	{ "H100 PCIe", "NVIDIA H100 PCIe", { 26, 51, 378, 756.5, 756.5, 1513, 1513 }, 2000 },
	/* the same datasheet, H100 SXM column ("NVIDIA H100 80GB HBM3") */
	{ "H100", "NVIDIA H100 SXM", { 34, 67, 494.5, 989.5, 989.5, 1979, 1979 }, 3350 },
	/* NVIDIA HGX B200 datasheet (2024): the 8-GPU figures over 8 */
	{ "B200", "NVIDIA B200", { 37, 75, 1100, 2250, 2250, 4500, 4500 }, 8000 },
	/* NVIDIA A100 Tensor Core GPU datasheet (2021): 80GB SXM 2039 GB/s,
	 * 80GB PCIe 1935, 40GB 1555 (told apart below) */
	{ "A100", "NVIDIA A100", { 19.5, 19.5, 156, 312, 312, 0, 624 }, 1555 },
	/* NVIDIA L40S datasheet (2023) */
	{ "L40S", "NVIDIA L40S", { 0, 91.6, 183, 366.5, 366.5, 733, 733 }, 864 },
	/* NVIDIA L4 datasheet (2023) */
	{ "L4", "NVIDIA L4", { 0, 30.3, 60, 121, 121, 242.5, 242.5 }, 300 },
	/* NVIDIA publishes no A10G datasheet (AWS's G5): the A10's figures
	 * (NVIDIA A10 datasheet, 2021; the same GA102), 600 GB/s as AWS says */
	{ "A10G", "NVIDIA A10G", { 0, 31.2, 62.5, 125, 125, 0, 250 }, 600 },
	{ "A10", "NVIDIA A10", { 0, 31.2, 62.5, 125, 125, 0, 250 }, 600 },
	/* NVIDIA Tesla V100 datasheet (2020), SXM2: tensor cores fp16 only */
	{ "V100", "NVIDIA V100 SXM2", { 7.8, 15.7, 0, 0, 125, 0, 0 }, 900 },
	/* AMD Instinct MI300X data sheet (2023), dense */
	{ "MI300X", "AMD Instinct MI300X", { 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9 }, 5300 },
	/* AMD Instinct MI250X data sheet (2021): a device is one of its two
	 * GCDs, so half the package's 95.7 (FP32 matrix), 383, 3.2 TB/s */
	{ "MI250X", "AMD Instinct MI250X (one GCD)", { 47.9, 47.9, 0, 191.5, 191.5, 0, 191.5 }, 1600 },
};

/* The name as a whole word: "L4" is not in "L40S", "A10" not in "A100". */
static int has_word(const char *name, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = strstr(name, w); p; p = strstr(p + 1, w)) {
		char before = p == name ? ' ' : p[-1], after = p[n];

		if ((before == ' ' || before == '-') &&
		    (after == '\0' || after == ' ' || after == '-' || after == '/'))
			return 1;
	}
	return 0;
}

int ta_peaks_lookup(const char *name, int64_t mem_bytes, struct ta_peaks *p)
{
	size_t i;

	if (!name)
		return -1;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (has_word(name, table[i].key))
			break;
	if (i == sizeof(table) / sizeof(table[0]))
		return -1;
	*p = table[i];
	if (strcmp(p->key, "A100") == 0 && mem_bytes > 60LL << 30)
		p->gbps = strstr(name, "PCIe") || strstr(name, "PCIE") ? 1935 : 2039;
	return 0;
}

static const char *const dtype_names[TA_DT_N] = {
	"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"
};

int ta_peaks_dtype(const char *dtype)
{
	int i;

	for (i = 0; dtype && i < TA_DT_N; i++)
		if (strcmp(dtype, dtype_names[i]) == 0)
			return i;
	return -1;
}
