#include "ember/testing/op_info.h"

#include <map>
#include <mutex>

#include "ember/dispatch/dispatcher.h"

namespace ember {
namespace testing {
namespace {
struct Registry {
  std::mutex mu;
  std::map<std::string, OpInfo> infos;
};
Registry& registry() {
  static auto* r = new Registry();
  return *r;
}
}  // namespace

void register_op_info(OpInfo info) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  std::string name = info.name;
  r.infos[name] = std::move(info);
}

const OpInfo* find_op_info(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  auto it = r.infos.find(name);
  return it == r.infos.end() ? nullptr : &it->second;
}

std::vector<const OpInfo*> all_op_infos() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  std::vector<const OpInfo*> out;
  for (auto& kv : r.infos) out.push_back(&kv.second);
  return out;
}

OpInfoRegistrar::OpInfoRegistrar(const char* name, void (*fn)(OpInfo&)) {
  OpInfo info;
  info.name = name;
  try {
    fn(info);
  } catch (const std::exception& e) {
    Dispatcher::singleton().record_registration_error(name, std::string("EMBER_OP_INFO: ") + e.what());
    return;
  }
  register_op_info(std::move(info));
}

}  // namespace testing
}  // namespace ember
