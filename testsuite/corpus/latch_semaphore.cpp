// options: -std=c++20
// robust: yes
// race: no
// reason: std::latch::count_down / wait and std::binary_semaphore release / acquire synchronise (C++20 [thread.latch], [thread.sema])
// C++20: workers fill slots then count down a latch; main waits; a binary semaphore hands a token.
#include <cstdio>
#include <latch>
#include <semaphore>
#include <thread>
#include <vector>

static int slots[3];
static int token;

int main() {
  std::latch done(3);
  std::binary_semaphore sem(0);
  std::vector<std::thread> ts;
  for (int i = 0; i < 3; i++)
    ts.emplace_back([i, &done] {
      slots[i] = i + 1;
      done.count_down();
    });
  std::thread giver([&sem] {
    token = 5;
    sem.release();
  });
  done.wait();
  sem.acquire();
  int s = slots[0] + slots[1] + slots[2] + token;
  for (auto &t : ts)
    t.join();
  giver.join();
  std::printf("%d\n", s);
  return s == 11 ? 0 : 1;
}
