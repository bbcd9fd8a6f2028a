// Saves a checkpoint to one path over and over until killed (tests/test_serialize.cpp kills it with
// SIGKILL mid-write and checks that the next save leaves no temporary behind).
#include <cstdio>

#include <ember/ember.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: save_loop PATH\n");
    return 2;
  }
  using namespace ember;
  Tensor big = ones({8 << 20});  // 32 MiB: the kill lands inside a write most of the time
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) nn::save_safetensors({{"w", big}}, argv[1]);
}
