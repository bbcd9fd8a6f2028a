// CANN's profiling API (acl/acl_prof.h) over ember's profiler: aclprofStart starts a
// profiler::Profile, aclprofStop stops it and writes its Chrome trace and tables into the
// directory aclprofInit named; msproftx's marks and ranges are host events of category
// "msproftx". CANN's order of calls is checked: Init, CreateConfig, Start, (msproftx), Stop,
// DestroyConfig, Finalize, each misuse an aclError with the reason in aclGetRecentErrMsg().
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/acl_prof.h"
#include "ember/device/npu/runtime.h"
#include "ember/device/profiler.h"

struct aclprofConfig {
  std::vector<uint32_t> devices;
  aclprofAicoreMetrics metrics = ACL_AICORE_NONE;
  uint64_t types = 0;
  bool same_as(const aclprofConfig& o) const {
    return devices == o.devices && metrics == o.metrics && types == o.types;
  }
};

namespace ember {
namespace npu {
namespace {
using namespace detail;

constexpr uint64_t kKnownTypes = ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_AICORE_METRICS | ACL_PROF_AICPU |
                                 ACL_PROF_L2CACHE | ACL_PROF_HCCL_TRACE | ACL_PROF_TRAINING_TRACE | ACL_PROF_MSPROFTX |
                                 ACL_PROF_RUNTIME_API | ACL_PROF_FWK_SCHEDULE_L0 | ACL_PROF_TASK_TIME_L0 |
                                 ACL_PROF_TASK_MEMORY | ACL_PROF_TASK_TIME_L2 | ACL_PROF_OP_ATTR |
                                 ACL_PROF_FWK_SCHEDULE_L1;
constexpr size_t kMaxPath = 4096;

struct Stamp {
  std::string message = "msproftx";
};

// One process-wide profiling state (CANN's is per process too).
struct ProfState {
  std::mutex mu;
  bool initialized = false;
  std::string dir;
  std::unique_ptr<profiler::Profile> profile;
  aclprofConfig running;  // the config aclprofStart was given (while profile runs)
  int written = 0;        // traces written, for their names
  std::set<const aclprofConfig*> configs;
  std::set<const Stamp*> stamps;
  struct Open {
    std::string name;
    int64_t start_ns;
    uint64_t track;
  };
  std::map<uint32_t, Open> ranges;  // aclprofRangeStart's, by id
  uint32_t next_range = 1;
  std::set<std::string, std::less<>> marks;  // aclprofMarkEx's messages: task names live forever
};
ProfState& state() {
  static auto* s = new ProfState();  // never destroyed: a profile may be stopped at exit
  return *s;
}
thread_local std::vector<std::pair<std::string, int64_t>> tls_pushed;  // aclprofPush's open ranges

bool mkdirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Stops the running profile and writes it (s.mu held); false with the reason pushed on failure.
bool stop_and_write(ProfState& s) {
  std::unique_ptr<profiler::Profile> p = std::move(s.profile);
  p->stop();
  const std::string base = s.dir + "/ember_prof_" + std::to_string(getpid()) + "_" + std::to_string(++s.written);
  try {
    p->export_chrome_trace(base + ".json");
    std::ofstream t(base + ".txt");
    t << "By host time:\n" << p->key_averages().table({"self_cpu_time_total", 0}) << "\nBy device time:\n"
      << p->key_averages().table({"self_device_time_total", 0});
    if (!t.good()) EMBER_THROW(Error, "cannot write '", base, ".txt'");
  } catch (const std::exception& e) {
    push_error(std::string("aclprofStop: ") + e.what());
    return false;
  }
  std::cerr << "ember: aclprofStop wrote " << base << ".json (the tables in " << base << ".txt)\n";
  return true;
}

// msproftx calls record only between aclprofStart and aclprofStop with ACL_PROF_MSPROFTX (s.mu held).
bool tx_on(ProfState& s) { return s.profile && (s.running.types & ACL_PROF_MSPROFTX); }

void record_range(const std::string& name, int64_t start_ns, int64_t end_ns, uint64_t track) {
  profiler::Event e;
  e.kind = profiler::Event::Range;
  e.category = "msproftx";
  e.name = name;
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  e.track = track;
  profiler::detail::record(std::move(e));
}

aclError stamp_error(const char* api, const void* stamp, ProfState& s) {
  if (!stamp) return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": stamp is null");
  if (!s.stamps.count(static_cast<const Stamp*>(stamp)))
    return fail(ACL_ERROR_INVALID_PARAM, std::string(api) + ": " + hex(stamp) +
                                             " is not a live stamp of aclprofCreateStamp (destroyed?)");
  return ACL_SUCCESS;
}

}  // namespace
}  // namespace npu
}  // namespace ember

using namespace ember;
using namespace ember::npu;
using namespace ember::npu::detail;

extern "C" aclError aclprofInit(const char* profilerResultPath, size_t length) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (!profilerResultPath) return fail(ACL_ERROR_INVALID_PARAM, "aclprofInit: profilerResultPath is null");
  if (length == 0 || length > kMaxPath)
    return fail(ACL_ERROR_INVALID_PARAM,
                "aclprofInit: length " + std::to_string(length) + " must be in [1, " + std::to_string(kMaxPath) + "]");
  if (s.initialized)
    return fail(ACL_ERROR_REPEAT_INITIALIZE, "aclprofInit: already initialized (for '" + s.dir +
                                                 "'); aclprofFinalize first");
  std::string dir(profilerResultPath, strnlen(profilerResultPath, length));
  if (dir.empty()) return fail(ACL_ERROR_INVALID_PARAM, "aclprofInit: the path is empty");
  if (!mkdirs(dir))
    return fail(ACL_ERROR_INVALID_PARAM, "aclprofInit: '" + dir + "' is not a directory and cannot be made (" +
                                             std::strerror(errno) + ")");
  s.dir = dir;
  s.initialized = true;
  return ACL_SUCCESS;
}

extern "C" aclError aclprofFinalize(void) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (!s.initialized) return fail(ACL_ERROR_UNINITIALIZE, "aclprofFinalize: aclprofInit was not called");
  const bool ok = !s.profile || stop_and_write(s);
  s.initialized = false;
  s.ranges.clear();
  return ok ? ACL_SUCCESS : ACL_ERROR_PROFILING_FAILURE;
}

extern "C" aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums,
                                              aclprofAicoreMetrics aicoreMetrics,
                                              const aclprofAicoreEvents* aicoreEvents, uint64_t dataTypeConfig) {
  const char* api = "aclprofCreateConfig";
  if (deviceNums > 0 && !deviceIdList) return fail<aclprofConfig*>(nullptr, std::string(api) + ": deviceIdList is null");
  if (deviceNums == 0 && !(dataTypeConfig & ACL_PROF_MSPROFTX))
    return fail<aclprofConfig*>(nullptr, std::string(api) + ": deviceNums is 0 (allowed only with ACL_PROF_MSPROFTX)");
  if (aicoreEvents) return fail<aclprofConfig*>(nullptr, std::string(api) + ": aicoreEvents must be NULL");
  if (dataTypeConfig & ~kKnownTypes) {
    std::ostringstream os;
    os << api << ": unknown dataTypeConfig bits 0x" << std::hex << (dataTypeConfig & ~kKnownTypes);
    return fail<aclprofConfig*>(nullptr, os.str());
  }
  const int metric = static_cast<int>(aicoreMetrics);
  if (!(metric >= ACL_AICORE_ARITHMETIC_UTILIZATION && metric <= ACL_AICORE_L2_CACHE) && metric != ACL_AICORE_NONE)
    return fail<aclprofConfig*>(nullptr, std::string(api) + ": aicoreMetrics " + std::to_string(metric) +
                                             " is not an aclprofAicoreMetrics");
  auto c = std::make_unique<aclprofConfig>();
  for (uint32_t i = 0; i < deviceNums; ++i) {
    uint32_t d = deviceIdList[i];
    if (static_cast<int64_t>(d) >= device_count())
      return fail<aclprofConfig*>(nullptr, std::string(api) + ": deviceIdList[" + std::to_string(i) + "] = " +
                                               std::to_string(d) + " is not a device (" + devices_note() + ")");
    for (uint32_t seen : c->devices)
      if (seen == d)
        return fail<aclprofConfig*>(nullptr, std::string(api) + ": device " + std::to_string(d) + " is listed twice");
    c->devices.push_back(d);
  }
  c->metrics = aicoreMetrics;
  c->types = dataTypeConfig;
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  s.configs.insert(c.get());
  return c.release();
}

extern "C" aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (!profilerConfig || !s.configs.erase(profilerConfig))
    return fail(ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig: " + hex(profilerConfig) +
                                             " is not a live aclprofConfig (destroyed twice?)");
  delete profilerConfig;
  return ACL_SUCCESS;
}

extern "C" aclError aclprofStart(const aclprofConfig* profilerConfig) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (!s.initialized) return fail(ACL_ERROR_UNINITIALIZE, "aclprofStart: call aclprofInit first");
  if (!profilerConfig || !s.configs.count(profilerConfig))
    return fail(ACL_ERROR_INVALID_PROFILING_CONFIG, "aclprofStart: " + hex(profilerConfig) +
                                                        " is not a live aclprofConfig of aclprofCreateConfig");
  if (s.profile)
    return fail(ACL_ERROR_PROF_ALREADY_RUN, "aclprofStart: a profile is already running (aclprofStop it first)");
  profiler::ProfileOptions o;
  o.record_shapes = true;
  o.memory = (profilerConfig->types & ACL_PROF_TASK_MEMORY) != 0;
  try {
    s.profile = std::make_unique<profiler::Profile>(o);
  } catch (const std::exception& e) {
    return fail(ACL_ERROR_PROF_ALREADY_RUN, std::string("aclprofStart: ") + e.what());
  }
  s.running = *profilerConfig;
  return ACL_SUCCESS;
}

extern "C" aclError aclprofStop(const aclprofConfig* profilerConfig) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (!s.profile) return fail(ACL_ERROR_PROF_NOT_RUN, "aclprofStop: no profile is running (aclprofStart first)");
  if (!profilerConfig || !s.configs.count(profilerConfig) || !profilerConfig->same_as(s.running))
    return fail(ACL_ERROR_INVALID_PROFILING_CONFIG,
                "aclprofStop: the config must be the one aclprofStart was given (or of the same contents)");
  s.ranges.clear();
  return stop_and_write(s) ? ACL_SUCCESS : ACL_ERROR_PROFILING_FAILURE;
}

extern "C" void* aclprofCreateStamp(void) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (!s.profile) return fail<void*>(nullptr, "aclprofCreateStamp: call it between aclprofStart and aclprofStop");
  Stamp* p = new Stamp();
  s.stamps.insert(p);
  return p;
}

extern "C" void aclprofDestroyStamp(void* stamp) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (stamp_error("aclprofDestroyStamp", stamp, s)) return;
  s.stamps.erase(static_cast<Stamp*>(stamp));
  delete static_cast<Stamp*>(stamp);
}

extern "C" aclError aclprofSetStampTraceMessage(void* stamp, const char* msg, uint32_t msgLen) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (aclError e = stamp_error("aclprofSetStampTraceMessage", stamp, s)) return e;
  if (!msg) return fail(ACL_ERROR_INVALID_PARAM, "aclprofSetStampTraceMessage: msg is null");
  static_cast<Stamp*>(stamp)->message.assign(msg, strnlen(msg, msgLen));
  return ACL_SUCCESS;
}

extern "C" aclError aclprofMark(void* stamp) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (aclError e = stamp_error("aclprofMark", stamp, s)) return e;
  const int64_t now = profiler::detail::now_ns();
  if (tx_on(s)) record_range(static_cast<Stamp*>(stamp)->message, now, now, profiler::detail::host_track());
  return ACL_SUCCESS;
}

extern "C" aclError aclprofMarkEx(const char* msg, size_t msgLen, aclrtStream stream) {
  if (aclError e = check_runtime_stream("aclprofMarkEx", stream)) return e;
  if (!msg) return fail(ACL_ERROR_INVALID_PARAM, "aclprofMarkEx: msg is null");
  if (msgLen > 127) return fail(ACL_ERROR_INVALID_PARAM, "aclprofMarkEx: msgLen " + std::to_string(msgLen) + " exceeds 127");
  StreamPtr st = resolve_stream(stream);
  if (!st) return fail(ACL_ERROR_INVALID_PARAM, "aclprofMarkEx: invalid stream");
  ProfState& s = state();
  const char* name;
  {
    std::lock_guard<std::mutex> g(s.mu);
    if (!tx_on(s)) return ACL_SUCCESS;
    name = s.marks.emplace(msg, strnlen(msg, msgLen)).first->c_str();
  }
  st->enqueue(Task(name, [] {}));  // recorded on the stream's track when it runs
  return ACL_SUCCESS;
}

extern "C" aclError aclprofPush(void* stamp) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (aclError e = stamp_error("aclprofPush", stamp, s)) return e;
  tls_pushed.emplace_back(static_cast<Stamp*>(stamp)->message, profiler::detail::now_ns());
  return ACL_SUCCESS;
}

extern "C" aclError aclprofPop(void) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (tls_pushed.empty()) return fail(ACL_ERROR_INVALID_PARAM, "aclprofPop: no aclprofPush of this thread is open");
  auto [name, start] = std::move(tls_pushed.back());
  tls_pushed.pop_back();
  if (tx_on(s)) record_range(name, start, profiler::detail::now_ns(), profiler::detail::host_track());
  return ACL_SUCCESS;
}

extern "C" aclError aclprofRangeStart(void* stamp, uint32_t* rangeId) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  if (aclError e = stamp_error("aclprofRangeStart", stamp, s)) return e;
  if (!rangeId) return fail(ACL_ERROR_INVALID_PARAM, "aclprofRangeStart: rangeId is null");
  if (!s.profile) return fail(ACL_ERROR_PROF_NOT_RUN, "aclprofRangeStart: no profile is running");
  *rangeId = s.next_range++;
  s.ranges[*rangeId] = {static_cast<Stamp*>(stamp)->message, profiler::detail::now_ns(), profiler::detail::host_track()};
  return ACL_SUCCESS;
}

extern "C" aclError aclprofRangeStop(uint32_t rangeId) {
  ProfState& s = state();
  std::lock_guard<std::mutex> g(s.mu);
  auto it = s.ranges.find(rangeId);
  if (it == s.ranges.end())
    return fail(ACL_ERROR_INVALID_PARAM, "aclprofRangeStop: range " + std::to_string(rangeId) +
                                             " is not open (stopped already, or not from aclprofRangeStart)");
  if (tx_on(s)) record_range(it->second.name, it->second.start_ns, profiler::detail::now_ns(), it->second.track);
  s.ranges.erase(it);
  return ACL_SUCCESS;
}

extern "C" uint64_t aclprofStr2Id(const char* message) {
  if (!message) return UINT64_MAX;
  uint64_t h = 1469598103934665603ull;
  for (const char* p = message; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  return h == UINT64_MAX ? h - 1 : h;
}
