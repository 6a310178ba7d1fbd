// online_tune.cpp — the same online tuning from C++: the kernel is a
// lambda, timed by the program itself and reported to libmuh's session
// through the public API alone (<muh/libmuh.h>).
//
//     c++ online_tune.cpp $(pkg-config --cflags --libs muh) -o online_tune_cpp
//     ./online_tune_cpp online.yaml [BUDGET]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <muh/libmuh.h>

int main(int argc, char **argv)
{
	const char *spec = argc > 1 ? argv[1] : "online.yaml";
	muh_session_options o = MUH_SESSION_OPTIONS_INIT;
	o.budget = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 12;
	muh_session *s = nullptr;
	if (muh_session_open(spec, &o, &s)) {
		std::fprintf(stderr, "online_tune_cpp: %s\n", muh_last_error());
		return 2;
	}
	const muh_space *sp = muh_session_space(s);
	auto value = [&](const std::vector<uint32_t> &cfg, const std::string &name) {
		long p = muh_space_param_index(sp, name.c_str());
		long long v = -1;
		if (p < 0 || muh_space_value_int(sp, cfg.data(), size_t(p), &v))
			return -1;
		return int(v);
	};
	std::vector<float> x(1 << 20);
	for (size_t i = 0; i < x.size(); i++)
		x[i] = float(i % 5) - 2.0f;
	// the kernel under tuning
	auto kernel = [&](int block, int unroll) {
		double total = 0;
		for (size_t b = 0; b < x.size(); b += size_t(block)) {
			size_t end = std::min(x.size(), b + size_t(block));
			double acc[8] = {0};
			size_t i = b;
			for (; i + size_t(unroll) <= end; i += size_t(unroll))
				for (int u = 0; u < unroll; u++)
					acc[u] += x[i + size_t(u)];
			for (; i < end; i++)
				acc[0] += x[i];
			for (double a : acc)
				total += a;
		}
		return total;
	};
	std::vector<uint32_t> cfg(muh_space_nparams(sp) + 1);
	int measured = 0;
	size_t n = 0;
	while (muh_session_next(s, cfg.data(), 1, &n) == MUH_OK && n == 1) {
		int block = value(cfg, "BLOCK"), unroll = value(cfg, "UNROLL");
		auto t0 = std::chrono::steady_clock::now();
		volatile double sum = kernel(block, unroll);
		(void)sum;
		double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		if (muh_session_record(s, cfg.data(), t, 0) != MUH_OK) {
			std::fprintf(stderr, "online_tune_cpp: %s\n", muh_last_error());
			muh_session_close(s);
			return 3;
		}
		std::printf("BLOCK=%d UNROLL=%d %.1f us\n", block, unroll, t * 1e6);
		measured++;
	}
	double best;
	if (muh_session_best(s, cfg.data(), &best) != MUH_OK) {
		std::fprintf(stderr, "online_tune_cpp: %s\n", muh_last_error());
		muh_session_close(s);
		return 1;
	}
	std::printf("best BLOCK=%d UNROLL=%d %.1f us (%d measured)\n", value(cfg, "BLOCK"), value(cfg, "UNROLL"),
		    best * 1e6, measured);
	muh_session_close(s);
	return 0;
}
