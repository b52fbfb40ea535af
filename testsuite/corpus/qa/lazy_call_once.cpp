// robust: yes
// race: no
// reason: std::call_once: the initialiser's writes happen before every return from call_once (libstdc++ uses pthread_once), so the plain config and the relaxed cache are read after it in hb; the relaxed fast-path flag is only set inside the once
// C++: lazy initialisation of a plain config with std::call_once plus a relaxed "ready" hint, three threads.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

struct Config {
  int a = 0;
  int b = 0;
};
static Config cfg;
static std::once_flag once;
static std::atomic<int> inits{0};

static const Config &config() {
  std::call_once(once, [] {
    cfg.a = 1;
    cfg.b = 2;
    inits.fetch_add(1, std::memory_order_relaxed);
  });
  return cfg;
}

int main() {
  int sums[3] = {0, 0, 0};
  std::thread t[3];
  for (int i = 0; i < 3; i++)
    t[i] = std::thread([&sums, i] {
      const Config &c = config();
      sums[i] = c.a + c.b;
    });
  for (auto &th : t) th.join();
  std::printf("%d %d %d %d\n", sums[0], sums[1], sums[2], inits.load());
  return sums[0] + sums[1] + sums[2] == 9 && inits.load() == 1 ? 0 : 1;
}
