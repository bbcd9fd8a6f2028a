// Atomic file writes for save_safetensors (and so every checkpoint ember writes).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <set>

#include "ember/core/error.h"
#include "ember/nn/internal/atomic_file.h"

namespace ember {
namespace nn {
namespace {

// Note [Atomic saves]: each save writes a temporary of its own in the target's directory,
// "<name>.tmp.<pid>.<random>" (O_EXCL: threads and processes never share one), fsyncs it, renames
// it over the target and fsyncs the directory; a reader sees the old file or the new one, whole. A
// save killed midway leaves its temporary behind: the next save of that path removes every
// temporary of a process that no longer exists (or of this process, when no save of this process
// is writing it: a pid reused after a crash). Processes of another pid namespace sharing the
// directory are not told apart.
std::mutex g_tmp_mu;
std::set<std::string> g_tmp_writing;  // this process's temporaries being written

std::pair<std::string, std::string> split_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// Removes the temporaries of `name` in `dir` that no live save is writing.
void remove_stale_temporaries(const std::string& dir, const std::string& name) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  const std::string prefix = name + ".tmp.";
  const pid_t me = ::getpid();
  while (const dirent* e = ::readdir(d)) {
    const std::string entry = e->d_name;
    if (entry.compare(0, prefix.size(), prefix) != 0) continue;
    // "<pid>.<random>"
    const char* p = entry.c_str() + prefix.size();
    char* end = nullptr;
    const long pid = std::strtol(p, &end, 10);
    if (end == p || *end != '.' || pid <= 0) continue;
    const std::string full = dir + "/" + entry;
    bool stale;
    if (pid == me) {
      std::lock_guard<std::mutex> g(g_tmp_mu);
      stale = g_tmp_writing.count(full) == 0;
    } else {
      stale = ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    }
    if (stale) ::unlink(full.c_str());
  }
  ::closedir(d);
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// The temporary stops being ours (written, moved or removed).
void forget_temporary(const std::string& tmp) {
  std::lock_guard<std::mutex> g(g_tmp_mu);
  g_tmp_writing.erase(tmp);
}

// Creates a temporary file next to path, named after our pid and a random part (O_EXCL, retried
// on a collision); its descriptor, *tmp its name.
int open_temporary(const std::string& path, std::string* tmp) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ counter.fetch_add(1);
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "%012llx", static_cast<unsigned long long>(r & 0xffffffffffffULL));
    *tmp = path + ".tmp." + std::to_string(::getpid()) + "." + suffix;
    {
      std::lock_guard<std::mutex> g(g_tmp_mu);
      g_tmp_writing.insert(*tmp);
    }
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    const int err = errno;
    forget_temporary(*tmp);
    EMBER_CHECK_T(Error, err == EEXIST, "save_safetensors: cannot write '", *tmp, "': ", std::strerror(err));
  }
  EMBER_THROW(Error, "save_safetensors: no free temporary name next to '", path, "'");
}

// The directory's entries (a rename) reach the disk.
void sync_directory(const std::string& dir) {
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

void write_atomically(const std::string& path, const std::string& header, const std::vector<FileChunk>& chunks) {
  const auto [dir, name] = split_path(path);
  remove_stale_temporaries(dir, name);
  std::string tmp;
  int fd = open_temporary(path, &tmp);
  auto fail = [&](const char* what) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    forget_temporary(tmp);
    EMBER_THROW(Error, "save_safetensors: ", what, " '", tmp, "' failed: ", std::strerror(err),
                err == ENOSPC ? " (disk full)" : "");
  };
  const uint64_t n = header.size();
  if (!write_all(fd, reinterpret_cast<const char*>(&n), 8) || !write_all(fd, header.data(), header.size()))
    fail("writing");
  for (const FileChunk& c : chunks)
    if (c.size && !write_all(fd, static_cast<const char*>(c.data), c.size)) fail("writing");
  if (::fsync(fd) != 0) fail("fsync of");
  if (::close(fd) != 0) {
    fd = -1;
    fail("closing");
  }
  const bool moved = ::rename(tmp.c_str(), path.c_str()) == 0;
  const int err = errno;
  if (!moved) ::unlink(tmp.c_str());
  forget_temporary(tmp);
  EMBER_CHECK_T(Error, moved, "save_safetensors: cannot move '", tmp, "' to '", path, "': ", std::strerror(err));
  sync_directory(dir);  // the rename itself reaches the disk with the directory
}

}  // namespace nn
}  // namespace ember
