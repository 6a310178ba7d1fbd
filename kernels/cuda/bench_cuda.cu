/*
 * bench_cuda.cu — standalone GPU harness for the CUDA kernels of this folder,
 * used by bench/gpu_kernels.py on the device (muh's own cuda backend drives
 * the same kernel files through NVRTC). Built once per configuration:
 *
 *   nvcc -O3 -arch=sm_90 -DMUH_REDUCE -DN=134217728 -DTHREADS=256 ... bench_cuda.cu -o r
 *   r                       sum of N random floats
 *   nvcc -O3 -arch=sm_90 -DMUH_PAGED -DPARTITION_SIZE=512 bench_cuda.cu -o p
 *   p SEQS CTX              decode attention (bf16), SEQS sequences of CTX tokens
 *
 * Each run: fresh random inputs, output poisoned (NaN), checked against the
 * CPU reference of reference.h (NaN never passes; for paged attention on a
 * smaller problem first), then warm-up and the median of 50 CUDA-event timed
 * launches on the full problem. Prints one CSV line:
 *   kernel,config,size,median_us,gbs,status,detail
 * status: ok, wrong_result, launch_error. Exit 0 unless the harness itself
 * failed.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include "reference.h"
#if defined(MUH_REDUCE)
#include "reduce.cu"
#elif defined(MUH_PAGED)
#ifndef MUH_BF16
#define MUH_BF16 1 /* the harness times the engine's dtype */
#endif
#include "paged_attention.cu"
#else
#error "define MUH_REDUCE or MUH_PAGED"
#endif

#define CK(x)                                                                                    \
	do {                                                                                     \
		cudaError_t e_ = (x);                                                            \
		if (e_ != cudaSuccess) {                                                         \
			snprintf(g_err, sizeof(g_err), "%s: %s", #x, cudaGetErrorString(e_));    \
			return 1;                                                                \
		}                                                                                \
	} while (0)

static char g_err[512];
static unsigned long long g_rng = 0x9E3779B97F4A7C15ull;
static float urand(void) /* uniform [-1, 1) */
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return (float)((g_rng >> 40) * (2.0 / 16777216.0) - 1.0);
}

template <typename F> static int time_median(F launch, int reps, double *us)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < 5; i++)
		launch();
	CK(cudaDeviceSynchronize());
	std::vector<float> t(reps);
	for (int i = 0; i < reps; i++) {
		CK(cudaEventRecord(a));
		launch();
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&t[i], a, b));
	}
	CK(cudaGetLastError());
	std::sort(t.begin(), t.end());
	*us = 1000.0 * t[reps / 2];
	return 0;
}

#if defined(MUH_REDUCE)
/* N is the define the kernel reads (build with -DN=...). */
static int bench(int argc, char **argv, const char *cfg)
{
	const long long n = (long long)(N);
	std::vector<float> h(n);
	double asum = 0;
	for (long long i = 0; i < n; i++) {
		h[i] = urand();
		asum += fabs(h[i]);
	}
	const double want = muh_ref_sum(h.data(), (size_t)n);
	const long long tiles = (n + THREADS * ITEMS_PER_THREAD - 1) / (THREADS * ITEMS_PER_THREAD);
	int sms = 132;
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	int per_sm = 1;
	cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_sum, THREADS, 0);
	const int grid = (int)std::max(1ll, std::min({tiles, (long long)sms * std::max(per_sm, 1), (long long)MUH_MAX_GRID}));
	float *d_in, *d_out;
	CK(cudaMalloc(&d_in, n * sizeof(float)));
	CK(cudaMalloc(&d_out, sizeof(float)));
	CK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemset(d_out, 0xff, sizeof(float))); /* NaN */
	auto launch = [&] { reduce_sum<<<grid, THREADS>>>(d_in, d_out); };
	launch();
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	float got;
	CK(cudaMemcpy(&got, d_out, sizeof(float), cudaMemcpyDeviceToHost));
	const double err = fabs((double)got - want) / (asum > 0 ? asum : 1);
	const char *status = (isnan(got) || !(err <= 1e-6)) ? "wrong_result" : "ok";
	double us = 0;
	if (time_median(launch, 50, &us))
		return 1;
	/* the check again after timing: the counter reset must hold */
	CK(cudaMemset(d_out, 0xff, sizeof(float)));
	launch();
	CK(cudaDeviceSynchronize());
	float again;
	CK(cudaMemcpy(&again, d_out, sizeof(float), cudaMemcpyDeviceToHost));
	if (isnan(again) || fabs((double)again - want) / (asum > 0 ? asum : 1) > 1e-6)
		status = "wrong_result";
	printf("reduce,%s,%lld,%.3f,%.1f,%s,grid=%d rel_err=%.3g\n", cfg, n, us, n * 4.0 / us / 1e3, status, grid,
	       err);
	return 0;
}
#define MUH_CFG "THREADS=%d ITEMS_PER_THREAD=%d VEC=%d LOAD_MODIFIER=%d", THREADS, ITEMS_PER_THREAD, VEC, LOAD_MODIFIER
#else
struct paged_case {
	int seqs, ctx, max_blocks, nblocks;
	muh_t *q, *kc, *vc, *out;
	int *table, *len;
	float *pmax, *psum, *pout;
	int nparts;
	std::vector<float> hq, hk, hv;
	std::vector<int> htable, hlen;
};

static int paged_setup(paged_case &c, int seqs, int ctx)
{
	c.seqs = seqs;
	c.ctx = ctx;
	c.max_blocks = (ctx + BLOCK_SIZE - 1) / BLOCK_SIZE;
	c.nblocks = seqs * c.max_blocks + 1;
	const size_t row = (size_t)NUM_KV_HEADS * HEAD_DIM;
	const size_t nq = (size_t)seqs * NUM_HEADS * HEAD_DIM, nc = (size_t)c.nblocks * BLOCK_SIZE * row;
	std::vector<muh_t> bq(nq), bk(nc), bv(nc);
	c.hq.resize(nq);
	c.hk.resize(nc);
	c.hv.resize(nc);
	for (size_t i = 0; i < nq; i++) {
		bq[i] = __float2bfloat16(urand());
		c.hq[i] = __bfloat162float(bq[i]);
	}
	for (size_t i = 0; i < nc; i++) {
		bk[i] = __float2bfloat16(urand());
		c.hk[i] = __bfloat162float(bk[i]);
		bv[i] = __float2bfloat16(urand());
		c.hv[i] = __bfloat162float(bv[i]);
	}
	/* shuffled physical blocks; lengths vary a little around ctx */
	std::vector<int> perm(c.nblocks);
	for (int i = 0; i < c.nblocks; i++)
		perm[i] = i;
	for (int i = c.nblocks - 1; i > 0; i--)
		std::swap(perm[i], perm[(int)(((g_rng = g_rng * 6364136223846793005ull + 1) >> 33) % (unsigned long long)(i + 1))]);
	c.htable.assign(perm.begin(), perm.begin() + seqs * c.max_blocks);
	c.hlen.resize(seqs);
	for (int s = 0; s < seqs; s++)
		c.hlen[s] = std::max(1, ctx - (s % 7) * 3);
	c.nparts = PARTITION_SIZE > 0 ? (ctx + PARTITION_SIZE - 1) / (PARTITION_SIZE > 0 ? PARTITION_SIZE : 1) : 1;
	const size_t np = (size_t)seqs * NUM_HEADS * c.nparts;
	CK(cudaMalloc(&c.q, nq * sizeof(muh_t)));
	CK(cudaMalloc(&c.out, nq * sizeof(muh_t)));
	CK(cudaMalloc(&c.kc, nc * sizeof(muh_t)));
	CK(cudaMalloc(&c.vc, nc * sizeof(muh_t)));
	CK(cudaMalloc(&c.table, c.htable.size() * sizeof(int)));
	CK(cudaMalloc(&c.len, seqs * sizeof(int)));
	CK(cudaMalloc(&c.pmax, np * sizeof(float)));
	CK(cudaMalloc(&c.psum, np * sizeof(float)));
	CK(cudaMalloc(&c.pout, np * HEAD_DIM * sizeof(float)));
	CK(cudaMemcpy(c.q, bq.data(), nq * sizeof(muh_t), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.kc, bk.data(), nc * sizeof(muh_t), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.vc, bv.data(), nc * sizeof(muh_t), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.table, c.htable.data(), c.htable.size() * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(c.len, c.hlen.data(), seqs * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaMemset(c.out, 0xff, nq * sizeof(muh_t))); /* NaN */
	return 0;
}

static void paged_launch(paged_case &c)
{
	const size_t smem = (size_t)(PARTITION_SIZE > 0 ? PARTITION_SIZE : c.ctx) * sizeof(float);
	paged_attention_decode<<<dim3(NUM_HEADS, c.seqs, c.nparts), THREADS, smem>>>(
		c.q, c.kc, c.vc, c.table, c.len, c.max_blocks, c.out, c.pmax, c.psum, c.pout);
	if (PARTITION_SIZE > 0)
		paged_attention_reduce<<<dim3(NUM_HEADS, c.seqs), HEAD_DIM>>>(c.len, c.nparts, c.pmax, c.psum, c.pout,
										 c.out);
}

static int paged_check(paged_case &c, double *err)
{
	const size_t nq = (size_t)c.seqs * NUM_HEADS * HEAD_DIM;
	std::vector<muh_t> got(nq);
	std::vector<float> want(nq);
	std::vector<double> scratch(c.ctx + 1);
	CK(cudaMemcpy(got.data(), c.out, nq * sizeof(muh_t), cudaMemcpyDeviceToHost));
	muh_ref_paged_decode(c.hq.data(), c.hk.data(), c.hv.data(), c.htable.data(), c.hlen.data(), c.seqs,
			     c.max_blocks, NUM_HEADS, NUM_KV_HEADS, HEAD_DIM, BLOCK_SIZE, 1.0f / sqrtf((float)HEAD_DIM),
			     scratch.data(), want.data());
	double num = 0, den = 0;
	for (size_t i = 0; i < nq; i++) {
		double g = __bfloat162float(got[i]), d = g - want[i];
		if (isnan(g)) {
			*err = NAN;
			return 0;
		}
		num += d * d;
		den += (double)want[i] * want[i];
	}
	*err = sqrt(num / (den > 0 ? den : 1));
	return 0;
}

static int bench(int argc, char **argv, const char *cfg)
{
	int seqs = argc > 1 ? atoi(argv[1]) : 64, ctx = argc > 2 ? atoi(argv[2]) : 4096;
	const size_t smem = (size_t)(PARTITION_SIZE > 0 ? PARTITION_SIZE : ctx) * sizeof(float);
	if (smem > 48 * 1024)
		CK(cudaFuncSetAttribute(paged_attention_decode, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	paged_case small, big;
	if (paged_setup(small, 4, std::min(ctx, 1000) + 5))
		return 1;
	paged_launch(small);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	double err;
	if (paged_check(small, &err))
		return 1;
	const char *status = (isnan(err) || !(err <= 1e-2)) ? "wrong_result" : "ok";
	if (paged_setup(big, seqs, ctx))
		return 1;
	double us = 0;
	if (time_median([&] { paged_launch(big); }, 50, &us))
		return 1;
	const double bytes = 2.0 * seqs * (double)ctx * NUM_KV_HEADS * HEAD_DIM * 2;
	printf("paged_attention,%s,%dx%d,%.3f,%.1f,%s,rel_l2=%.3g\n", cfg, seqs, ctx, us, bytes / us / 1e3, status, err);
	return 0;
}
#define MUH_CFG "PARTITION_SIZE=%d THREADS=%d", PARTITION_SIZE, THREADS
#endif

int main(int argc, char **argv)
{
	char cfg[256];
	snprintf(cfg, sizeof(cfg), MUH_CFG);
	if (bench(argc, argv, cfg)) {
#if defined(MUH_REDUCE)
		printf("reduce,%s,,,,launch_error,%s\n", cfg, g_err);
#else
		printf("paged_attention,%s,,,,launch_error,%s\n", cfg, g_err);
#endif
		return 0;
	}
	return 0;
}
