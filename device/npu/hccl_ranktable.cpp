// HcclCommInitClusterInfo: a communicator from a rank table file (CANN's JSON "rank table",
// version 1.0: status, server_count, server_list[].device[] with device_id and rank_id), as CANN's
// samples and frameworks start HCCL without a root info. The ranks of a table meet as those of one
// root info do: threads of this process in-process, the processes of an mpirun job over MPI.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "ember/core/error.h"
#include "ember/core/json.h"
#include "ember/device/npu/hccl_comms.h"
#include "ember/device/npu/runtime.h"

namespace ember {
namespace npu {

using namespace detail;

namespace {

constexpr size_t kMaxTable = size_t(1) << 20;  // a table of thousands of devices is well below

// An integer written as a JSON string ("rank_id": "3"), as rank tables do, or a number.
bool table_int(const json::Value* v, int64_t* out) {
  if (!v) return false;
  const std::string& s = v->kind == json::Value::String ? v->str : v->num;
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::stoll(s);
  return true;
}

// The table's rank count and the device of `rank`, or an error naming what is wrong.
HcclResult read_table(const char* fn, const std::string& path, uint32_t rank, uint32_t* n_ranks, int64_t* device,
                      std::string* text) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return fail(HCCL_E_PARA, std::string(fn) + ": cannot open the rank table '" + path + "'");
  std::ostringstream os;
  os << f.rdbuf();
  *text = os.str();
  if (text->size() > kMaxTable) return fail(HCCL_E_PARA, std::string(fn) + ": the rank table '" + path + "' is over 1 MiB");
  json::Value t;
  try {
    t = json::parse(*text, path, 4096);
  } catch (const Error& e) {
    return fail(HCCL_E_PARA, std::string(fn) + ": " + e.what());
  }
  auto bad = [&](const std::string& why) { return fail(HCCL_E_PARA, std::string(fn) + ": rank table '" + path + "': " + why); };
  const json::Value *status = t.find("status"), *version = t.find("version"), *servers = t.find("server_list");
  if (!status || status->str != "completed") return bad("\"status\" must be \"completed\"");
  if (!version || version->str != "1.0") return bad("\"version\" must be \"1.0\"");
  if (!servers || servers->kind != json::Value::Array || servers->items.empty()) return bad("\"server_list\" must be a non-empty list");
  int64_t count = 0;
  if (table_int(t.find("server_count"), &count) && count != static_cast<int64_t>(servers->items.size()))
    return bad("\"server_count\" is " + std::to_string(count) + " but \"server_list\" has " +
               std::to_string(servers->items.size()) + " servers");
  std::set<int64_t> ranks;
  *device = -1;
  for (const json::Value& s : servers->items) {
    const json::Value* devs = s.find("device");
    if (!devs || devs->kind != json::Value::Array) return bad("each server needs a \"device\" list");
    for (const json::Value& d : devs->items) {
      int64_t r = 0, id = 0;
      if (!table_int(d.find("rank_id"), &r) || !table_int(d.find("device_id"), &id))
        return bad("each device needs a \"device_id\" and a \"rank_id\" (non-negative integers)");
      if (!ranks.insert(r).second) return bad("rank_id " + std::to_string(r) + " appears twice");
      if (r == rank) *device = id;
    }
  }
  const int64_t n = static_cast<int64_t>(ranks.size());
  if (*ranks.rbegin() != n - 1) return bad("the rank_ids must be 0 .. " + std::to_string(n - 1));
  if (*device < 0) return bad("no device has rank_id " + std::to_string(rank));
  *n_ranks = static_cast<uint32_t>(n);
  return HCCL_SUCCESS;
}

}  // namespace

extern "C" HcclResult HcclCommInitClusterInfoConfig(const char* clusterInfo, uint32_t rank, HcclCommConfig* config,
                                                    HcclComm* comm) {
  const char* fn = "HcclCommInitClusterInfo";
  if (!clusterInfo || !comm) return fail(HCCL_E_PTR, std::string(fn) + ": clusterInfo and comm must not be null");
  if (check_runtime(fn, current_device()) != ACL_SUCCESS) return HCCL_E_RUNTIME;  // Note [Runtime lifecycle]
  uint32_t n = 0;
  int64_t dev = -1;
  std::string text;
  EMBER_HCCL_TRY(read_table(fn, clusterInfo, rank, &n, &dev, &text));
  if (dev != current_device())
    return fail(HCCL_E_PARA, std::string(fn) + ": rank " + std::to_string(rank) + " is device " + std::to_string(dev) +
                                 " in the rank table, but this thread's device is " + std::to_string(current_device()) +
                                 " (aclrtSetDevice it first)");
  // The ranks of one table meet as those of one root info: its key is the table's contents.
  HcclRootInfo root{};
  std::snprintf(root.internal, sizeof root.internal, "ember-hccl-ranktable %016zx %zu",
                std::hash<std::string>()(text), text.size());
  return init_comm(fn, n, root, false, rank, config, comm);
}

extern "C" HcclResult HcclCommInitClusterInfo(const char* clusterInfo, uint32_t rank, HcclComm* comm) {
  return HcclCommInitClusterInfoConfig(clusterInfo, rank, nullptr, comm);
}

}  // namespace npu
}  // namespace ember
