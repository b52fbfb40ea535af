// robust: yes
// race: yes
// reason: two std::threads increment a plain int without a lock: the increments are unordered by happens-before (a race in every interleaving); no atomic location, so robust
// A plain counter incremented by two std::threads (the classic lost update).
#include <cstdio>
#include <thread>

static int counter;

static void work() {
  for (int i = 0; i < 100; i++) counter++;
}

int main() {
  std::thread a(work), b(work);
  a.join();
  b.join();
  std::printf("%d\n", counter);
}
