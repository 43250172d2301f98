/* Kernel classification. HTA's rules (hta-semantics §8) match on name
 * prefixes and substrings; the default uses the category first and knows
 * every NCCL/RCCL/HCCL naming. */
#include "ta_analyses.h"

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
