/*
 * reference.h — CPU references of the CUDA kernels in this folder, plain C
 * (compiled into the GPU harness bench_cuda.cu and, on any machine, into
 * tests/unit/test_cuda_ref.c).
 *
 *   muh_ref_sum            sum of n floats, in double (compensated)
 *   muh_ref_paged_decode   decode attention over a paged cache, in double;
 *                          bf16 values are passed already widened to float
 */
#ifndef MUH_CUDA_REFERENCE_H
#define MUH_CUDA_REFERENCE_H

#include <math.h>
#include <stddef.h>

/* Sum of x[0..n) with Neumaier compensation in double. */
static inline double muh_ref_sum(const float *x, size_t n)
{
	double s = 0.0, c = 0.0;
	for (size_t i = 0; i < n; i++) {
		double v = x[i], t = s + v;
		c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
		s = t;
	}
	return s + c;
}

/* out[seq][head][d] = softmax(q . k * scale) v, for each sequence over its
 * ctx_len[seq] cached tokens; layouts as in paged_attention.cu; kv head of
 * head h is h / (heads / kv_heads). logits is scratch of max ctx_len doubles. */
static inline void muh_ref_paged_decode(const float *q, const float *k_cache, const float *v_cache,
					const int *block_table, const int *ctx_len, int seqs, int max_blocks,
					int heads, int kv_heads, int head_dim, int block_size, float scale,
					double *logits, float *out)
{
	const size_t row = (size_t)kv_heads * head_dim;
	for (int s = 0; s < seqs; s++)
		for (int h = 0; h < heads; h++) {
			const int kvh = h / (heads / kv_heads);
			const float *qp = q + ((size_t)s * heads + h) * head_dim;
			double mx = -INFINITY, sum = 0.0;
			for (int t = 0; t < ctx_len[s]; t++) {
				size_t blk = (size_t)block_table[(size_t)s * max_blocks + t / block_size];
				const float *kp = k_cache + (blk * block_size + t % block_size) * row + (size_t)kvh * head_dim;
				double dot = 0.0;
				for (int d = 0; d < head_dim; d++)
					dot += (double)qp[d] * kp[d];
				logits[t] = dot * scale;
				if (logits[t] > mx)
					mx = logits[t];
			}
			for (int t = 0; t < ctx_len[s]; t++) {
				logits[t] = exp(logits[t] - mx);
				sum += logits[t];
			}
			float *op = out + ((size_t)s * heads + h) * head_dim;
			for (int d = 0; d < head_dim; d++) {
				double acc = 0.0;
				for (int t = 0; t < ctx_len[s]; t++) {
					size_t blk = (size_t)block_table[(size_t)s * max_blocks + t / block_size];
					acc += logits[t] * v_cache[(blk * block_size + t % block_size) * row +
								   (size_t)kvh * head_dim + d];
				}
				op[d] = (float)(acc / sum);
			}
		}
}

#endif
