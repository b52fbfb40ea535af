// robust: yes
// race: no
// reason: each worker's thread_local Tally has a destructor, run at thread exit, that adds the thread's count to a global std::atomic with fetch_add(release); main joins the threads (join synchronises with everything the thread did, its thread_local destructors included) and reads the global; the plain per-thread histogram slots are written before the destructor and read after join
// C++ thread_local objects whose destructors publish per-thread results at thread exit, started as lambdas.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

static std::atomic<long> grand_total{0};
static long histogram[4];

struct Tally {
  long count = 0;
  int id = -1;
  ~Tally() {
    if (id >= 0) histogram[id] = count;
    grand_total.fetch_add(count, std::memory_order_release);
  }
};

static thread_local Tally tally;

int main() {
  std::vector<std::thread> workers;
  for (int id = 0; id < 4; id++)
    workers.emplace_back([id] {
      tally.id = id;
      for (int i = 0; i <= id; i++) tally.count += i;
    });
  for (auto &w : workers) w.join();
  long sum = 0;
  for (long h : histogram) sum += h;
  std::printf("%ld %ld\n", grand_total.load(std::memory_order_acquire), sum);
  return 0;
}
