/* Unit tests of the roofline's arithmetic: every FLOP formula against
 * values worked out by hand (torch/utils/flop_counter.py's formulas), the
 * bytes, the causal share, damaged shapes, and the table of peaks. */
#include "check_main.h"
#include "analyses/gpu/flops.h"
#include "ta_model.h"

#include <math.h>

/* The work of op on these texts; flops -1 when it has none. */
static struct ta_work work(const char *op, const char *dims, const char *types,
			   const char *conc)
{
	struct ta_op_args a;
	struct ta_work w;

	if (ta_op_args_parse(&a, dims, types, conc) < 0 || ta_flops_work(op, &a, &w) < 0) {
		w.flops = -1;
		w.bytes = -1;
	}
	return w;
}

#define HALF2 "[\"c10::Half\", \"c10::Half\"]"
#define CONV_TYPES "[\"c10::Half\", \"c10::Half\", \"\", \"ScalarList\", \"ScalarList\"," \
	" \"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]"

START_TEST(test_flops_mm)
{
	/* 2 * M * N * K = 2 * 4 * 16 * 8; bytes (4*8 + 8*16 + 4*16) * 2 */
	struct ta_work w = work("aten::mm", "[[4, 8], [8, 16]]", HALF2, NULL);

	ck_assert_double_eq(w.flops, 1024);
	ck_assert_double_eq(w.bytes, 448);
	ck_assert_str_eq(w.dtype, "fp16");
	ck_assert_double_eq(work("aten::mm", "[[4, 8], [9, 16]]", HALF2, NULL).flops, -1);
	ck_assert_double_eq(work("aten::mm", "[[4, 8, 1], [8, 16]]", HALF2, NULL).flops, -1);
}
END_TEST

START_TEST(test_flops_addmm)
{
	/* the bias is read too: (16 + 32 + 128) * 4 + the result 64 * 4 */
	struct ta_work w = work("aten::addmm", "[[16], [4, 8], [8, 16], [], []]",
				"[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]",
				"[\"\", \"\", \"\", \"1\", \"1\"]");

	ck_assert_double_eq(w.flops, 1024);
	ck_assert_double_eq(w.bytes, 960);
	ck_assert_str_eq(w.dtype, "fp32");
}
END_TEST

START_TEST(test_flops_bmm)
{
	const char *bf = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]";
	struct ta_work w = work("aten::bmm", "[[2, 4, 8], [2, 8, 16]]", bf, NULL);

	ck_assert_double_eq(w.flops, 2 * 2 * 4 * 16 * 8);
	ck_assert_double_eq(w.bytes, (64 + 256 + 128) * 2);
	ck_assert_str_eq(w.dtype, "bf16");
	w = work("aten::baddbmm", "[[2, 4, 16], [2, 4, 8], [2, 8, 16], [], []]", bf, NULL);
	ck_assert_double_eq(w.flops, 2048);
	ck_assert_double_eq(work("aten::bmm", "[[2, 4, 8], [3, 8, 16]]", bf, NULL).flops, -1);
}
END_TEST

START_TEST(test_flops_conv)
{
	/* 3x3, stride 1, padding 1: 8x8 out; 64 points * 9 * N 1 * 4 * 3 * 2 */
	struct ta_work w = work("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []]",
				CONV_TYPES, "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\","
				" \"False\", \"[0, 0]\", \"1\"]");

	ck_assert_double_eq(w.flops, 13824);
	ck_assert_double_eq(w.bytes, (192 + 108) * 2 + 4 * 64 * 2);
	/* stride 2, no padding, batch 2: (9 - 3) / 2 + 1 = 4 */
	w = work("aten::_convolution", "[[2, 3, 9, 9], [4, 3, 3, 3], [], [], [], [], [], [], []]",
		 CONV_TYPES, "[\"\", \"\", \"\", \"[2, 2]\", \"[0, 0]\", \"[1, 1]\", \"False\","
		 " \"[0, 0]\", \"1\", \"False\", \"False\", \"True\", \"True\"]");
	ck_assert_double_eq(w.flops, 16 * 9 * 2 * 4 * 3 * 2);
	/* conv1d, one stride for every dimension: 8 out points */
	w = work("aten::convolution", "[[2, 3, 10], [5, 3, 3], [], [], [], [], [], [], []]",
		 CONV_TYPES, "[\"\", \"\", \"\", \"[1]\", \"[0]\", \"[1]\", \"False\", \"[0]\", \"1\"]");
	ck_assert_double_eq(w.flops, 8 * 3 * 2 * 5 * 3 * 2);
	/* without Concrete Inputs the output is unknown: so is the work */
	ck_assert_double_eq(work("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]",
				 CONV_TYPES, NULL).flops, -1);
}
END_TEST

START_TEST(test_flops_conv_transposed)
{
	/* out (4 - 1) * 2 + (2 - 1) + 1 = 8; FLOPs over the input's 16
	 * points: 16 * 4 * 1 * 4 * 2 * 2; 2 channels out (w[1] * groups) */
	struct ta_work w = work("aten::convolution", "[[1, 4, 4, 4], [4, 2, 2, 2], [], [], [], [], [], [], []]",
				CONV_TYPES, "[\"\", \"\", \"\", \"[2, 2]\", \"[0, 0]\", \"[1, 1]\","
				" \"True\", \"[0, 0]\", \"1\"]");

	ck_assert_double_eq(w.flops, 1024);
	ck_assert_double_eq(w.bytes, (64 + 32) * 2 + 2 * 64 * 2);
}
END_TEST

START_TEST(test_flops_conv_backward)
{
	const char *dims = "[[1, 4, 8, 8], [1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], [], []]";
	const char *types = "[\"c10::Half\", \"c10::Half\", \"c10::Half\"]";
	/* grad_input 64 * 9 * 1 * 4 * 3 * 2, grad_weight 9 * 64 * 3 * 4 * 1 * 2 */
	struct ta_work w = work("aten::convolution_backward", dims, types,
				"[\"\", \"\", \"\", \"[4]\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\","
				" \"[0, 0]\", \"1\", \"[True, True, True]\"]");

	ck_assert_double_eq(w.flops, 27648);
	w = work("aten::convolution_backward", dims, types,
		 "[\"\", \"\", \"\", \"[4]\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\","
		 " \"[0, 0]\", \"1\", \"[False, True, False]\"]");
	ck_assert_double_eq(w.flops, 13824);
}
END_TEST

START_TEST(test_flops_attention)
{
	const char *qkv = "[[1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8], [], [], [], []]";
	const char *t = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]";
	/* 2 * b*h * sq * sk * (d + dv) = 2 * 2 * 4 * 4 * 16; causal keeps
	 * 1 + 2 + 3 + 4 of 16 pairs */
	struct ta_work w = work("aten::_scaled_dot_product_flash_attention", qkv, t,
				"[\"\", \"\", \"\", \"0.\", \"True\", \"False\", \"0.125\"]");

	ck_assert_double_eq(w.flops, 1024.0 * 10 / 16);
	ck_assert_double_eq(w.causal_share, 10.0 / 16);
	w = work("aten::_scaled_dot_product_efficient_attention", qkv, t,
		 "[\"\", \"\", \"\", \"\", \"False\", \"0.\", \"False\", \"0.125\"]");
	ck_assert_double_eq(w.flops, 1024);
	ck_assert_double_eq(w.bytes, (3 * 64 + 64) * 2);
	/* is_causal unknown (no Concrete Inputs, or neither value): no guess */
	ck_assert_double_eq(work("aten::_scaled_dot_product_cudnn_attention", qkv, t, NULL).flops, -1);
	ck_assert_double_eq(work("aten::_scaled_dot_product_flash_attention", qkv, t,
				 "[\"\", \"\", \"\", \"0.\", \"yes\"]").flops, -1);
	/* backward: grad_out, q, k, v: 2 * 2 * 4 * 4 * (3 * 8 + 2 * 8) */
	w = work("aten::_scaled_dot_product_cudnn_attention_backward",
		 "[[1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8], [1, 2, 4, 8]]", t,
		 "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"4\", \"4\","
		 " \"0.\", \"True\", \"0.125\"]");
	ck_assert_double_eq(w.flops, 2560.0 * 10 / 16);
	/* 2 queries over 4 keys, top-left: 1 + 2 of 8 pairs */
	w = work("aten::_scaled_dot_product_flash_attention",
		 "[[1, 2, 2, 8], [1, 2, 4, 8], [1, 2, 4, 8]]", t,
		 "[\"\", \"\", \"\", \"0.\", \"True\"]");
	ck_assert_double_eq(w.causal_share, 3.0 / 8);
}
END_TEST

START_TEST(test_flops_damaged)
{
	ck_assert(!ta_flops_counted("aten::linear"));
	ck_assert(!ta_flops_counted("aten::matmul"));
	ck_assert(ta_flops_counted("aten::mm"));
	ck_assert_double_eq(work("aten::mm", NULL, HALF2, NULL).flops, -1);
	ck_assert_double_eq(work("aten::mm", "[[4, 8], [8, 16]", HALF2, NULL).flops, -1);
	ck_assert_double_eq(work("aten::mm", "[[4, -8], [8, 16]]", HALF2, NULL).flops, -1);
	ck_assert_double_eq(work("aten::mm", "[[4, 8], [8, 16]]", "[\"c10::Weird\", \"x\"]", NULL).flops, -1);
	ck_assert_double_eq(work("aten::mm", "[[4, 8], [8, 16]]", "[\"c10::Half\"", NULL).flops, -1);
	ck_assert_double_eq(work("aten::mm", "[[1, 2, 3, 4, 5, 6, 7, 8, 9], [8, 16]]", HALF2, NULL).flops, -1);
	/* sizes past what a double holds exactly are refused, not wrapped */
	ck_assert_double_eq(work("aten::mm", "[[9223372036854775807, 4000000000],"
				 " [4000000000, 9223372036854775807]]", HALF2, NULL).flops, -1);
	ck_assert_double_eq(work("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", CONV_TYPES,
				 "[\"\", \"\", \"\", \"[0, 0]\", \"[1, 1]\", \"[1, 1]\", \"False\","
				 " \"[0, 0]\", \"1\"]").flops, -1);   /* stride 0 */
	/* values torch refuses: negative groups, dilation 0, huge padding */
	ck_assert_double_eq(work("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", CONV_TYPES,
				 "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\","
				 " \"[0, 0]\", \"-1000\"]").flops, -1);
	ck_assert_double_eq(work("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", CONV_TYPES,
				 "[\"\", \"\", \"\", \"[1, 1]\", \"[1, 1]\", \"[0, 1]\", \"False\","
				 " \"[0, 0]\", \"1\"]").flops, -1);
	ck_assert_double_eq(work("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", CONV_TYPES,
				 "[\"\", \"\", \"\", \"[1, 1]\", \"[9223372036854775807, 1]\","
				 " \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]").flops, -1);
	/* 1e18 FLOPs in one call is damage */
	ck_assert_double_eq(work("aten::mm", "[[2000000, 2000000], [2000000, 2000000]]",
				 HALF2, NULL).flops, -1);
	ck_assert_double_eq(work("aten::convolution", "[[1, 3, 2, 2], [4, 3, 5, 5]]", CONV_TYPES,
				 "[\"\", \"\", \"\", \"[1, 1]\", \"[0, 0]\", \"[1, 1]\", \"False\","
				 " \"[0, 0]\", \"1\"]").flops, -1);   /* no output */
}
END_TEST

START_TEST(test_peaks_lookup)
{
	struct ta_peaks p;

	ck_assert_int_eq(ta_peaks_lookup("NVIDIA H100 80GB HBM3", 80LL << 30, &p), 0);
	ck_assert_double_eq(p.tflops[TA_DT_BF16], 989.5);
	ck_assert_double_eq(p.gbps, 3350);
	ck_assert_int_eq(ta_peaks_lookup("NVIDIA H100 PCIe", 80LL << 30, &p), 0);
	ck_assert_double_eq(p.gbps, 2000);
	ck_assert_int_eq(ta_peaks_lookup("NVIDIA H200", 141LL << 30, &p), 0);
	ck_assert_double_eq(p.gbps, 4800);
	ck_assert_int_eq(ta_peaks_lookup("NVIDIA L4", 24LL << 30, &p), 0);
	ck_assert_double_eq(p.tflops[TA_DT_FP16], 121);
	ck_assert_int_eq(ta_peaks_lookup("NVIDIA L40S", 48LL << 30, &p), 0);
	ck_assert_double_eq(p.tflops[TA_DT_FP16], 366.5);
	ck_assert_int_eq(ta_peaks_lookup("NVIDIA A100-SXM4-80GB", 80LL << 30, &p), 0);
	ck_assert_double_eq(p.gbps, 2039);
	ck_assert_int_eq(ta_peaks_lookup("NVIDIA A100-SXM4-40GB", 40LL << 30, &p), 0);
	ck_assert_double_eq(p.gbps, 1555);
	ck_assert_int_eq(ta_peaks_lookup("NVIDIA A10", 24LL << 30, &p), 0);
	ck_assert_str_eq(p.key, "A10");
	ck_assert_int_eq(ta_peaks_lookup("AMD Instinct MI300X", 192LL << 30, &p), 0);
	ck_assert_double_eq(p.tflops[TA_DT_BF16], 1307.4);
	ck_assert_int_eq(ta_peaks_lookup("Tesla V100-SXM2-16GB", 16LL << 30, &p), 0);
	ck_assert_double_eq(p.tflops[TA_DT_BF16], 0);
	ck_assert_int_eq(ta_peaks_lookup("NVIDIA GH200 480GB", 96LL << 30, &p), -1);
	ck_assert_int_eq(ta_peaks_lookup(NULL, 0, &p), -1);
	ck_assert_int_eq(ta_peaks_dtype("tf32"), TA_DT_TF32);
	ck_assert_int_eq(ta_peaks_dtype("int64"), -1);
}
END_TEST

Suite *suite_flops(void)
{
	Suite *s = suite_create("flops");
	TCase *tc = tcase_create("formulas");

	tcase_add_test(tc, test_flops_mm);
	tcase_add_test(tc, test_flops_addmm);
	tcase_add_test(tc, test_flops_bmm);
	tcase_add_test(tc, test_flops_conv);
	tcase_add_test(tc, test_flops_conv_transposed);
	tcase_add_test(tc, test_flops_conv_backward);
	tcase_add_test(tc, test_flops_attention);
	tcase_add_test(tc, test_flops_damaged);
	tcase_add_test(tc, test_peaks_lookup);
	suite_add_tcase(s, tc);
	return s;
}
