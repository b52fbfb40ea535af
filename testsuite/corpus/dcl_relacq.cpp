// robust: yes
// race: no
// reason: double-checked locking with an acquire fast-path load and a release store under the mutex
// C++: double-checked initialisation, std::atomic<T*> + std::mutex.
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
  Config *c = inst.load(std::memory_order_acquire);
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
  std::thread t1([&] { s1 = get()->a + get()->b; });
  std::thread t2([&] { s2 = get()->b; });
  t1.join();
  t2.join();
  std::printf("%d %d\n", s1, s2);
  delete inst.load();
  return 0;
}
