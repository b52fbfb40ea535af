// robust: yes
// race: yes
// reason: the fast path loads the pointer relaxed: a thread that sees it there uses the object without happens-before from its construction (a race on its fields); a stale null only sends a thread to the lock, an SC order
// C++: broken double-checked initialisation (relaxed fast path, release store).
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

struct Config {
  int a = 1, b = 2;
};
static std::atomic<Config *> inst{nullptr};
static std::mutex m;

static Config *get() {
  Config *c = inst.load(std::memory_order_relaxed);
  if (!c) {
    std::lock_guard<std::mutex> g(m);
    c = inst.load(std::memory_order_relaxed);
    if (!c) {
      c = new Config;
      inst.store(c, std::memory_order_release);
    }
  }
  return c;
}

int main() {
  int s1 = 0, s2 = 0;
  std::thread t1([&] { s1 = get()->a; });
  std::thread t2([&] { s2 = get()->b; });
  t1.join();
  t2.join();
  std::printf("%d %d\n", s1, s2);
  delete inst.load();
  return 0;
}
