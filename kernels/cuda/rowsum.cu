/*
 * rowsum.cu — out[r] = sum of row r of an M x N float matrix, one block per
 * row, for muh's cuda backend (docs/evaluator.md, "cuda").
 *
 * Params (defines): BLOCK threads per block, ITEMS loads in flight per thread
 * per iteration (coalesced: thread t loads t, t+BLOCK, ... within a tile of
 * BLOCK*ITEMS). Problem: M, N. The defaults (BLOCK 128, ITEMS 1) are not the
 * best on an H200. muh_reference is the plain serial reference (one thread
 * per row, double accumulation).
 */
#ifndef M
#define M 16384
#endif
#ifndef N
#define N 16384
#endif
#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef ITEMS
#define ITEMS 1
#endif

extern "C" __global__ void rowsum(const float *x, float *out)
{
	__shared__ float s[BLOCK];
	const float *row = x + (size_t)blockIdx.x * N;
	float acc = 0.0f;
	for (int base = threadIdx.x; base < N; base += BLOCK * ITEMS) {
#pragma unroll
		for (int k = 0; k < ITEMS; k++) {
			int j = base + k * BLOCK;
			if (j < N)
				acc += row[j];
		}
	}
	s[threadIdx.x] = acc;
	__syncthreads();
	for (int w = BLOCK / 2; w > 0; w >>= 1) {
		if (threadIdx.x < w)
			s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		out[blockIdx.x] = s[0];
}

extern "C" __global__ void muh_reference(const float *x, float *out)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= M)
		return;
	double acc = 0.0;
	for (int j = 0; j < N; j++)
		acc += x[(size_t)r * N + j];
	out[r] = (float)acc;
}
