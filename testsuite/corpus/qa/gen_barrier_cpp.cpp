// robust: yes
// race: no
// reason: a centralised barrier with a generation counter: each arrival reads gen (acquire: it is the newest, written by the last arrival of the previous phase, which this thread waited for or wrote), counts in with an acq_rel fetch_add (RMWs read the newest value), and the last one resets count (relaxed, hb-before the next phase's fetch_adds through gen's release store) and publishes gen; the others spin on gen with acquire loads until it changes; every value read is the newest its reader can be ordered after in SC; the phase data is plain and hb-ordered through count's release sequence and gen
// Centralised generation barrier (std::atomic) over three phases of plain array updates by four threads.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

constexpr int T = 4;
static std::atomic<int> count{0};
static std::atomic<unsigned> gen{0};
static int data[T];

static void arrive_and_wait() {
  unsigned g = gen.load(std::memory_order_acquire);
  if (count.fetch_add(1, std::memory_order_acq_rel) == T - 1) {
    count.store(0, std::memory_order_relaxed);
    gen.store(g + 1, std::memory_order_release);
  } else {
    while (gen.load(std::memory_order_acquire) == g) {
    }
  }
}

static void work(int id) {
  for (int phase = 0; phase < 3; phase++) {
    data[id] += phase + 1;
    arrive_and_wait();
    int s = 0;
    for (int i = 0; i < T; i++) s += data[i];
    arrive_and_wait();
    if (id == 0) data[0] = s;
    arrive_and_wait();
  }
}

int main() {
  std::vector<std::thread> ts;
  for (int i = 0; i < T; i++) ts.emplace_back(work, i);
  for (auto &t : ts) t.join();
  std::printf("%d\n", data[0]);
}
