// K-Means in C++ for the engine benchmark's "Python + C++" variant: the driver stays in Python;
// assigning points to centroids and merging partial sums run natively. Points are 500 float64s
// packed in bytes (as workloads.py makes them). Each task reads the iteration's centroids from
// the file named by the property kmeans.centroids_file (the driver rewrites it per iteration).
#include <spindle/api.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

using namespace spindle;

namespace {
constexpr size_t kDims = 500;
using Partial = std::pair<Bytes, int64_t>;  // (sum of the points as bytes, how many)
}  // namespace

class KMeansAssign : public IPartitionFunction<Bytes, std::pair<int64_t, Partial>> {
 public:
  void before(Context& ctx) override {
    std::ifstream in(ctx.prop("kmeans.centroids_file"), std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (raw.empty() || raw.size() % (kDims * sizeof(double))) throw std::runtime_error("bad centroids file");
    centroids_.resize(raw.size() / sizeof(double));
    std::memcpy(centroids_.data(), raw.data(), raw.size());
  }

  std::vector<std::pair<int64_t, Partial>> call(std::vector<Bytes>& points, Context&) override {
    size_t k = centroids_.size() / kDims;
    std::vector<std::vector<double>> sums(k, std::vector<double>(kDims, 0.0));
    std::vector<int64_t> counts(k, 0);
    for (const auto& p : points) {
      const double* x = reinterpret_cast<const double*>(p.data.data());
      size_t best = 0;
      double best_d = std::numeric_limits<double>::max();
      for (size_t c = 0; c < k; c += 4) {  // four centroids at a time: four independent sums
        const double* y0 = &centroids_[c * kDims];
        const double* y1 = c + 1 < k ? y0 + kDims : y0;
        const double* y2 = c + 2 < k ? y0 + 2 * kDims : y0;
        const double* y3 = c + 3 < k ? y0 + 3 * kDims : y0;
        double d0 = 0, d1 = 0, d2 = 0, d3 = 0;
#pragma omp simd reduction(+ : d0, d1, d2, d3)
        for (size_t i = 0; i < kDims; ++i) {
          double t0 = x[i] - y0[i], t1 = x[i] - y1[i], t2 = x[i] - y2[i], t3 = x[i] - y3[i];
          d0 += t0 * t0;
          d1 += t1 * t1;
          d2 += t2 * t2;
          d3 += t3 * t3;
        }
        const double d[4] = {d0, d1, d2, d3};
        for (size_t j = 0; j < 4 && c + j < k; ++j)
          if (d[j] < best_d) {
            best_d = d[j];
            best = c + j;
          }
      }
      for (size_t i = 0; i < kDims; ++i) sums[best][i] += x[i];
      ++counts[best];
    }
    std::vector<std::pair<int64_t, Partial>> out;
    for (size_t c = 0; c < k; ++c) {
      if (!counts[c]) continue;
      std::string bytes(reinterpret_cast<const char*>(sums[c].data()), kDims * sizeof(double));
      out.push_back({int64_t(c), {Bytes{std::move(bytes)}, counts[c]}});
    }
    return out;
  }

 private:
  std::vector<double> centroids_;
};

class KMeansMerge : public IFunction2<Partial, Partial, Partial> {
 public:
  Partial call(Partial& a, Partial& b, Context&) override {
    std::string sum = a.first.data;
    double* s = reinterpret_cast<double*>(sum.data());
    const double* t = reinterpret_cast<const double*>(b.first.data.data());
    for (size_t i = 0; i < kDims; ++i) s[i] += t[i];
    return {Bytes{std::move(sum)}, a.second + b.second};
  }
};

SPINDLE_EXPORT(KMeansAssign)
SPINDLE_EXPORT(KMeansMerge)
