/*
 * paged_attention.cu — decode attention (one new query token per sequence)
 * over a paged KV cache, with the v1/v2 split of vLLM's paged attention.
 *
 * Knobs (-D defines):
 *   PARTITION_SIZE  0: v1, one block per (head, sequence) walks the whole
 *                   context; > 0: v2, each block walks PARTITION_SIZE tokens
 *                   and paged_attention_reduce combines the partitions
 *                   (vLLM: _PARTITION_SIZE = 512). A multiple of BLOCK_SIZE.
 *   THREADS         threads per block (multiple of 32, >= HEAD_DIM)
 * Problem (defines): HEAD_DIM (128), BLOCK_SIZE (cache block, tokens: 16),
 * NUM_HEADS, NUM_KV_HEADS (grouped-query: head h reads kv head
 * h / (NUM_HEADS / NUM_KV_HEADS)).
 *
 * Layouts (ours, as kernels/triton/prefix_prefill.py): q and out
 * (seqs, NUM_HEADS, HEAD_DIM) bf16; caches (blocks, BLOCK_SIZE, NUM_KV_HEADS,
 * HEAD_DIM) bf16; block_table (seqs, max_blocks) int; ctx_len (seqs) int.
 *
 * Per block: each warp takes tokens in turn and computes q.k with its 32
 * lanes (HEAD_DIM / 32 elements each, shuffle sum); logits live in dynamic
 * shared memory (v1: max context floats; v2: PARTITION_SIZE floats); a block
 * max and sum give the softmax; thread d accumulates out[d] over the tokens.
 * Launch v1: grid (NUM_HEADS, seqs), block THREADS, smem max_ctx * 4 bytes.
 * Launch v2: grid (NUM_HEADS, seqs, ceil_div(max_ctx, PARTITION_SIZE)), smem
 * PARTITION_SIZE * 4; then paged_attention_reduce, grid (NUM_HEADS, seqs),
 * block HEAD_DIM.
 */
#include <cuda_bf16.h>

#ifndef PARTITION_SIZE
#define PARTITION_SIZE 512
#endif
#ifndef THREADS
#define THREADS 128
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#ifndef NUM_HEADS
#define NUM_HEADS 32
#endif
#ifndef NUM_KV_HEADS
#define NUM_KV_HEADS 4
#endif

#if HEAD_DIM % 32 != 0 || THREADS % 32 != 0 || THREADS < HEAD_DIM
#error "HEAD_DIM and THREADS must be multiples of 32, THREADS >= HEAD_DIM"
#endif
#if PARTITION_SIZE % BLOCK_SIZE != 0
#error "PARTITION_SIZE must be a multiple of BLOCK_SIZE"
#endif

#define MUH_WARPS (THREADS / 32)
#define MUH_PER_LANE (HEAD_DIM / 32)

typedef __nv_bfloat16 bf16;

static __device__ __forceinline__ float muh_pa_block_max(float v, float *red)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = v;
	__syncthreads();
	v = red[0];
	for (int w = 1; w < MUH_WARPS; w++)
		v = fmaxf(v, red[w]);
	__syncthreads();
	return v;
}

static __device__ __forceinline__ float muh_pa_block_sum(float v, float *red)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = v;
	__syncthreads();
	v = 0.0f;
	for (int w = 0; w < MUH_WARPS; w++)
		v += red[w];
	__syncthreads();
	return v;
}

/* v1 writes out directly (PARTITION_SIZE == 0); v2 writes its partition's
 * max logit, exp sum and unnormalised-by-others output. */
extern "C" __global__ void __launch_bounds__(THREADS)
	paged_attention_decode(const bf16 *__restrict__ q, const bf16 *__restrict__ k_cache,
			       const bf16 *__restrict__ v_cache, const int *__restrict__ block_table,
			       const int *__restrict__ ctx_len, int max_blocks, float scale,
			       bf16 *__restrict__ out, float *__restrict__ part_max,
			       float *__restrict__ part_sum, float *__restrict__ part_out)
{
	extern __shared__ float logits[];
	__shared__ float red[MUH_WARPS];
	const int head = blockIdx.x, seq = blockIdx.y;
	const int kvh = head / (NUM_HEADS / NUM_KV_HEADS);
	const int len = ctx_len[seq];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#if PARTITION_SIZE > 0
	const int part = blockIdx.z;
	const int t0 = part * PARTITION_SIZE;
	const int t1 = min(len, t0 + PARTITION_SIZE);
#else
	const int t0 = 0, t1 = len;
#endif
	if (t0 >= len)
		return; /* this partition is past the context; the reduce skips it */
	const int *table = block_table + (long long)seq * max_blocks;
	const long long row = (long long)NUM_KV_HEADS * HEAD_DIM; /* one token */
	float qv[MUH_PER_LANE];
	const bf16 *qp = q + ((long long)seq * NUM_HEADS + head) * HEAD_DIM;
#pragma unroll
	for (int i = 0; i < MUH_PER_LANE; i++)
		qv[i] = __bfloat162float(qp[lane + 32 * i]) * scale;

	float mx = -INFINITY;
	for (int t = t0 + warp; t < t1; t += MUH_WARPS) {
		const long long blk = table[t / BLOCK_SIZE];
		const bf16 *kp = k_cache + (blk * BLOCK_SIZE + t % BLOCK_SIZE) * row + kvh * HEAD_DIM;
		float s = 0.0f;
#pragma unroll
		for (int i = 0; i < MUH_PER_LANE; i++)
			s += qv[i] * __bfloat162float(kp[lane + 32 * i]);
		for (int o = 16; o > 0; o >>= 1)
			s += __shfl_xor_sync(0xffffffffu, s, o);
		if (lane == 0)
			logits[t - t0] = s;
		mx = fmaxf(mx, s);
	}
	__syncthreads();
	mx = muh_pa_block_max(mx, red);
	float sum = 0.0f;
	for (int t = threadIdx.x; t < t1 - t0; t += THREADS) {
		const float e = __expf(logits[t] - mx);
		logits[t] = e;
		sum += e;
	}
	sum = muh_pa_block_sum(sum, red); /* its barriers also publish logits[] */
	for (int d = threadIdx.x; d < HEAD_DIM; d += THREADS) {
		float acc = 0.0f;
		for (int t = t0; t < t1; t++) {
			const long long blk = table[t / BLOCK_SIZE];
			acc += logits[t - t0] *
			       __bfloat162float(v_cache[(blk * BLOCK_SIZE + t % BLOCK_SIZE) * row + kvh * HEAD_DIM + d]);
		}
#if PARTITION_SIZE > 0
		const long long nparts = gridDim.z;
		const long long slot = ((long long)seq * NUM_HEADS + head) * nparts + part;
		part_out[slot * HEAD_DIM + d] = acc / sum;
		if (d == 0) {
			part_max[slot] = mx;
			part_sum[slot] = sum;
		}
#else
		out[((long long)seq * NUM_HEADS + head) * HEAD_DIM + d] = __float2bfloat16(acc / sum);
#endif
	}
}

/* v2's second pass: combines the partitions of (head, seq). Block HEAD_DIM
 * threads, grid (NUM_HEADS, seqs); nparts as launched for the first pass. */
extern "C" __global__ void paged_attention_reduce(const int *__restrict__ ctx_len, int nparts,
						  const float *__restrict__ part_max,
						  const float *__restrict__ part_sum,
						  const float *__restrict__ part_out, bf16 *__restrict__ out)
{
	const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
	const int used = PARTITION_SIZE > 0 ? (ctx_len[seq] + PARTITION_SIZE - 1) / (PARTITION_SIZE > 0 ? PARTITION_SIZE : 1) : 1;
	const long long base = ((long long)seq * NUM_HEADS + head) * nparts;
	float mx = -INFINITY;
	for (int p = 0; p < used; p++)
		mx = fmaxf(mx, part_max[base + p]);
	float total = 0.0f, acc = 0.0f;
	for (int p = 0; p < used; p++) {
		const float w = part_sum[base + p] * __expf(part_max[base + p] - mx);
		total += w;
		acc += w * part_out[(base + p) * HEAD_DIM + d];
	}
	out[((long long)seq * NUM_HEADS + head) * HEAD_DIM + d] = __float2bfloat16(acc / total);
}
