// Compiled by check_op_decl_compile.sh once per CASE: case 0 must compile, every other case must
// fail at a static_assert of the op declaration (dispatch/op_decl.h), which is the point of it:
// a declaration whose schema and C++ signature disagree, or a kernel of another type, is a
// compile error, not a registration error found at run time.
#include "ember/dispatch/library.h"

using namespace ember;

namespace op {
#if CASE == 1  // an argument type that is not the schema's (float is double)
EMBER_DECLARE_OP(scale, Keep, "cf::scale(Tensor x, float a) -> Tensor", Tensor(const Tensor&, int64_t));
#elif CASE == 2  // one argument too few
EMBER_DECLARE_OP(scale, Keep, "cf::scale(Tensor x, float a) -> Tensor", Tensor(const Tensor&));
#elif CASE == 3  // a return that is not the schema's
EMBER_DECLARE_OP(scale, Keep, "cf::scale(Tensor x, float a) -> (Tensor, Tensor)", Tensor(const Tensor&, double));
#elif CASE == 4  // the identifier names another op than the schema
EMBER_DECLARE_OP(scale, Keep, "cf::shift(Tensor x, float a) -> Tensor", Tensor(const Tensor&, double));
#elif CASE == 5  // an optional where the schema has none
EMBER_DECLARE_OP(scale, Keep, "cf::scale(Tensor x, float a) -> Tensor", Tensor(const std::optional<Tensor>&, double));
#else  // cases 0 and 6: a correct declaration
EMBER_DECLARE_OP(scale, Keep, "cf::scale(Tensor x, float a=2.0) -> Tensor", Tensor(const Tensor&, double));
#endif
}  // namespace op

Tensor scale_cpu(const Tensor& x, double) { return x; }
Tensor scale_wrong(const Tensor& x, int64_t) { return x; }

EMBER_LIBRARY(cf, m) { m.def(op::scale()); }
#if CASE == 6  // a kernel whose type is not the declared signature
EMBER_LIBRARY_IMPL(cf, CPU, m) { m.impl(op::scale(), &scale_wrong); }
#elif CASE == 0
EMBER_LIBRARY_IMPL(cf, CPU, m) { m.impl(op::scale(), &scale_cpu); }
Tensor call_it(const Tensor& x) { return op::scale::call(x, 2.0); }
#endif
