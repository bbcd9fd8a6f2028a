#include "ember/autograd/op_spec.h"

namespace ember {
namespace autograd {
namespace detail {

void mark_views(const Tensor& base, const Tensor& out) {
  if (!out.defined()) return;
  AutogradMeta* bm = get_meta(base);
  Tensor root = bm && bm->is_view ? bm->view_base : base;
  AutogradMeta& om = materialize_meta(out);
  om.is_view = true;
  om.view_base = root;
}

}  // namespace detail
}  // namespace autograd
}  // namespace ember
