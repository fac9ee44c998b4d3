// compress_k: mean-pooled compressed keys (docs/spec.md §4.2). Window c covers keys [stride*c, stride*c + kernel);
// it exists once complete. The incremental form appends the windows new keys complete, as HF's FIFO does.
#include "reference/ops.hpp"

namespace salasim::ref {

namespace {
void fill_windows(Mat& ck, const Mat& k, int64_t from, int64_t to, int kernel, int stride, const Num& num) {
  for (int64_t c = from; c < to; ++c) {
    ck.row(Eigen::Index(c)) = k.middleRows(Eigen::Index(c * stride), kernel).colwise().sum() / double(kernel);
    if (num.peer())
      for (Eigen::Index j = 0; j < ck.cols(); ++j) ck(Eigen::Index(c), j) = round_bf16(ck(Eigen::Index(c), j));
  }
}
}  // namespace

Mat compress_k(const Mat& k, int64_t len, int kernel, int stride, const Num& num) {
  Mat ck(Eigen::Index(n_windows(len, kernel, stride)), k.cols());
  fill_windows(ck, k, 0, ck.rows(), kernel, stride, num);
  return ck;
}

void compress_k_append(Mat& ck, const Mat& k, int64_t len, int kernel, int stride, const Num& num) {
  const int64_t old_n = ck.rows(), new_n = n_windows(len, kernel, stride);
  if (new_n <= old_n) return;
  ck.conservativeResize(Eigen::Index(new_n), k.cols());
  fill_windows(ck, k, old_n, new_n, kernel, stride, num);
}

}  // namespace salasim::ref
