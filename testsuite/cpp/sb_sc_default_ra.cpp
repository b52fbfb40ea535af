// robust: no
// race: no
// options: --sc-accesses ra
// functions: operator()
// reason: with --sc-accesses ra seq_cst accesses count as release/acquire (RSAN's model; RC20 has no SC accesses), and release/acquire SB is not robust
// C++ store buffering with default seq_cst operators, checked as release/acquire: the load is flagged.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <atomic>
#include <cstdio>
#include <thread>

std::atomic<int> x{0}, y{0};
int r1, r2;

int main() {
  std::thread a([] {
    x = 1;
    r1 = y; // pyrsan: violation
  });
  std::thread b([] {
    y = 1;
    r2 = x; // pyrsan: violation
  });
  a.join();
  b.join();
  std::printf("r1=%d r2=%d\n", r1, r2);
  return 0;
}
