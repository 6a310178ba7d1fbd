/*
 * dedisp.cu — incoherent dedispersion, the radio-astronomy kernel whose
 * six-param space (block, tile and tile stride in two dimensions; 11,130
 * valid configurations) is one of the two families of the search
 * benchmark's outside spaces (issue 27). muh's own kernel, written for
 * muh's cuda backend: pointers only, sizes as defines.
 *
 * The computation: for every dispersion measure dm (NDM of them) and every
 * output sample s (NS), out[dm][s] = sum over the NCH channels ch of
 * in[ch][s + shift(dm, ch)], where shift(dm, ch) = (int)((float)dm *
 * delay[ch]): each channel's signal arrives later by a delay that grows with
 * the dispersion measure. A channel row holds SPC = NS + MAXSHIFT samples;
 * the delays must keep dm * delay below MAXSHIFT (the spec draws them in
 * 0..MAXSHIFT / NDM).
 *
 * Knobs (-D defines, each with a default so the file compiles alone):
 *   BX, BY   threads per block in x (samples) and y (dispersion measures)
 *   TX, TY   outputs per thread in x and y (a tile of TX x TY accumulators)
 *   SX, SY   1: a tile's outputs lie a block apart (thread t of the block
 *            takes t, t + BX, ...: neighbouring threads read neighbouring
 *            samples); 0: they are consecutive (thread t takes t * TX ...)
 * Problem (defines): NS, NDM, NCH, MAXSHIFT.
 *
 * Entry dedisp(in, delay, out): grid (ceil_div(NS, BX * TX), ceil_div(NDM,
 * BY * TY)), block (BX, BY). Reference muh_reference(in, delay, out): one
 * thread per output, the channels summed in the same order, so a correct
 * variant matches it bit for bit (float adds in the same order; the shift is
 * one float multiply and a truncation in both).
 */
#ifndef BX
#define BX 16
#endif
#ifndef BY
#define BY 32
#endif
#ifndef TX
#define TX 1
#endif
#ifndef TY
#define TY 1
#endif
#ifndef SX
#define SX 0
#endif
#ifndef SY
#define SY 0
#endif
#ifndef NS
#define NS 8192
#endif
#ifndef NDM
#define NDM 512
#endif
#ifndef NCH
#define NCH 256
#endif
#ifndef MAXSHIFT
#define MAXSHIFT 128
#endif
#define SPC (NS + MAXSHIFT)

#if BX * BY > 1024
#error "BX * BY must be at most 1024"
#endif

/* The first output of this thread's tile and the distance between its
 * outputs, in one dimension: a stride of the block (S == 1) or of one. */
#define MUH_FIRST(bid, tid, B, T, S) ((S) ? (bid) * (B) * (T) + (tid) : ((bid) * (B) + (tid)) * (T))
#define MUH_STEP(B, S) ((S) ? (B) : 1)

extern "C" __global__ void dedisp(const float *in, const float *delay, float *out)
{
	const int s0 = MUH_FIRST((int)blockIdx.x, (int)threadIdx.x, BX, TX, SX);
	const int d0 = MUH_FIRST((int)blockIdx.y, (int)threadIdx.y, BY, TY, SY);
	float acc[TY][TX];

#pragma unroll
	for (int j = 0; j < TY; j++)
#pragma unroll
		for (int i = 0; i < TX; i++)
			acc[j][i] = 0.0f;
	for (int ch = 0; ch < NCH; ch++) {
		const float *row = in + (size_t)ch * SPC;
		const float d = delay[ch];
#pragma unroll
		for (int j = 0; j < TY; j++) {
			const int dm = d0 + j * MUH_STEP(BY, SY);
			if (dm >= NDM)
				continue;
			const int shift = (int)((float)dm * d);
#pragma unroll
			for (int i = 0; i < TX; i++) {
				const int s = s0 + i * MUH_STEP(BX, SX);
				if (s < NS)
					acc[j][i] += row[s + shift];
			}
		}
	}
#pragma unroll
	for (int j = 0; j < TY; j++) {
		const int dm = d0 + j * MUH_STEP(BY, SY);
#pragma unroll
		for (int i = 0; i < TX; i++) {
			const int s = s0 + i * MUH_STEP(BX, SX);
			if (dm < NDM && s < NS)
				out[(size_t)dm * NS + s] = acc[j][i];
		}
	}
}

extern "C" __global__ void muh_reference(const float *in, const float *delay, float *out)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x, dm = blockIdx.y;
	float acc = 0.0f;

	if (s >= NS || dm >= NDM)
		return;
	for (int ch = 0; ch < NCH; ch++)
		acc += in[(size_t)ch * SPC + s + (int)((float)dm * delay[ch])];
	out[(size_t)dm * NS + s] = acc;
}
