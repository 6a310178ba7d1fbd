/*
 * cub_reduce_ref.cu — the time of cub::DeviceReduce::Sum on N random floats,
 * the "best known" for kernels/cuda/reduce.cu. Same input, check and timing
 * as bench_cuda.cu (median of 50 CUDA-event timed calls after warm-up; the
 * temporary storage is allocated once, outside the timing).
 *   nvcc -O3 -arch=sm_90 cub_reduce_ref.cu -o cub_ref && ./cub_ref [N]
 * Prints: reduce,cub::DeviceReduce::Sum,N,median_us,gbs,status,detail
 */
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#include "reference.h"

static unsigned long long g_rng = 0x9E3779B97F4A7C15ull;
static float urand(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (float)((g_rng >> 40) * (2.0 / 16777216.0) - 1.0);
}

#define CK(x)                                                                                          \
	do {                                                                                           \
		cudaError_t e_ = (x);                                                                  \
		if (e_ != cudaSuccess) {                                                               \
			printf("reduce,cub::DeviceReduce::Sum,%lld,,,launch_error,%s: %s\n", n, #x,    \
			       cudaGetErrorString(e_));                                                \
			return 0;                                                                      \
		}                                                                                      \
	} while (0)

int main(int argc, char **argv)
{
	long long n = argc > 1 ? atoll(argv[1]) : (1ll << 26);
	std::vector<float> h(n);
	double asum = 0;
	for (long long i = 0; i < n; i++) {
		h[i] = urand();
		asum += fabs(h[i]);
	}
	const double want = muh_ref_sum(h.data(), (size_t)n);
	float *d_in, *d_out;
	void *tmp = NULL;
	size_t tmp_bytes = 0;
	CK(cudaMalloc(&d_in, n * sizeof(float)));
	CK(cudaMalloc(&d_out, sizeof(float)));
	CK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, d_in, d_out, (int)n));
	CK(cudaMalloc(&tmp, tmp_bytes));
	CK(cudaMemset(d_out, 0xff, sizeof(float)));
	CK(cub::DeviceReduce::Sum(tmp, tmp_bytes, d_in, d_out, (int)n));
	CK(cudaDeviceSynchronize());
	float got;
	CK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
	const double err = fabs((double)got - want) / (asum > 0 ? asum : 1);
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < 5; i++)
		cub::DeviceReduce::Sum(tmp, tmp_bytes, d_in, d_out, (int)n);
	CK(cudaDeviceSynchronize());
	std::vector<float> t(50);
	for (int i = 0; i < 50; i++) {
		CK(cudaEventRecord(a));
		cub::DeviceReduce::Sum(tmp, tmp_bytes, d_in, d_out, (int)n);
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&t[i], a, b));
	}
	std::sort(t.begin(), t.end());
	const double us = 1000.0 * t[25];
	printf("reduce,cub::DeviceReduce::Sum,%lld,%.3f,%.1f,%s,tmp_bytes=%zu rel_err=%.3g\n", n, us, n * 4.0 / us / 1e3,
	       (isnan(got) || !(err <= 1e-6)) ? "wrong_result" : "ok", tmp_bytes, err);
	return 0;
}
