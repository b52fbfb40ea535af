// robust: yes
// race: no
// reason: default std::atomic operations are seq_cst; with sc_accesses=fenced each is F_sc;access;F_sc, and SB with SC fences is robust
// C++ store buffering written with operator= and implicit loads (seq_cst by default): must not be reported.
#include <atomic>
#include <cstdio>
#include <thread>

std::atomic<int> x{0}, y{0};
int r1, r2;

int main() {
  std::thread a([] {
    x = 1;
    r1 = y;
  });
  std::thread b([] {
    y = 1;
    r2 = x;
  });
  a.join();
  b.join();
  std::printf("r1=%d r2=%d\n", r1, r2);
  return 0;
}
