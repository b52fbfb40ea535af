// robust: yes
// race: no
// reason: the table is filled inside std::call_once (its completion happens before every return from call_once) and the workers wait on a condition variable under a mutex for the go flag that main sets under the same mutex; every shared plain access is ordered by the once or the mutex; no atomics of the program's own
// std::call_once initialising a shared table, then a start gate built from std::condition_variable, three workers.
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

static std::once_flag once;
static int table[16];
static std::mutex m;
static std::condition_variable cv;
static bool go;
static long sums[3];

static void init_table() {
  for (int i = 0; i < 16; i++) table[i] = i * i;
}

static void worker(int id) {
  std::call_once(once, init_table);
  {
    std::unique_lock<std::mutex> lk(m);
    cv.wait(lk, [] { return go; });
  }
  long s = 0;
  for (int i = id; i < 16; i += 3) s += table[i];
  sums[id] = s;
}

int main() {
  std::vector<std::thread> ts;
  for (int i = 0; i < 3; i++) ts.emplace_back(worker, i);
  {
    std::lock_guard<std::mutex> g(m);
    go = true;
  }
  cv.notify_all();
  for (auto &t : ts) t.join();
  std::printf("%ld\n", sums[0] + sums[1] + sums[2]);
  return 0;
}
