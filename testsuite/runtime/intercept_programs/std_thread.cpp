// C++ std::thread goes through pthread_create / pthread_join (from libstdc++).
// sync: the child writes x, y; main reads them after join() (no report).
// nosync: main reads them after an invisible flag, before join(): reported.
// mutex: std::mutex message passing (pthread_mutex_lock from libstdc++ inline code).
#include <mutex>
#include <thread>

#include "common.h"

static uint32_t x, y;
static int child_done;
static std::mutex mu;

int main(int argc, char **argv) {
  const char *mode = test_mode(argc, argv);
  std::thread t([&] {
    if (MODE_IS("mutex")) {
      ST(&x, 1);
      std::lock_guard<std::mutex> g(mu);
      ST(&y, 1);
    } else {
      ST(&x, 1);
      ST(&y, 1);
    }
    flag_set(&child_done);
  });
  if (MODE_IS("sync")) {
    t.join();
  } else {
    flag_wait(&child_done);
  }
  uint32_t ry, rx;
  if (MODE_IS("mutex")) {
    std::lock_guard<std::mutex> g(mu);
    ry = LD(&y);
  } else {
    ry = LD(&y);
  }
  rx = LD(&x); /* @load_x */
  CHECK(ry == 1 && rx == 1);
  if (t.joinable()) t.join();
  return 0;
}
