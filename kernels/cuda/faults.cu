/*
 * faults.cu — a kernel that faults on purpose on the GPU, one fault per value
 * of FAULT (specs/faults_cuda.yaml sets the geometry):
 *   0 none (y = 2x)          1 illegal address (write through a wild pointer)
 *   2 infinite loop          3 __trap() (the context is lost)
 *   4 block of 2048 threads (beyond the device: invalid, never launched)
 *   5 dynamic shared memory beyond the opt-in limit (invalid)
 *   6 100 KB of dynamic shared memory: > 48 KB, needs the opt-in attribute; ok
 */
#ifndef FAULT
#define FAULT 0
#endif
#ifndef LEN
#define LEN (1 << 20)
#endif

extern __shared__ float dyn[];

extern "C" __global__ void fault(const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (FAULT == 1 && i == 0)
		*(volatile float *)(0x10ull) = 1.0f;
	if (FAULT == 2) {
		volatile int spin = 1;
		while (spin)
			;
	}
	if (FAULT == 3 && i == 0)
		__trap();
	if (FAULT == 6) {
		dyn[threadIdx.x] = x[i];
		__syncthreads();
	}
	if (i < LEN)
		y[i] = 2.0f * x[i];
}

extern "C" __global__ void muh_reference(const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < LEN)
		y[i] = 2.0f * x[i];
}
