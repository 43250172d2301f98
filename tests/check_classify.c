/* Kernel classification: HTA's rules and the default ones. */
#include "check_main.h"
#include "ta_analyses.h"

static const struct {
	const char *name, *cat;
	int hta, ours;
} cases[] = {
	{ "ncclKernel_AllReduce_RING_LL_Sum_float(x)", "kernel", TA_KIND_COMM, TA_KIND_COMM },
	{ "ncclDevKernel_Generic(ncclDevKernelArgs)", "kernel", TA_KIND_COMM, TA_KIND_COMM },
	{ "void ncclDevKernel_AllGather_RING_LL(x)", "kernel", TA_KIND_COMPUTE, TA_KIND_COMM },
	{ "NCCLKERNEL_upper", "kernel", TA_KIND_COMPUTE, TA_KIND_COMM },
	{ "rcclKernel_x", "kernel", TA_KIND_COMPUTE, TA_KIND_COMM },
	{ "Memcpy DtoD (Device -> Device)", "gpu_memcpy", TA_KIND_MEMORY, TA_KIND_MEMORY },
	{ "Memset (Device)", "gpu_memset", TA_KIND_MEMORY, TA_KIND_MEMORY },
	{ "dma_request", "mtia_ccp_events", TA_KIND_MEMORY, TA_KIND_MEMORY },
	{ "Stream Sync", "cuda_sync", TA_KIND_OTHER, TA_KIND_OTHER },
	{ "Stream Wait Event", "cuda_sync", TA_KIND_OTHER, TA_KIND_OTHER },
	{ "ampere_sgemm_128x64_nn", "kernel", TA_KIND_COMPUTE, TA_KIND_COMPUTE },
	/* HTA: any name containing Sync/Memcpy is OTHER; a kernel is compute */
	{ "void cub::DeviceSyncKernel<>", "kernel", TA_KIND_OTHER, TA_KIND_COMPUTE },
	/* HTA: a hip prefix is communication */
	{ "hipLaunchKernel", "kernel", TA_KIND_COMM, TA_KIND_COMPUTE },
	{ "cudaLaunchKernel", "cuda_runtime", TA_KIND_OTHER, TA_KIND_COMPUTE },
};

START_TEST(test_classify_table)
{
	ck_assert_int_eq(ta_classify(cases[_i].name, cases[_i].cat, 1), cases[_i].hta);
	ck_assert_int_eq(ta_classify(cases[_i].name, cases[_i].cat, 0), cases[_i].ours);
}
END_TEST

Suite *suite_classify(void)
{
	Suite *s = suite_create("classify");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_classify_table, 0,
			    sizeof(cases) / sizeof(cases[0]));
	suite_add_tcase(s, tc);
	return s;
}
