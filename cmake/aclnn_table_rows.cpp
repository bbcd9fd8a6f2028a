// Not compiled: preprocessed at configure time (cmake/cann_headers.cmake) into one line per row of
// the op tables, from which the rows' CANN headers (aclnnop/aclnn_<op>.h) are generated:
//   EMBER_ROW <form> <CANN name> <ember name>
// form: unary (aclnnAcl(self, out)), unary_inplace (also aclnnInplaceAcl(selfRef): the floating
// functions, kind F), binary (aclnnAcl(self, other, out)), binary_inplace (also
// aclnnInplaceAcl(selfRef, other): the rows marked I), reduce_dtype (aclnnAcl(self, dim,
// keepDim, dtype, out): sum-like, form S), reduce (aclnnAcl(self, dim, keepDim, out): form M).
#include "ember/core/tables/binary_ops.def"
#include "ember/core/tables/reduce_ops.def"
#include "ember/core/tables/unary_ops.def"

#define EMBER_FORM_UNARY_P unary
#define EMBER_FORM_UNARY_F unary_inplace
#define EMBER_FORM_REDUCE_S reduce_dtype
#define EMBER_FORM_REDUCE_M reduce
#define EMBER_ROW_OF(form, Acl, name) EMBER_ROW form Acl name
#define EMBER_UNARY_ROW(name, Acl, kind, ...) EMBER_ROW_OF(EMBER_FORM_UNARY_##kind, Acl, name)
#define EMBER_FORM_BINARY_N binary
#define EMBER_FORM_BINARY_I binary_inplace
#define EMBER_BINARY_ROW(name, Acl, kind, expr, saves, ga, gb, ref, lo, hi, exact, policy, inplace) \
  EMBER_ROW_OF(EMBER_FORM_BINARY_##inplace, Acl, name)
#define EMBER_REDUCE_ROW(name, Acl, form, ...) EMBER_ROW_OF(EMBER_FORM_REDUCE_##form, Acl, name)
EMBER_UNARY_OPS(EMBER_UNARY_ROW)
EMBER_BINARY_OPS(EMBER_BINARY_ROW)
EMBER_REDUCE_OPS(EMBER_REDUCE_ROW)
