/*
 * paged_attention.cu — decode attention (one new query token per sequence)
 * over a paged KV cache, with the v1/v2 split of vLLM's paged attention.
 *
 * Knobs (-D defines, each with a default so the file compiles alone):
 *   PARTITION_SIZE  0: v1, one block per (head, sequence) walks the whole
 *                   context; > 0: v2, one block per PARTITION_SIZE tokens,
 *                   the partitions combined afterwards (vLLM: _PARTITION_SIZE
 *                   = 512). A multiple of BLOCK_SIZE.
 *   THREADS         threads per block (a multiple of 32, >= HEAD_DIM)
 * Problem (defines): HEAD_DIM 128, BLOCK_SIZE 16 (tokens per cache block),
 * NUM_HEADS 32, NUM_KV_HEADS 4 (query head h reads kv head
 * h / (NUM_HEADS / NUM_KV_HEADS)), SEQS and CTX (muh's cuda backend: every
 * sequence has CTX tokens). Element type: float, or bf16 with -DMUH_BF16.
 *
 * Layouts (ours, as kernels/triton/prefix_prefill.py): q and out
 * (seqs, NUM_HEADS, HEAD_DIM); caches (blocks, BLOCK_SIZE, NUM_KV_HEADS,
 * HEAD_DIM).
 *
 * One block: each warp takes tokens in turn and computes q.k with its 32
 * lanes (HEAD_DIM / 32 elements each, shuffle sum); logits live in shared
 * memory; a block max and sum give the softmax; thread d accumulates out[d].
 *
 * Two sets of entry points:
 *   - for muh's cuda backend (pointers only, sizes as defines):
 *       paged_attention(q, k_cache, v_cache, out), grid (NUM_HEADS, SEQS,
 *       NPARTS), block THREADS, dynamic smem (PARTITION_SIZE or CTX) * 4.
 *       The block table is fixed in the kernel: block i of sequence s is
 *       physical block i * SEQS + s (the sequences' blocks interleaved, as
 *       an allocator that serves many sequences at once leaves them). v2
 *       combines in the same launch: each partition writes its partial to a
 *       module-scope scratch, and the last partition of a (sequence, head)
 *       to finish (a counter it resets) combines them.
 *       muh_reference(q, k_cache, v_cache, out): the reference, grid
 *       (NUM_HEADS, SEQS), block HEAD_DIM, double accumulation.
 *   - for the standalone harness (bench_cuda.cu), vLLM's own shape: an
 *     explicit block table and context lengths; v2 as two kernels,
 *     paged_attention_decode then paged_attention_reduce.
 */
#ifdef MUH_BF16
#include <cuda_bf16.h>
typedef __nv_bfloat16 muh_t;
#define MUH_LD(x) __bfloat162float(x)
#define MUH_ST(x) __float2bfloat16(x)
#else
typedef float muh_t;
#define MUH_LD(x) (x)
#define MUH_ST(x) (x)
#endif

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
#ifndef SEQS
#define SEQS 16
#endif
#ifndef CTX
#define CTX 2048
#endif

#if HEAD_DIM % 32 != 0 || THREADS % 32 != 0 || THREADS < HEAD_DIM || THREADS > 1024
#error "HEAD_DIM and THREADS must be multiples of 32, HEAD_DIM <= THREADS <= 1024"
#endif
#if PARTITION_SIZE < 0 || PARTITION_SIZE % BLOCK_SIZE != 0
#error "PARTITION_SIZE must be 0 or a positive multiple of BLOCK_SIZE"
#endif

#define MUH_NEG_INF __int_as_float((int)0xff800000)
#define MUH_WARPS (THREADS / 32)
#define MUH_PER_LANE (HEAD_DIM / 32)
#define MUH_ROW ((long long)NUM_KV_HEADS * HEAD_DIM) /* elements of one token in a cache */
#if PARTITION_SIZE > 0
#define MUH_NPARTS ((CTX + PARTITION_SIZE - 1) / PARTITION_SIZE)
#else
#define MUH_NPARTS 1
#endif

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

/* Physical block of logical block i of sequence seq: from the table row, or
 * interleaved when table is NULL. */
static __device__ __forceinline__ long long muh_pa_block(const int *table, int seq, int i)
{
	return table ? (long long)table[i] : (long long)i * SEQS + seq;
}

/* Attention of query (seq, head) over tokens [t0, t1): returns in *mx and
 * *sum the max logit and the sum of exp(logit - max), and for thread d <
 * HEAD_DIM the unnormalised sum over tokens of exp(logit - max) * v[d]. */
static __device__ float muh_pa_partition(const muh_t *__restrict__ q, const muh_t *__restrict__ k_cache,
					 const muh_t *__restrict__ v_cache, const int *table, int seq, int head,
					 int t0, int t1, float *logits, float *red, float *mx_out, float *sum_out)
{
	const int kvh = head / (NUM_HEADS / NUM_KV_HEADS);
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const float scale = rsqrtf((float)HEAD_DIM);
	float qv[MUH_PER_LANE];
	const muh_t *qp = q + ((long long)seq * NUM_HEADS + head) * HEAD_DIM;
#pragma unroll
	for (int i = 0; i < MUH_PER_LANE; i++)
		qv[i] = MUH_LD(qp[lane + 32 * i]) * scale;
	float mx = MUH_NEG_INF;
	for (int t = t0 + warp; t < t1; t += MUH_WARPS) {
		const long long blk = muh_pa_block(table, seq, t / BLOCK_SIZE);
		const muh_t *kp = k_cache + (blk * BLOCK_SIZE + t % BLOCK_SIZE) * MUH_ROW + kvh * HEAD_DIM;
		float s = 0.0f;
#pragma unroll
		for (int i = 0; i < MUH_PER_LANE; i++)
			s += qv[i] * MUH_LD(kp[lane + 32 * i]);
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
	float acc = 0.0f;
	if (threadIdx.x < HEAD_DIM) {
		const int d = threadIdx.x;
		for (int t = t0; t < t1; t++) {
			const long long blk = muh_pa_block(table, seq, t / BLOCK_SIZE);
			acc += logits[t - t0] * MUH_LD(v_cache[(blk * BLOCK_SIZE + t % BLOCK_SIZE) * MUH_ROW +
							     kvh * HEAD_DIM + d]);
		}
	}
	*mx_out = mx;
	*sum_out = sum;
	return acc;
}

/* ------------------------------------------------ muh's cuda backend */

#if PARTITION_SIZE > 0
__device__ float muh_pa_part[(long long)SEQS * NUM_HEADS * MUH_NPARTS * (HEAD_DIM + 2)];
__device__ unsigned int muh_pa_done[SEQS * NUM_HEADS];
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
	paged_attention(const muh_t *__restrict__ q, const muh_t *__restrict__ k_cache,
			const muh_t *__restrict__ v_cache, muh_t *__restrict__ out)
{
	extern __shared__ float logits[];
	__shared__ float red[MUH_WARPS];
	const int head = blockIdx.x, seq = blockIdx.y;
	float mx, sum;
#if PARTITION_SIZE > 0
	__shared__ bool last;
	const int part = blockIdx.z;
	const int t0 = part * PARTITION_SIZE, t1 = min(CTX, t0 + PARTITION_SIZE);
	const float acc = muh_pa_partition(q, k_cache, v_cache, nullptr, seq, head, t0, t1, logits, red, &mx, &sum);
	const long long sh = (long long)seq * NUM_HEADS + head;
	float *mine = muh_pa_part + (sh * MUH_NPARTS + part) * (HEAD_DIM + 2);
	if (threadIdx.x < HEAD_DIM)
		mine[threadIdx.x] = acc;
	if (threadIdx.x == 0) {
		mine[HEAD_DIM] = mx;
		mine[HEAD_DIM + 1] = sum;
	}
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		last = atomicAdd(&muh_pa_done[sh], 1u) == MUH_NPARTS - 1;
	__syncthreads();
	if (!last)
		return;
	__threadfence();
	const float *all = muh_pa_part + sh * MUH_NPARTS * (HEAD_DIM + 2);
	float gmx = MUH_NEG_INF;
	for (int p = 0; p < MUH_NPARTS; p++)
		gmx = fmaxf(gmx, __ldcg(all + p * (HEAD_DIM + 2) + HEAD_DIM));
	float total = 0.0f, o = 0.0f;
	for (int p = 0; p < MUH_NPARTS; p++) {
		const float *pp = all + p * (HEAD_DIM + 2);
		const float w = __expf(__ldcg(pp + HEAD_DIM) - gmx);
		total += w * __ldcg(pp + HEAD_DIM + 1);
		if (threadIdx.x < HEAD_DIM)
			o += w * __ldcg(pp + threadIdx.x);
	}
	if (threadIdx.x < HEAD_DIM)
		out[sh * HEAD_DIM + threadIdx.x] = MUH_ST(o / total);
	if (threadIdx.x == 0)
		muh_pa_done[sh] = 0u;
#else
	const float acc = muh_pa_partition(q, k_cache, v_cache, nullptr, seq, head, 0, CTX, logits, red, &mx, &sum);
	if (threadIdx.x < HEAD_DIM)
		out[((long long)seq * NUM_HEADS + head) * HEAD_DIM + threadIdx.x] = MUH_ST(acc / sum);
#endif
}

/* The reference: grid (NUM_HEADS, SEQS), block HEAD_DIM (exactly); logits
 * and weights computed in double, kept in shared memory as float. */
extern "C" __global__ void muh_reference(const muh_t *q, const muh_t *k_cache, const muh_t *v_cache, muh_t *out)
{
	__shared__ float lg[CTX];
	__shared__ double red[HEAD_DIM];
	const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
	const int kvh = head / (NUM_HEADS / NUM_KV_HEADS);
	const muh_t *qp = q + ((long long)seq * NUM_HEADS + head) * HEAD_DIM;
	double mx = MUH_NEG_INF;
	for (int t = d; t < CTX; t += blockDim.x) {
		const long long blk = (long long)(t / BLOCK_SIZE) * SEQS + seq;
		const muh_t *kp = k_cache + (blk * BLOCK_SIZE + t % BLOCK_SIZE) * MUH_ROW + kvh * HEAD_DIM;
		double s = 0.0;
		for (int i = 0; i < HEAD_DIM; i++)
			s += (double)MUH_LD(qp[i]) * MUH_LD(kp[i]);
		s /= sqrt((double)HEAD_DIM);
		lg[t] = (float)s;
		mx = s > mx ? s : mx;
	}
	red[d] = mx;
	__syncthreads();
	for (int i = 0; i < HEAD_DIM; i++)
		mx = red[i] > mx ? red[i] : mx;
	__syncthreads();
	double part = 0.0; /* exp once per token, into lg */
	for (int t = d; t < CTX; t += blockDim.x) {
		const double e = exp((double)lg[t] - mx);
		lg[t] = (float)e;
		part += e;
	}
	red[d] = part;
	__syncthreads();
	double sum = 0.0, acc = 0.0;
	for (int i = 0; i < HEAD_DIM; i++)
		sum += red[i];
	for (int t = 0; t < CTX; t++) {
		const long long blk = (long long)(t / BLOCK_SIZE) * SEQS + seq;
		acc += (double)lg[t] * MUH_LD(v_cache[(blk * BLOCK_SIZE + t % BLOCK_SIZE) * MUH_ROW + kvh * HEAD_DIM + d]);
	}
	out[((long long)seq * NUM_HEADS + head) * HEAD_DIM + d] = MUH_ST((float)(acc / sum));
}

/* ------------------------------------------------ the standalone harness */

/* v1 writes out directly (PARTITION_SIZE == 0); v2 writes its partition's
 * max logit, exp sum and normalised output for paged_attention_reduce.
 * grid (NUM_HEADS, seqs, nparts), block THREADS, smem (PARTITION_SIZE or max
 * context) * 4. */
extern "C" __global__ void __launch_bounds__(THREADS)
	paged_attention_decode(const muh_t *__restrict__ q, const muh_t *__restrict__ k_cache,
			       const muh_t *__restrict__ v_cache, const int *__restrict__ block_table,
			       const int *__restrict__ ctx_len, int max_blocks, muh_t *__restrict__ out,
			       float *__restrict__ part_max, float *__restrict__ part_sum,
			       float *__restrict__ part_out)
{
	extern __shared__ float logits[];
	__shared__ float red[MUH_WARPS];
	const int head = blockIdx.x, seq = blockIdx.y;
	const int len = ctx_len[seq];
#if PARTITION_SIZE > 0
	const int part = blockIdx.z;
	const int t0 = part * PARTITION_SIZE, t1 = min(len, t0 + PARTITION_SIZE);
#else
	const int t0 = 0, t1 = len;
#endif
	if (t0 >= len)
		return; /* past this sequence's context; the reduce skips it */
	float mx, sum;
	const float acc = muh_pa_partition(q, k_cache, v_cache, block_table + (long long)seq * max_blocks, seq, head,
					   t0, t1, logits, red, &mx, &sum);
	if (threadIdx.x >= HEAD_DIM)
		return;
	const int d = threadIdx.x;
#if PARTITION_SIZE > 0
	const long long slot = ((long long)seq * NUM_HEADS + head) * gridDim.z + part;
	part_out[slot * HEAD_DIM + d] = acc / sum;
	if (d == 0) {
		part_max[slot] = mx;
		part_sum[slot] = sum;
	}
#else
	out[((long long)seq * NUM_HEADS + head) * HEAD_DIM + d] = MUH_ST(acc / sum);
#endif
}

/* v2's second pass: combines the partitions of (head, seq). grid (NUM_HEADS,
 * seqs), block HEAD_DIM; nparts as launched for the first pass. */
extern "C" __global__ void paged_attention_reduce(const int *__restrict__ ctx_len, int nparts,
						  const float *__restrict__ part_max,
						  const float *__restrict__ part_sum,
						  const float *__restrict__ part_out, muh_t *__restrict__ out)
{
	const int head = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
	const int used = PARTITION_SIZE > 0 ? (ctx_len[seq] + PARTITION_SIZE - 1) / (PARTITION_SIZE > 0 ? PARTITION_SIZE : 1)
					   : 1;
	const long long base = ((long long)seq * NUM_HEADS + head) * nparts;
	float mx = MUH_NEG_INF;
	for (int p = 0; p < used; p++)
		mx = fmaxf(mx, part_max[base + p]);
	float total = 0.0f, acc = 0.0f;
	for (int p = 0; p < used; p++) {
		const float w = part_sum[base + p] * __expf(part_max[base + p] - mx);
		total += w;
		acc += w * part_out[(base + p) * HEAD_DIM + d];
	}
	out[((long long)seq * NUM_HEADS + head) * HEAD_DIM + d] = MUH_ST(acc / total);
}
