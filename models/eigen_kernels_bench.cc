// Viterbi's max-plus step and v += t*u as plain loops (with the AVX2 clone
// the library uses) and as Eigen maps: why the library's kernels do not use
// Eigen (docs/design.md; the figures are in
// docs/experiments.md#eigen-against-the-plain-kernels). Checks first that the
// two forward passes give the same values, bit for bit. Nothing else uses
// Eigen; ./bazelw installs it for this target:
//   ./bazelw run //models:eigen_kernels_bench -- --benchmark_repetitions=5

#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <cstdio>
#include <random>
#include <vector>
#define CLONES __attribute__((target_clones("avx2", "default")))

using RowMajor =
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

CLONES void ForwardPlain(int T, int L, const double* trans, const double* unary,
                         double* delta) {
  for (int t = 1; t < T; ++t) {
    const double* previous = delta + (t - 1) * L;
    double* __restrict current = delta + t * L;
    for (int y = 0; y < L; ++y) current[y] = previous[0] + trans[y];
    for (int p = 1; p < L; ++p) {
      const double from_p = previous[p];
      const double* row = trans + p * L;
      for (int y = 0; y < L; ++y) {
        const double c = from_p + row[y];
        current[y] = current[y] < c ? c : current[y];
      }
    }
    for (int y = 0; y < L; ++y) current[y] += unary[t * L + y];
  }
}

CLONES void ForwardEigen(int T, int L, const double* trans, const double* unary,
                         double* delta) {
  Eigen::Map<const RowMajor> transition(trans, L, L);
  for (int t = 1; t < T; ++t) {
    Eigen::Map<const Eigen::VectorXd> previous(delta + (t - 1) * L, L);
    Eigen::Map<Eigen::RowVectorXd> current(delta + t * L, L);
    current = (transition.colwise() + previous).colwise().maxCoeff() +
              Eigen::Map<const Eigen::RowVectorXd>(unary + t * L, L);
  }
}

CLONES void AxpyPlain(const double* u, double t, int64_t n, double* v) {
  for (int64_t k = 0; k < n; ++k) v[k] += t * u[k];
}
CLONES void AxpyEigen(const double* u, double t, int64_t n, double* v) {
  Eigen::Map<Eigen::VectorXd>(v, n) +=
      t * Eigen::Map<const Eigen::VectorXd>(u, n);
}

template <void (*F)(int, int, const double*, const double*, double*)>
void BM_Forward(benchmark::State& state) {
  const int L = state.range(0), T = 24;
  std::mt19937 rng(1);
  std::normal_distribution<double> g;
  std::vector<double> trans(L * L), unary(T * L), delta(T * L);
  for (double& x : trans) x = g(rng);
  for (double& x : unary) x = g(rng);
  for (auto _ : state) {
    for (int y = 0; y < L; ++y) delta[y] = unary[y];
    F(T, L, trans.data(), unary.data(), delta.data());
    benchmark::DoNotOptimize(delta.data());
  }
}
template <void (*F)(const double*, double, int64_t, double*)>
void BM_Axpy(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<double> u(n, 1.5), v(n, 0.5);
  for (auto _ : state) {
    F(u.data(), 1e-9, n, v.data());
    benchmark::DoNotOptimize(v.data());
  }
}
BENCHMARK_TEMPLATE(BM_Forward, ForwardPlain)->Arg(22)->Arg(45)->Arg(9);
BENCHMARK_TEMPLATE(BM_Forward, ForwardEigen)->Arg(22)->Arg(45)->Arg(9);
BENCHMARK_TEMPLATE(BM_Axpy, AxpyPlain)->Arg(4096)->Arg(1 << 22);
BENCHMARK_TEMPLATE(BM_Axpy, AxpyEigen)->Arg(4096)->Arg(1 << 22);

// The two must give the same values, bit for bit.
int main(int argc, char** argv) {
  for (int L : {9, 22, 45}) {
    const int T = 24;
    std::mt19937 rng(L);
    std::normal_distribution<double> g;
    std::vector<double> trans(L * L), unary(T * L), a(T * L), b(T * L);
    for (double& x : trans) x = g(rng);
    for (double& x : unary) x = g(rng);
    for (int y = 0; y < L; ++y) a[y] = b[y] = unary[y];
    ForwardPlain(T, L, trans.data(), unary.data(), a.data());
    ForwardEigen(T, L, trans.data(), unary.data(), b.data());
    if (a != b) {
      printf("L=%d: values differ\n", L);
      return 1;
    }
  }
  printf("forward: identical values\n");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
}
