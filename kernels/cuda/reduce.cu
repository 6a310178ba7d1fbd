/*
 * reduce.cu — sum of N floats in one launch, with CUB-style policy knobs.
 *
 * Knobs (-D defines, each with a default so the file compiles alone):
 *   THREADS           threads per block (CUB: BLOCK_THREADS)
 *   ITEMS_PER_THREAD  items each thread loads per tile (CUB: ITEMS_PER_THREAD)
 *   VEC               items per vector load, 1, 2 or 4 (CUB: VECTOR_LOAD_LENGTH);
 *                     ITEMS_PER_THREAD % VEC == 0
 *   LOAD_MODIFIER     0 plain loads, 1 __ldg (CUB LOAD_LDG), 2 __ldcs (LOAD_CS)
 * Problem: N (define). CUB's policy for sm_90 float sums (Policy600 in
 * tuning_reduce.cuh of CUDA 13): 256 threads, 16 items, vector 4, LOAD_LDG —
 * `muh kb cccl` reads it.
 *
 * Shape of the computation: a tile is THREADS * ITEMS_PER_THREAD floats; each
 * block walks tiles grid-stride (thread t loads vectors t, t + THREADS, ...
 * of the tile: coalesced), reduces in registers, then across the block (warp
 * shuffles, then one warp over the warp sums: CUB's
 * BLOCK_REDUCE_WARP_REDUCTIONS), and writes its partial. The last block to
 * finish (a module-scope counter, zero when the module loads and reset by
 * that block) sums the partials and writes *out. One launch, deterministic,
 * no scratch buffers: the kernel ABI of muh's cuda backend (pointers only,
 * sizes as defines).
 *
 * Entry reduce_sum(in, out): grid = min(ceil_div(N, THREADS *
 * ITEMS_PER_THREAD), MUH_MAX_GRID) blocks (a larger grid writes nothing,
 * which the check catches), block THREADS, no dynamic shared memory. `in`
 * must be 16-byte aligned (cudaMalloc is). Reference muh_reference(in, out):
 * one block of 1024 threads, double accumulation.
 */
#ifndef THREADS
#define THREADS 256
#endif
#ifndef ITEMS_PER_THREAD
#define ITEMS_PER_THREAD 16
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef LOAD_MODIFIER
#define LOAD_MODIFIER 1
#endif
#ifndef N
#define N (1 << 24)
#endif
#define MUH_MAX_GRID 8192

#if ITEMS_PER_THREAD % VEC != 0
#error "ITEMS_PER_THREAD must be a multiple of VEC"
#endif
#if THREADS % 32 != 0 || THREADS > 1024
#error "THREADS must be a multiple of 32, at most 1024"
#endif

#if VEC == 4
typedef float4 muh_vec;
#define MUH_VSUM(v) ((v).x + (v).y + (v).z + (v).w)
#elif VEC == 2
typedef float2 muh_vec;
#define MUH_VSUM(v) ((v).x + (v).y)
#elif VEC == 1
typedef float muh_vec;
#define MUH_VSUM(v) (v)
#else
#error "VEC must be 1, 2 or 4"
#endif

static __device__ __forceinline__ muh_vec muh_load(const muh_vec *p)
{
#if LOAD_MODIFIER == 1
	return __ldg(p);
#elif LOAD_MODIFIER == 2
	return __ldcs(p);
#else
	return *p;
#endif
}

static __device__ __forceinline__ float muh_block_sum(float v, float *warp_sums)
{
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	if (lane == 0)
		warp_sums[warp] = v;
	__syncthreads();
	v = 0.0f;
	if (warp == 0) {
		if (lane < THREADS / 32)
			v = warp_sums[lane];
#pragma unroll
		for (int o = 16; o > 0; o >>= 1)
			v += __shfl_down_sync(0xffffffffu, v, o);
	}
	__syncthreads(); /* warp_sums may be reused */
	return v; /* valid in thread 0 */
}

__device__ float muh_partial[MUH_MAX_GRID];
__device__ unsigned int muh_done;

extern "C" __global__ void __launch_bounds__(THREADS) reduce_sum(const float *__restrict__ in, float *__restrict__ out)
{
	__shared__ float warp_sums[32];
	__shared__ bool last;
	if (gridDim.x > MUH_MAX_GRID)
		return;
	const long long n = (long long)(N);
	const long long tile = (long long)THREADS * ITEMS_PER_THREAD;
	const long long full_tiles = n / tile;
	float acc = 0.0f;
	for (long long t = blockIdx.x; t < full_tiles; t += gridDim.x) {
		const muh_vec *p = (const muh_vec *)(in + t * tile) + threadIdx.x;
		muh_vec v[ITEMS_PER_THREAD / VEC];
#pragma unroll
		for (int i = 0; i < ITEMS_PER_THREAD / VEC; i++)
			v[i] = muh_load(p + i * THREADS);
#pragma unroll
		for (int i = 0; i < ITEMS_PER_THREAD / VEC; i++)
			acc += MUH_VSUM(v[i]);
	}
	/* the ragged tail, scalar, by the block that would own the next tile */
	if (blockIdx.x == full_tiles % gridDim.x)
		for (long long i = full_tiles * tile + threadIdx.x; i < n; i += THREADS)
			acc += in[i];
	acc = muh_block_sum(acc, warp_sums);
	if (threadIdx.x == 0) {
		muh_partial[blockIdx.x] = acc;
		__threadfence();
		last = atomicAdd(&muh_done, 1u) == gridDim.x - 1;
	}
	__syncthreads();
	if (!last)
		return;
	float s = 0.0f;
	for (unsigned int i = threadIdx.x; i < gridDim.x; i += THREADS)
		s += __ldcg(muh_partial + i);
	s = muh_block_sum(s, warp_sums);
	if (threadIdx.x == 0) {
		*out = s;
		muh_done = 0u;
	}
}

/* The reference: one block (any size up to 1024, a power of two), double. */
extern "C" __global__ void muh_reference(const float *in, float *out)
{
	__shared__ double s[1024];
	double acc = 0.0;
	for (long long i = threadIdx.x; i < (long long)(N); i += blockDim.x)
		acc += in[i];
	s[threadIdx.x] = acc;
	__syncthreads();
	for (unsigned int w = blockDim.x / 2; w > 0; w >>= 1) {
		if (threadIdx.x < w)
			s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*out = (float)s[0];
}
