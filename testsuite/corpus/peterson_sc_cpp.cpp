// robust: yes
// race: no
// reason: Peterson's lock with seq_cst accesses (fenced model): the flags and turn are totally ordered, the critical sections exclude each other
// C++: Peterson's mutual exclusion with default (seq_cst) std::atomic operations around a plain counter.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic<bool> flag[2];
static std::atomic<int> turn{0};
static int counter;

static void lock(int me) {
  flag[me] = true;
  turn = 1 - me;
  while (flag[1 - me] && turn == 1 - me) {
  }
}

static void unlock(int me) { flag[me] = false; }

int main() {
  std::thread a([] { lock(0); counter++; unlock(0); });
  std::thread b([] { lock(1); counter++; unlock(1); });
  a.join();
  b.join();
  std::printf("%d\n", counter);
  return counter == 2 ? 0 : 1;
}
