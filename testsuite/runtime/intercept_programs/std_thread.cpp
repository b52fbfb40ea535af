// C++ std::thread goes through pthread_create / pthread_join (from libstdc++).
// sync: the child writes x, y; main reads them after join() (no report).
// nosync: main reads them after an invisible flag, before join(): reported.
// mutex: std::mutex message passing (pthread_mutex_lock from libstdc++ inline code).
// condvar: std::condition_variable hand-off, main really blocked in wait() (libstdc++.so
//   calls pthread_cond_wait@GLIBC_2.3.2): the child writes x, y before notifying under the
//   mutex (no report). condvar_nosync: the child writes them after (reported).
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common.h"

static uint32_t x, y;
static int child_done;
static std::mutex mu;
static std::condition_variable cv;
static bool ready;
static int waiting;

int main(int argc, char **argv) {
  const char *mode = test_mode(argc, argv);
  std::thread t([&] {
    if (MODE_IS("condvar") || MODE_IS("condvar_nosync")) {
      flag_wait(&waiting);
      if (MODE_IS("condvar")) {
        ST(&x, 1);
        ST(&y, 1);
      }
      {
        std::lock_guard<std::mutex> g(mu);  // main is inside wait(): it released mu
        ready = true;
      }
      cv.notify_one();
      if (MODE_IS("condvar_nosync")) {
        ST(&x, 1);
        ST(&y, 1);
      }
    } else if (MODE_IS("mutex")) {
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
  } else if (!MODE_IS("condvar") && !MODE_IS("condvar_nosync")) {
    flag_wait(&child_done);
  }
  uint32_t ry, rx;
  if (MODE_IS("condvar") || MODE_IS("condvar_nosync")) {
    {
      std::unique_lock<std::mutex> lk(mu);
      flag_set(&waiting);
      cv.wait(lk, [] { return ready; });
    }
    flag_wait(&child_done);
    ry = LD(&y);
  } else if (MODE_IS("mutex")) {
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
