// Collectives between ranks: element types, the reduction kernels, call matching, and the local
// group (the ranks are threads of this process). The MPI group is in mpi.cpp.
#include "ember/device/comm/collective.h"

#include <algorithm>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "ember/core/error.h"
#include "ember/core/half.h"

namespace ember {
namespace comm {

size_t elem_size(Elem e) {
  switch (e) {
    case Elem::I8:
    case Elem::U8: return 1;
    case Elem::I16:
    case Elem::U16:
    case Elem::F16:
    case Elem::BF16: return 2;
    case Elem::I32:
    case Elem::U32:
    case Elem::F32: return 4;
    case Elem::I64:
    case Elem::U64:
    case Elem::F64: return 8;
  }
  return 0;
}

const char* elem_name(Elem e) {
  static const char* const names[] = {"int8",   "uint8",  "int16", "uint16", "int32", "uint32",
                                      "int64",  "uint64", "fp16",  "bf16",   "fp32",  "fp64"};
  auto i = static_cast<size_t>(e);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

const char* redop_name(RedOp op) {
  switch (op) {
    case RedOp::Sum: return "sum";
    case RedOp::Prod: return "prod";
    case RedOp::Max: return "max";
    case RedOp::Min: return "min";
  }
  return "?";
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::AllReduce: return "all_reduce";
    case Kind::Broadcast: return "broadcast";
    case Kind::AllGather: return "all_gather";
    case Kind::ReduceScatter: return "reduce_scatter";
    case Kind::Send: return "send";
    case Kind::Recv: return "recv";
    case Kind::Barrier: return "barrier";
    case Kind::Reduce: return "reduce";
    case Kind::Scatter: return "scatter";
    case Kind::AllToAll: return "all_to_all";
    case Kind::AllToAllV: return "all_to_all_v";
  }
  return "?";
}

std::string describe(const Call& c) {
  std::string s = std::string(c.name) + "(";
  if (c.kind == Kind::Barrier) return s + ")";
  if (c.kind == Kind::AllToAllV) return s + "counts per rank, " + elem_name(c.elem) + ")";
  s += "count " + std::to_string(c.count) + ", " + elem_name(c.elem);
  if (c.kind == Kind::AllReduce || c.kind == Kind::ReduceScatter || c.kind == Kind::Reduce)
    s += std::string(", ") + redop_name(c.op);
  if (c.kind == Kind::Broadcast || c.kind == Kind::Reduce || c.kind == Kind::Scatter)
    s += ", root " + std::to_string(c.peer);
  if (c.kind == Kind::Send) s += ", to rank " + std::to_string(c.peer);
  if (c.kind == Kind::Recv) s += ", from rank " + std::to_string(c.peer);
  return s + ")";
}

std::string format_seconds(std::chrono::milliseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", static_cast<double>(t.count()) / 1000.0);
  return buf;
}

std::string mismatch(const std::vector<Call>& calls) {
  auto same = [](const Call& a, const Call& b) {
    if (a.kind != b.kind) return false;
    if (a.kind == Kind::Barrier) return true;
    if (a.count != b.count || a.elem != b.elem) return false;
    if ((a.kind == Kind::AllReduce || a.kind == Kind::ReduceScatter || a.kind == Kind::Reduce) && a.op != b.op)
      return false;
    return (a.kind != Kind::Broadcast && a.kind != Kind::Reduce && a.kind != Kind::Scatter) || a.peer == b.peer;
  };
  bool ok = true;
  for (size_t k = 1; k < calls.size(); ++k) ok = ok && same(calls[0], calls[k]);
  if (!ok) {
    std::string s = "the ranks called different collectives:";
    for (size_t k = 0; k < calls.size(); ++k) s += " rank " + std::to_string(k) + ": " + describe(calls[k]) + ";";
    s.pop_back();
    return s + " (every rank must make the same collective calls in the same order)";
  }
  if (calls.empty() || calls[0].kind != Kind::AllToAllV) return "";
  for (size_t k = 0; k < calls.size(); ++k)
    for (size_t r = 0; r < calls.size(); ++r) {
      const Call &from = calls[k], &to = calls[r];
      if (!from.send_counts || !to.recv_counts || from.send_counts[r] == to.recv_counts[k]) continue;
      return std::string(from.name) + ": rank " + std::to_string(k) + " sends " + std::to_string(from.send_counts[r]) +
             " elements to rank " + std::to_string(r) + ", which expects " + std::to_string(to.recv_counts[k]) +
             " from it (sendCounts[" + std::to_string(r) + "] of rank " + std::to_string(k) + " must equal recvCounts[" +
             std::to_string(k) + "] of rank " + std::to_string(r) + ")";
    }
  return "";
}

// ---- reduction kernels ----
namespace {

template <class T>
struct Acc {  // the type a reduction runs in, and the conversions to it
  using type = T;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};
template <>
struct Acc<Half> {
  using type = float;
  static float load(Half v) { return static_cast<float>(v); }
  static Half store(float v) { return Half(v); }
};
template <>
struct Acc<BFloat16> {
  using type = float;
  static float load(BFloat16 v) { return static_cast<float>(v); }
  static BFloat16 store(float v) { return BFloat16(v); }
};

template <class A>
inline A combine(RedOp op, A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    using U = std::make_unsigned_t<A>;  // sums and products wrap, as on the device
    switch (op) {
      case RedOp::Sum: return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
      case RedOp::Prod: return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
      case RedOp::Max: return a < b ? b : a;
      case RedOp::Min: return b < a ? b : a;
    }
  } else {
    switch (op) {
      case RedOp::Sum: return a + b;
      case RedOp::Prod: return a * b;
      case RedOp::Max: return (b > a || b != b) ? b : a;  // NaN propagates
      case RedOp::Min: return (b < a || b != b) ? b : a;
    }
  }
  return a;
}

template <class T, RedOp op>
void reduce_block(T* dst, const void* const* srcs, int nsrc, size_t lo, size_t m) {
  using A = typename Acc<T>::type;
  A acc[1024];
  const T* s0 = static_cast<const T*>(srcs[0]) + lo;
  for (size_t j = 0; j < m; ++j) acc[j] = Acc<T>::load(s0[j]);
  for (int k = 1; k < nsrc; ++k) {
    const T* s = static_cast<const T*>(srcs[k]) + lo;
    for (size_t j = 0; j < m; ++j) acc[j] = combine<A>(op, acc[j], Acc<T>::load(s[j]));
  }
  for (size_t j = 0; j < m; ++j) dst[lo + j] = Acc<T>::store(acc[j]);
}

template <class T, RedOp op>
void reduce_as(void* dst, const void* const* srcs, int nsrc, size_t n) {
  // Blocks of 1024: every source's block is read before dst's block is written, so dst may be a
  // source; each inner loop is a plain vectorisable loop.
  for (size_t lo = 0; lo < n; lo += 1024)
    reduce_block<T, op>(static_cast<T*>(dst), srcs, nsrc, lo, std::min<size_t>(1024, n - lo));
}

template <class T>
void reduce_typed(RedOp op, void* dst, const void* const* srcs, int nsrc, size_t n) {
  switch (op) {
    case RedOp::Sum: return reduce_as<T, RedOp::Sum>(dst, srcs, nsrc, n);
    case RedOp::Prod: return reduce_as<T, RedOp::Prod>(dst, srcs, nsrc, n);
    case RedOp::Max: return reduce_as<T, RedOp::Max>(dst, srcs, nsrc, n);
    case RedOp::Min: return reduce_as<T, RedOp::Min>(dst, srcs, nsrc, n);
  }
}

}  // namespace

void reduce(Elem e, RedOp op, void* dst, const void* const* srcs, int nsrc, size_t n) {
  if (nsrc <= 0 || n == 0) return;
  switch (e) {
    case Elem::I8: return reduce_typed<int8_t>(op, dst, srcs, nsrc, n);
    case Elem::U8: return reduce_typed<uint8_t>(op, dst, srcs, nsrc, n);
    case Elem::I16: return reduce_typed<int16_t>(op, dst, srcs, nsrc, n);
    case Elem::U16: return reduce_typed<uint16_t>(op, dst, srcs, nsrc, n);
    case Elem::I32: return reduce_typed<int32_t>(op, dst, srcs, nsrc, n);
    case Elem::U32: return reduce_typed<uint32_t>(op, dst, srcs, nsrc, n);
    case Elem::I64: return reduce_typed<int64_t>(op, dst, srcs, nsrc, n);
    case Elem::U64: return reduce_typed<uint64_t>(op, dst, srcs, nsrc, n);
    case Elem::F16: return reduce_typed<Half>(op, dst, srcs, nsrc, n);
    case Elem::BF16: return reduce_typed<BFloat16>(op, dst, srcs, nsrc, n);
    case Elem::F32: return reduce_typed<float>(op, dst, srcs, nsrc, n);
    case Elem::F64: return reduce_typed<double>(op, dst, srcs, nsrc, n);
  }
}

// ---- the local group ----
namespace {

using Clock = std::chrono::steady_clock;

// The state the ranks of one local group share.
struct LocalGroup {
  explicit LocalGroup(int n)
      : n(n), calls(static_cast<size_t>(n)), here(static_cast<size_t>(n)), mail(static_cast<size_t>(n * n)) {}
  const int n;
  std::mutex mu;
  std::condition_variable cv;
  // The round in progress: each rank's call, who has reached the barrier, its generation.
  std::vector<Call> calls;
  std::vector<char> here;
  int arrived = 0;
  uint64_t gen = 0;
  std::string verdict;  // the round's mismatch, "" if the calls agree
  std::string broken;   // why the group is unusable ("" while it is fine)
  // Point-to-point: one mailbox per (source, destination), holding one posted send at a time.
  struct Mail {
    bool posted = false, done = false;
    Call call;
    std::string error;
  };
  std::vector<Mail> mail;
  Mail& box(int src, int dst) { return mail[static_cast<size_t>(src * n + dst)]; }

  std::string who_is_missing() const {
    std::string s;
    for (int k = 0; k < n; ++k)
      if (!here[static_cast<size_t>(k)]) s += (s.empty() ? "" : ", ") + std::to_string(k);
    return s;
  }
};

class LocalEndpoint final : public Transport {
 public:
  LocalEndpoint(std::shared_ptr<LocalGroup> g, int rank) : g_(std::move(g)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return g_->n; }
  std::string broken() const override {
    std::lock_guard<std::mutex> lk(g_->mu);
    return g_->broken;
  }

  void run(const Call& c) override {
    if (c.kind == Kind::Send) return send(c);
    if (c.kind == Kind::Recv) return recv(c);
    LocalGroup& g = *g_;
    const auto deadline = Clock::now() + timeout_;
    std::unique_lock<std::mutex> lk(g.mu);
    g.calls[static_cast<size_t>(rank_)] = c;
    barrier(lk, c, deadline, [&g] { g.verdict = mismatch(g.calls); });
    if (!g.verdict.empty()) throw Error(describe(c) + " on rank " + std::to_string(rank_) + ": " + g.verdict);
    lk.unlock();
    compute(c);  // reads the other ranks' calls: none changes before the barrier below
    lk.lock();
    barrier(lk, c, deadline, nullptr);
  }

 private:
  std::string where(const Call& c) const {
    return describe(c) + " on rank " + std::to_string(rank_) + " of " + std::to_string(g_->n);
  }
  [[noreturn]] void throw_broken(const Call& c) const {
    throw Error(where(c) + ": the communicator is broken: " + g_->broken);
  }

  // All ranks meet here; the last to come runs on_last (under the lock) before releasing the rest.
  template <class F>
  void barrier(std::unique_lock<std::mutex>& lk, const Call& c, Clock::time_point deadline, F on_last) {
    LocalGroup& g = *g_;
    if (!g.broken.empty()) throw_broken(c);
    const uint64_t gen = g.gen;
    g.here[static_cast<size_t>(rank_)] = 1;
    if (++g.arrived == g.n) {
      g.arrived = 0;
      std::fill(g.here.begin(), g.here.end(), 0);
      ++g.gen;
      if constexpr (!std::is_same<F, std::nullptr_t>::value) on_last();
      g.cv.notify_all();
      return;
    }
    while (g.gen == gen && g.broken.empty()) {
      if (g.cv.wait_until(lk, deadline) == std::cv_status::timeout && g.gen == gen && g.broken.empty()) {
        g.broken = where(c) + " timed out after " + format_seconds(timeout_) + " waiting for rank(s) " + g.who_is_missing();
        g.cv.notify_all();
      }
    }
    if (g.gen == gen) throw_broken(c);
  }

  template <class Pred>
  void wait_for(std::unique_lock<std::mutex>& lk, const Call& c, Clock::time_point deadline, const char* what,
                Pred ready) {
    LocalGroup& g = *g_;
    while (!ready() && g.broken.empty()) {
      if (g.cv.wait_until(lk, deadline) == std::cv_status::timeout && !ready() && g.broken.empty()) {
        g.broken = where(c) + " timed out after " + format_seconds(timeout_) + " waiting for rank " + std::to_string(c.peer) +
                   " to " + what;
        g.cv.notify_all();
      }
    }
    if (!ready()) throw_broken(c);
  }

  void send(const Call& c) {
    LocalGroup& g = *g_;
    const auto deadline = Clock::now() + timeout_;
    std::unique_lock<std::mutex> lk(g.mu);
    if (!g.broken.empty()) throw_broken(c);
    LocalGroup::Mail& m = g.box(rank_, c.peer);
    wait_for(lk, c, deadline, "take the previous send", [&m] { return !m.posted; });
    m.posted = true;
    m.done = false;
    m.error.clear();
    m.call = c;
    g.cv.notify_all();
    wait_for(lk, c, deadline, "post the matching recv", [&m] { return m.done; });
    m.posted = false;
    g.cv.notify_all();
    if (!m.error.empty()) throw Error(where(c) + ": " + m.error);
  }

  void recv(const Call& c) {
    LocalGroup& g = *g_;
    const auto deadline = Clock::now() + timeout_;
    std::unique_lock<std::mutex> lk(g.mu);
    if (!g.broken.empty()) throw_broken(c);
    LocalGroup::Mail& m = g.box(c.peer, rank_);
    wait_for(lk, c, deadline, "post the matching send", [&m] { return m.posted && !m.done; });
    const Call s = m.call;
    if (s.count != c.count || s.elem != c.elem) {
      m.error = "the send and the recv differ: rank " + std::to_string(c.peer) + ": " + describe(s) + "; rank " +
                std::to_string(rank_) + ": " + describe(c);
      m.done = true;
      g.cv.notify_all();
      throw Error(where(c) + ": " + m.error);
    }
    lk.unlock();  // the sender waits for done: its buffer stays put while this copies
    if (c.count) std::memcpy(c.recv, s.send, c.count * elem_size(c.elem));
    lk.lock();
    m.done = true;
    g.cv.notify_all();
  }

  void compute(const Call& c) {
    const LocalGroup& g = *g_;
    const size_t es = elem_size(c.elem), n = static_cast<size_t>(g.n), r = static_cast<size_t>(rank_);
    auto at = [](const void* p, size_t off) { return static_cast<const char*>(p) + off; };
    switch (c.kind) {
      case Kind::AllReduce: {
        // Each rank reduces its share of the elements and writes it to every rank's output.
        const size_t per = (c.count + n - 1) / n, lo = std::min<size_t>(c.count, r * per),
                     hi = std::min<size_t>(c.count, lo + per);
        if (lo == hi) return;
        std::vector<const void*> srcs(n);
        for (size_t k = 0; k < n; ++k) srcs[k] = at(g.calls[k].send, lo * es);
        char* mine = static_cast<char*>(c.recv) + lo * es;
        reduce(c.elem, c.op, mine, srcs.data(), g.n, hi - lo);
        for (size_t k = 0; k < n; ++k)
          if (k != r) std::memcpy(static_cast<char*>(g.calls[k].recv) + lo * es, mine, (hi - lo) * es);
        return;
      }
      case Kind::Broadcast:
        if (rank_ != c.peer && c.count) std::memcpy(c.recv, g.calls[static_cast<size_t>(c.peer)].recv, c.count * es);
        return;
      case Kind::AllGather:
        for (size_t k = 0; k < n && c.count; ++k)
          std::memmove(static_cast<char*>(g.calls[k].recv) + r * c.count * es, c.send, c.count * es);
        return;
      case Kind::ReduceScatter: {
        if (!c.count) return;
        std::vector<const void*> srcs(n);
        for (size_t k = 0; k < n; ++k) srcs[k] = at(g.calls[k].send, r * c.count * es);
        reduce(c.elem, c.op, c.recv, srcs.data(), g.n, c.count);
        return;
      }
      case Kind::Reduce: {  // the root reduces every rank's buffer
        if (rank_ != c.peer || !c.count) return;
        std::vector<const void*> srcs(n);
        for (size_t k = 0; k < n; ++k) srcs[k] = g.calls[k].send;
        reduce(c.elem, c.op, c.recv, srcs.data(), g.n, c.count);
        return;
      }
      case Kind::Scatter:  // each rank takes its block of the root's buffer
        if (c.count) std::memmove(c.recv, at(g.calls[static_cast<size_t>(c.peer)].send, r * c.count * es), c.count * es);
        return;
      case Kind::AllToAll:  // block r of rank k's buffer becomes block k of this rank's
        for (size_t k = 0; k < n && c.count; ++k)
          std::memcpy(static_cast<char*>(c.recv) + k * c.count * es, at(g.calls[k].send, r * c.count * es), c.count * es);
        return;
      case Kind::AllToAllV:
        for (size_t k = 0; k < n; ++k) {
          const Call& from = g.calls[k];
          const size_t bytes = c.recv_counts[k] * es;
          if (bytes)
            std::memcpy(static_cast<char*>(c.recv) + c.recv_displs[k] * es, at(from.send, from.send_displs[r] * es), bytes);
        }
        return;
      case Kind::Barrier:
      case Kind::Send:
      case Kind::Recv: return;
    }
  }

  std::shared_ptr<LocalGroup> g_;
  int rank_;
};

}  // namespace

std::vector<std::shared_ptr<Transport>> make_local_group(int n) {
  if (n < 1) throw ValueError("comm: a group needs at least one rank, got " + std::to_string(n));
  auto g = std::make_shared<LocalGroup>(n);
  std::vector<std::shared_ptr<Transport>> out;
  for (int k = 0; k < n; ++k) out.push_back(std::make_shared<LocalEndpoint>(g, k));
  return out;
}

}  // namespace comm
}  // namespace ember
