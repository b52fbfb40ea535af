// robust: yes
// race: no
// reason: double-checked locking: the instance pointer is published with a release store after the object is built, under a mutex, and read with an acquire load on the fast path (a stale null only takes the mutex, whose acquisition orders the second, relaxed read after the store); the object's plain fields are read after the acquire load that reads the pointer
// C++ template singleton with double-checked locking over std::atomic<T*>, heap object, four threads.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

struct Config {
  int level;
  long seed;
  Config() : level(3), seed(42) {}
};

template <typename T> class Lazy {
  std::atomic<T *> ptr_{nullptr};
  std::mutex m_;

public:
  T &get() {
    T *p = ptr_.load(std::memory_order_acquire);
    if (!p) {
      std::lock_guard<std::mutex> g(m_);
      p = ptr_.load(std::memory_order_relaxed);
      if (!p) {
        p = new T();
        ptr_.store(p, std::memory_order_release);
      }
    }
    return *p;
  }
};

static Lazy<Config> cfg;
static std::atomic<long> total{0};

int main() {
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; i++)
    ts.emplace_back([] { total.fetch_add(cfg.get().level + cfg.get().seed, std::memory_order_relaxed); });
  for (auto &t : ts) t.join();
  std::printf("%ld\n", total.load());
  return 0;
}
