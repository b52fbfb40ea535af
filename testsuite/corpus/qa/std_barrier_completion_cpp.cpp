// robust: yes
// race: no
// options: -std=c++20
// reason: std::barrier's arrive_and_wait orders every participant's writes of a phase before the completion function and the completion before every participant's next phase (libstdc++'s tree barrier, compiled from <barrier> into the program: its own atomics order the phases, and their stale reads are the library's, consequence library, docs/reports.md §2); the plain partial sums are written in one phase and read by the completion; no atomic of the program's own
// std::barrier with a completion function that reduces per-thread partial sums, three phases, four threads.
#include <barrier>
#include <cstdio>
#include <thread>
#include <vector>

constexpr int T = 4;
static int partial[T];
static int total;

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
    });
  for (auto &t : ts) t.join();
  std::printf("%d\n", total);
}
