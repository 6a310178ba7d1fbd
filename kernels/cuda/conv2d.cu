/*
 * conv2d.cu — a 2D convolution of a W x H image with an FW x FH filter,
 * written for muh's cuda backend (pointers only, sizes as defines), with the
 * seven knobs of the convolution family of the search benchmark's outside
 * spaces (issue 27): block and tile in x and y, the read-only cache, a
 * shared-memory tile, and padding of that tile's rows.
 *
 * out[y][x] = sum over fy < FH, fx < FW of in[y + fy][x + fx] * filt[fy][fx];
 * the input has (W + FW - 1) x (H + FH - 1) floats, so every output has its
 * whole window.
 *
 * Knobs (-D defines, each with a default so the file compiles alone):
 *   BX, BY   threads per block in x and y
 *   TX, TY   outputs per thread in x and y, a block apart (thread t of the
 *            block takes x = t, t + BX, ...: neighbouring threads read
 *            neighbouring pixels)
 *   RO       1: input and filter loads through the read-only cache (__ldg)
 *   SHMEM    1: the block first copies its input tile and halo,
 *            (BX * TX + FW - 1) x (BY * TY + FH - 1) floats, into shared
 *            memory and convolves from there
 *   PAD      1: each shared row is one float longer (the rows then start in
 *            different banks); only with SHMEM
 * Problem (defines): W, H, FW, FH.
 *
 * Entry conv2d(in, filt, out): grid (ceil_div(W, BX * TX), ceil_div(H, BY *
 * TY)), block (BX, BY). Reference muh_reference(in, filt, out): one thread
 * per output, the window summed in the same order.
 */
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 16
#endif
#ifndef TX
#define TX 1
#endif
#ifndef TY
#define TY 1
#endif
#ifndef RO
#define RO 0
#endif
#ifndef SHMEM
#define SHMEM 0
#endif
#ifndef PAD
#define PAD 0
#endif
#ifndef W
#define W 2048
#endif
#ifndef H
#define H 2048
#endif
#ifndef FW
#define FW 15
#endif
#ifndef FH
#define FH 15
#endif
#define IW (W + FW - 1) /* the input's row length */

#if BX * BY > 1024
#error "BX * BY must be at most 1024"
#endif

#if RO
#define MUH_LOAD(p) __ldg(p)
#else
#define MUH_LOAD(p) (*(p))
#endif

extern "C" __global__ void conv2d(const float *in, const float *filt, float *out)
{
	const int x0 = blockIdx.x * BX * TX, y0 = blockIdx.y * BY * TY;
	float acc[TY][TX];

#pragma unroll
	for (int j = 0; j < TY; j++)
#pragma unroll
		for (int i = 0; i < TX; i++)
			acc[j][i] = 0.0f;
#if SHMEM
#define SW (BX * TX + FW - 1 + PAD) /* a shared row, padded */
#define SH (BY * TY + FH - 1)
	__shared__ float tile[SH][SW];
	for (int r = threadIdx.y; r < SH; r += BY)
		for (int c = threadIdx.x; c < BX * TX + FW - 1; c += BX) {
			const int gy = y0 + r, gx = x0 + c;
			tile[r][c] = gy < H + FH - 1 && gx < IW ? MUH_LOAD(in + (size_t)gy * IW + gx) : 0.0f;
		}
	__syncthreads();
#endif
	for (int fy = 0; fy < FH; fy++)
		for (int fx = 0; fx < FW; fx++) {
			const float f = MUH_LOAD(filt + fy * FW + fx);
#pragma unroll
			for (int j = 0; j < TY; j++)
#pragma unroll
				for (int i = 0; i < TX; i++) {
					const int ly = threadIdx.y + j * BY, lx = threadIdx.x + i * BX;
#if SHMEM
					acc[j][i] += tile[ly + fy][lx + fx] * f;
#else
					const int gy = y0 + ly + fy, gx = x0 + lx + fx;
					if (gy < H + FH - 1 && gx < IW)
						acc[j][i] += MUH_LOAD(in + (size_t)gy * IW + gx) * f;
#endif
				}
		}
#pragma unroll
	for (int j = 0; j < TY; j++)
#pragma unroll
		for (int i = 0; i < TX; i++) {
			const int y = y0 + threadIdx.y + j * BY, x = x0 + threadIdx.x + i * BX;
			if (y < H && x < W)
				out[(size_t)y * W + x] = acc[j][i];
		}
}

extern "C" __global__ void muh_reference(const float *in, const float *filt, float *out)
{
	const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	float acc = 0.0f;

	if (x >= W || y >= H)
		return;
	for (int fy = 0; fy < FH; fy++)
		for (int fx = 0; fx < FW; fx++)
			acc += in[(size_t)(y + fy) * IW + x + fx] * filt[fy * FW + fx];
	out[(size_t)y * W + x] = acc;
}
