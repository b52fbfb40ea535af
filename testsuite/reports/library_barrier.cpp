// std::barrier (libstdc++'s tree barrier, compiled into the program from <barrier>) between
// phases of plain writes, and, with -DUSER_SB, store buffering through the program's own
// std::atomic members called from a std::function (frames: atomic_base.h, the lambda, then
// std_function.h): the barrier's own accesses are "library", the program's stay "value".
#include <atomic>
#include <barrier>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

constexpr int T = 4;
static int partial[T];
static int total;
static std::atomic<int> x, y;
static int r0, r1;

int main() {
  auto reduce = []() noexcept {
    for (int i = 0; i < T; i++) total += partial[i];
  };
  std::barrier sync(T, reduce);
  std::vector<std::thread> ts;
  for (int id = 0; id < T; id++)
    ts.emplace_back([&sync, id] {
      for (int phase = 1; phase <= 3; phase++) {
        partial[id] = id * phase;
        sync.arrive_and_wait();
      }
#ifdef USER_SB
      std::function<void()> f;
      if (id == 0) f = [] { x.store(1, std::memory_order_relaxed); r0 = y.load(std::memory_order_relaxed); };
      if (id == 1) f = [] { y.store(1, std::memory_order_relaxed); r1 = x.load(std::memory_order_relaxed); };
      if (f) f();
#endif
    });
  for (auto &t : ts) t.join();
  std::printf("%d %d %d\n", total, r0, r1);
}
