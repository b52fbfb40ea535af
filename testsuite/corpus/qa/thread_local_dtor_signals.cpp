// robust: yes
// race: no
// reason: a detached std::thread's thread_local Guard destructor, run at thread exit, writes the plain result and stores done = true with release; main spins on done with acquire (a recognised wait), then reads the result: release/acquire orders it. The destructor runs before the runtime finishes the thread (intercept_tsd.c), so the waiting main is woken by a thread the scheduler still runs
// C++: main waits for a flag that a detached thread's thread_local destructor sets.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic<bool> done{false};
static int result;

struct Guard {
  int value = 0;
  ~Guard() {
    result = value;
    done.store(true, std::memory_order_release);
  }
};

static thread_local Guard guard;

int main() {
  std::thread([] { guard.value = 17; }).detach();
  while (!done.load(std::memory_order_acquire)) {
  }
  std::printf("%d\n", result);
  return 0;
}
